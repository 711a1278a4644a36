//! The client-side voice activity detector on real (synthesized) speech: six utterances by
//! espeak-ng, placed between stretches of silence, mixed by sox with white and pink noise
//! at 20, 10 and 5 dB SNR. The ground truth is where each utterance was placed plus its own
//! energy edges on the clean track. Every utterance must start activity exactly once, no
//! start may fire in a noise-only stretch, each end must fall between its utterance's end
//! and the next one's start, and the onset latency must stay under [`LATENCY_BOUND_MS`].
//!
//! It prints the latency (mean, p95, max) and frame accuracy per condition; the table in
//! `docs/BENCHMARKS.md` ("Client VAD on synthesized speech") comes from:
//!
//! ```text
//! cargo test -p reel-actors --test it client_vad_speech:: -- --nocapture
//! ```

use crate::speech;

use reel_actors::audio::{VadConfig, VadTransition, VoiceActivityDetector};
use speech::{RATE, energy_edges, mix, noise, rms, synthesize, work_dir, write_raw};

/// Voice, words per minute, text.
const UTTERANCES: [(&str, u32, &str); 6] = [
    (
        "en-us",
        165,
        "Hello, I would like to book a table for two tonight.",
    ),
    (
        "en+f3",
        150,
        "What will the weather be like in London tomorrow?",
    ),
    ("en-gb", 175, "Yes."),
    (
        "en-us+m3",
        140,
        "Could you repeat that a little more slowly, please?",
    ),
    ("en+f2", 170, "Cancel my order."),
    ("en-gb-x-rp", 160, "Thank you very much, goodbye."),
];

/// Silence before each utterance (the first is the lead-in), and after the last.
const GAPS_MS: [usize; 6] = [2_000, 1_600, 2_200, 1_300, 2_600, 1_800];
const TAIL_MS: usize = 2_000;

/// The onset latency bound. The detector needs `onset_ms` (60) of speech frames in a row,
/// and the 20 ms framing may start up to a frame late: 80 ms on a hard onset. The truth's
/// onset is the first 10 ms within 40 dB of the utterance's peak, so it includes a weak
/// initial consonant (the /h/ of "hello", the /θ/ of "thank"), 20–30 dB below the vowel,
/// which no energy detector hears under noise: up to 150 ms more at 5 dB SNR. 80 + 150
/// rounded up is 250 ms, and it must stay below the 300 ms pre-roll, so the audio sent
/// after `activityStart` still holds the word's beginning (checked: all speech is sent).
const LATENCY_BOUND_MS: f64 = 250.0;

/// Conditions: the noise (`None`: none at all) and its SNR in dB.
const CONDITIONS: [(Option<&str>, f64); 7] = [
    (None, f64::INFINITY),
    (Some("whitenoise"), 20.0),
    (Some("whitenoise"), 10.0),
    (Some("whitenoise"), 5.0),
    (Some("pinknoise"), 20.0),
    (Some("pinknoise"), 10.0),
    (Some("pinknoise"), 5.0),
];

struct Outcome {
    name: String,
    /// What broke the rules, if anything.
    problems: Vec<String>,
    false_starts: usize,
    latencies_ms: Vec<f64>,
    frame_accuracy: f64,
    speech_sent: f64,
}

