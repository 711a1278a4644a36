//! The detector and the gate on synthetic signals: exact start and end frames, a burst
//! shorter than the onset, a noise that steps up for good, and framing across calls.

use reel_protocol::SessionCommand;

use super::{ActivityGate, VadConfig, VadTransition, VoiceActivityDetector};

/// A 20 ms frame: a 500 Hz tone of `amplitude` plus uniform noise of `noise` peak, from a
/// small deterministic generator seeded with `seed`.
fn frame(amplitude: f64, noise: f64, seed: &mut u64) -> Vec<i16> {
    (0..320)
        .map(|i| {
            *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let uniform = ((*seed >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0;
            let tone =
                amplitude * (f64::from(i) * 2.0 * std::f64::consts::PI * 500.0 / 16_000.0).sin();
            (tone + noise * uniform) as i16
        })
        .collect()
}

/// Runs `plan` (frames of tone amplitude) over a noise of 300 peak; the transitions with
/// their frame index.
fn transitions(plan: &[(usize, f64)]) -> Vec<(usize, VadTransition)> {
    let mut vad = VoiceActivityDetector::new(VadConfig::default()).unwrap();
    let mut seed = 7;
    let mut index = 0;
    let mut out = Vec::new();
    for (frames, amplitude) in plan {
        for _ in 0..*frames {
            if let Some(t) = vad
                .process_frame(&frame(*amplitude, 300.0, &mut seed))
                .transition
            {
                out.push((index, t));
            }
            index += 1;
        }
    }
    out
}

#[test]
fn speech_starts_after_the_onset_and_ends_after_the_hangover() {
    // 1 s of noise, 500 ms of tone, 1 s of noise: start on the tone's third frame (60 ms
    // onset), end 30 frames (600 ms hangover) after the last frame that read as speech.
    // That is the first frame after the tone: the band filter's ring-down after a tone
    // 26 dB over the noise still lifts its 20 ms well over the floor.
    assert_eq!(
        transitions(&[(50, 0.0), (25, 6_000.0), (50, 0.0)]),
        [(52, VadTransition::Start), (105, VadTransition::End)]
    );
}

#[test]
fn a_click_shorter_than_the_onset_does_not_start_activity() {
    // One frame, and the ring-down in the next: two speech frames, one short of the onset.
    assert_eq!(transitions(&[(50, 0.0), (1, 6_000.0), (50, 0.0)]), []);
    // Two frames and the ring-down make three: a 40 ms burst this loud does start it.
    assert_eq!(
        transitions(&[(50, 0.0), (2, 6_000.0), (50, 0.0)]),
        [(52, VadTransition::Start), (82, VadTransition::End)]
    );
}

#[test]
fn a_pause_shorter_than_the_hangover_does_not_end_it() {
    assert_eq!(
        transitions(&[
            (50, 0.0),
            (10, 6_000.0),
            (25, 0.0),
            (10, 6_000.0),
            (50, 0.0)
        ]),
        [(52, VadTransition::Start), (125, VadTransition::End)]
    );
}

#[test]
fn a_noise_that_steps_up_for_good_is_absorbed_by_the_floor() {
    let mut vad = VoiceActivityDetector::new(VadConfig::default()).unwrap();
    let mut seed = 11;
    for _ in 0..50 {
        vad.process_frame(&frame(0.0, 100.0, &mut seed));
    }
    // The noise rises by about 10 dB and stays: it reads as speech at first, and the floor
    // creeps up to it until activity ends.
    let mut ended_at = None;
    for index in 0..2_000 {
        let verdict = vad.process_frame(&frame(0.0, 330.0, &mut seed));
        if verdict.transition == Some(VadTransition::End) {
            ended_at = Some(index);
            break;
        }
    }
    let ended_at = ended_at.expect("the step is absorbed");
    assert!(!vad.is_speaking());
    // About 10 dB at 1 dB/s, less the 6 dB threshold, plus the hangover: 4–15 s.
    assert!((200..750).contains(&ended_at), "{ended_at}");
}

#[test]
fn the_gate_frames_audio_the_same_whatever_the_chunk_sizes() {
    let mut seed = 3;
    let mut pcm = Vec::new();
    for amplitude in [0.0; 20].into_iter().chain([6_000.0; 20]).chain([0.0; 40]) {
        pcm.extend(
            frame(amplitude, 300.0, &mut seed)
                .iter()
                .flat_map(|s| s.to_le_bytes()),
        );
    }
    let flatten = |commands: Vec<SessionCommand>| {
        let mut out: Vec<SessionCommand> = Vec::new();
        let mut audio = Vec::new();
        for command in commands {
            match command {
                SessionCommand::SendAudio(pcm) => audio.extend_from_slice(&pcm),
                other => {
                    if !audio.is_empty() {
                        out.push(SessionCommand::SendAudio(std::mem::take(&mut audio).into()));
                    }
                    out.push(other);
                }
            }
        }
        out
    };
    let mut whole = ActivityGate::new(VadConfig::default()).unwrap();
    let at_once = flatten(whole.feed(&pcm));
    let mut odd = ActivityGate::new(VadConfig::default()).unwrap();
    let in_pieces = flatten(pcm.chunks(333).flat_map(|c| odd.feed(c)).collect());
    assert_eq!(at_once, in_pieces);
    // Start, 15 frames of pre-roll and the onset frames onwards to the end, End.
    assert_eq!(at_once.len(), 3);
    assert_eq!(at_once[0], SessionCommand::ActivityStart);
    assert_eq!(at_once[2], SessionCommand::ActivityEnd);
    let SessionCommand::SendAudio(sent) = &at_once[1] else {
        panic!("{:?}", at_once[1]);
    };
    // From 15 frames (the pre-roll) before the start on frame 22 to the end on frame 70
    // (the tone's last frame is 39, its ring-down 40, then a 30-frame hangover).
    assert_eq!(sent.len(), (70 - 7 + 1) * 640);
    assert_eq!(&sent[..], &pcm[7 * 640..71 * 640]);
}