#[test]
fn the_detector_finds_each_synthesized_utterance_once_in_noise_down_to_5_db() {
    if let Err(why) = speech::ensure_tools() {
        crate::system_packages::skip("client_vad_speech", &why);
        return;
    }
    let dir = work_dir();
    let config = VadConfig::default();

    // The clean track: the utterances placed after their gaps, and the truth of where
    // speech is (sample indexes).
    let mut clean: Vec<i16> = Vec::new();
    let mut truth: Vec<(usize, usize)> = Vec::new();
    for (index, ((voice, wpm, text), gap)) in UTTERANCES.iter().zip(GAPS_MS).enumerate() {
        let spoken = synthesize(&dir, &format!("utterance-{index}"), voice, *wpm, text);
        let (on, off) = energy_edges(&spoken);
        clean.extend(std::iter::repeat_n(0, gap * RATE / 1000));
        truth.push((clean.len() + on, clean.len() + off));
        clean.extend(spoken);
    }
    clean.extend(std::iter::repeat_n(0, TAIL_MS * RATE / 1000));
    let clean_path = dir.join("clean.raw");
    write_raw(&clean_path, &clean);
    let speech_level = rms(&truth
        .iter()
        .flat_map(|(on, off)| clean[*on..*off].iter().copied())
        .collect::<Vec<_>>());
    let seconds = clean.len() as f64 / RATE as f64;

    let mut outcomes = Vec::new();
    for (kind, snr_db) in CONDITIONS {
        let (name, track) = match kind {
            None => ("clean".to_owned(), clean.clone()),
            Some(kind) => {
                let noise_path = noise(&dir, kind, seconds);
                let noise_level = rms(&speech::read_raw(&noise_path));
                let gain = speech_level / 10f64.powf(snr_db / 20.0) / noise_level;
                let name = format!("{}-{snr_db:.0}dB", kind.trim_end_matches("noise"));
                let track = mix(
                    &dir,
                    &format!("mixed-{name}"),
                    &clean_path,
                    &noise_path,
                    gain,
                );
                (name, track)
            }
        };
        outcomes.push(judge(&name, &track, &truth, config));
    }

    println!(
        "\n| condition | utterances detected | false starts | onset latency mean / p95 / max (ms) | frame accuracy | speech frames sent |"
    );
    println!("|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for outcome in &outcomes {
        if outcome.speech_sent < 1.0 {
            failures.push(format!("{}: some speech was not sent", outcome.name));
        }
        let mut sorted = outcome.latencies_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let mean = sorted.iter().sum::<f64>() / sorted.len().max(1) as f64;
        let p95 = sorted
            .get(((sorted.len().max(1) - 1) as f64 * 0.95).round() as usize)
            .copied()
            .unwrap_or(f64::NAN);
        let max = sorted.last().copied().unwrap_or(f64::NAN);
        println!(
            "| {} | {}/{} | {} | {mean:.0} / {p95:.0} / {max:.0} | {:.1}% | {:.1}% |",
            outcome.name,
            outcome.latencies_ms.len(),
            UTTERANCES.len(),
            outcome.false_starts,
            outcome.frame_accuracy * 100.0,
            outcome.speech_sent * 100.0,
        );
        if max > LATENCY_BOUND_MS {
            failures.push(format!("{}: onset latency up to {max} ms", outcome.name));
        }
        failures.extend(
            outcome
                .problems
                .iter()
                .map(|p| format!("{}: {p}", outcome.name)),
        );
    }
    println!();
    for outcome in &outcomes {
        println!(
            "{}: onset latency per utterance (ms) {:?}",
            outcome.name, outcome.latencies_ms
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Runs the detector over `track` and checks it against `truth`.
fn judge(name: &str, track: &[i16], truth: &[(usize, usize)], config: VadConfig) -> Outcome {
    let mut vad = VoiceActivityDetector::new(config).unwrap();
    let frame = config.frame_samples();
    let mut starts = Vec::new();
    let mut ends = Vec::new();
    let (mut agree, mut frames) = (0usize, 0usize);
    for (index, samples) in track.chunks_exact(frame).enumerate() {
        let verdict = vad.process_frame(samples);
        // Decided at the end of the frame.
        let at = (index + 1) * frame;
        match verdict.transition {
            Some(VadTransition::Start) => starts.push(at),
            Some(VadTransition::End) => ends.push(at),
            None => {}
        }
        let centre = index * frame + frame / 2;
        let speech = truth.iter().any(|(on, off)| (*on..*off).contains(&centre));
        agree += usize::from(speech == vad.is_speaking());
        frames += 1;
    }
    let ms = |samples: usize| samples as f64 * 1000.0 / RATE as f64;

    // Each start lies within an utterance (none in the noise between them), and each
    // utterance has exactly one.
    let mut problems = Vec::new();
    let mut latencies_ms = Vec::new();
    for (index, (on, off)) in truth.iter().enumerate() {
        let inside: Vec<usize> = starts
            .iter()
            .copied()
            .filter(|at| (*on..=*off).contains(at))
            .collect();
        if inside.len() != 1 {
            problems.push(format!(
                "utterance {index} ({:.0}–{:.0} ms) started {} times",
                ms(*on),
                ms(*off),
                inside.len()
            ));
        }
        if let Some(first) = inside.first() {
            latencies_ms.push(ms(first - on));
        }
    }
    let false_starts = starts
        .iter()
        .filter(|at| !truth.iter().any(|(on, off)| (*on..=*off).contains(*at)))
        .count();
    if false_starts > 0 {
        problems.push(format!("{false_starts} starts in noise-only stretches"));
    }
    // Each end comes after its utterance and before the next one begins.
    if ends.len() != truth.len() {
        problems.push(format!(
            "{} ends for {} utterances",
            ends.len(),
            truth.len()
        ));
    }
    for (index, end) in ends.iter().enumerate().take(truth.len()) {
        let next = truth.get(index + 1).map_or(track.len(), |(on, _)| *on);
        if !(truth[index].1..=next).contains(end) {
            problems.push(format!(
                "utterance {index} ended at {:.0} ms, its speech ends at {:.0} ms",
                ms(*end),
                ms(truth[index].1)
            ));
        }
    }
    if !problems.is_empty() {
        problems.push(format!(
            "starts at {:?} ms, ends at {:?} ms",
            starts.iter().map(|s| ms(*s)).collect::<Vec<_>>(),
            ends.iter().map(|s| ms(*s)).collect::<Vec<_>>()
        ));
    }
    // What the gate would send: from a pre-roll before each start to its end.
    let pre_roll = config.pre_roll_ms as usize * RATE / 1000;
    let sent = |sample: usize| {
        starts
            .iter()
            .zip(&ends)
            .any(|(start, end)| (start.saturating_sub(pre_roll)..*end).contains(&sample))
    };
    let speech_samples: usize = truth.iter().map(|(on, off)| off - on).sum();
    let sent_samples: usize = truth
        .iter()
        .map(|(on, off)| (*on..*off).filter(|s| sent(*s)).count())
        .sum();
    Outcome {
        name: name.to_owned(),
        problems,
        false_starts,
        latencies_ms,
        frame_accuracy: agree as f64 / frames as f64,
        speech_sent: sent_samples as f64 / speech_samples as f64,
    }
}
