//! Real speech for the client VAD test: Debian's `espeak-ng` and `sox`, installed by the
//! test itself when missing (`tests/support/system_packages.rs`; skipped where they cannot be),
//! synthesize utterances, resample them to 16 kHz mono PCM16, generate noise and mix it in.
//! Every file goes under `target/` (the test's `CARGO_TARGET_TMPDIR`).

#![allow(dead_code)] // the test uses what it needs

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Samples per second of everything here.
pub const RATE: usize = 16_000;

/// The folder the test writes into (created).
pub fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("client-audio");
    std::fs::create_dir_all(&dir).expect("the work folder can be made");
    dir
}

/// Installs `espeak-ng` and `sox` once, when either is missing; `Err` says why they
/// cannot be had here (the test is then skipped).
pub fn ensure_tools() -> Result<(), String> {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    READY
        .get_or_init(|| {
            let present = |tool: &str| {
                Command::new(tool)
                    .arg("--version")
                    .output()
                    .is_ok_and(|out| out.status.success())
            };
            crate::system_packages::ensure(&["espeak-ng", "sox"], || {
                present("espeak-ng") && present("sox")
            })
        })
        .clone()
}

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The raw-PCM arguments sox reads and writes here: 16 kHz, mono, signed 16-bit.
const RAW: [&str; 10] = [
    "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1",
];

/// `text` spoken by espeak-ng `voice` at `words_per_minute`, as 16 kHz mono samples.
pub fn synthesize(
    dir: &Path,
    name: &str,
    voice: &str,
    words_per_minute: u32,
    text: &str,
) -> Vec<i16> {
    let wav = dir.join(format!("{name}.wav"));
    let raw = dir.join(format!("{name}.raw"));
    let speed = words_per_minute.to_string();
    run(
        "espeak-ng",
        &["-v", voice, "-s", &speed, "-w", path(&wav), text],
    );
    // Resampled to 16 kHz mono 16-bit, and brought to a common level (peak at -3 dBFS).
    let mut args = vec!["-R", "-D", path(&wav)];
    args.extend(RAW);
    args.extend([path(&raw), "gain", "-n", "-3"]);
    run("sox", &args);
    read_raw(&raw)
}

/// `seconds` of sox's `kind` noise (`whitenoise`, `pinknoise`), repeatable (`-R`).
pub fn noise(dir: &Path, kind: &str, seconds: f64) -> PathBuf {
    let out = dir.join(format!("{kind}.raw"));
    let length = format!("{seconds:.3}");
    let mut args = vec!["-R", "-D", "-n"];
    args.extend(RAW);
    args.extend([path(&out), "synth", &length, kind, "vol", "0.25"]);
    run("sox", &args);
    out
}

/// `speech` and `noise` mixed by sox, the noise scaled by `noise_gain` (`-m` with `-v`
/// on each input, so sox does not halve them).
pub fn mix(dir: &Path, name: &str, speech: &Path, noise: &Path, noise_gain: f64) -> Vec<i16> {
    let out = dir.join(format!("{name}.raw"));
    let gain = format!("{noise_gain:.6}");
    let mut args = vec!["-R", "-D", "-m", "-v", "1"];
    args.extend(RAW);
    args.push(path(speech));
    args.extend(["-v", &gain]);
    args.extend(RAW);
    args.push(path(noise));
    args.extend(RAW);
    args.push(path(&out));
    run("sox", &args);
    read_raw(&out)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("the target folder's path is UTF-8")
}

/// Samples of a raw PCM16LE file.
pub fn read_raw(path: &Path) -> Vec<i16> {
    std::fs::read(path)
        .expect("sox wrote the file")
        .chunks_exact(2)
        .map(|s| i16::from_le_bytes([s[0], s[1]]))
        .collect()
}

/// Writes samples as a raw PCM16LE file.
pub fn write_raw(path: &Path, samples: &[i16]) {
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(path, bytes).expect("the target folder is writable");
}

/// Root mean square of `samples`.
pub fn rms(samples: &[i16]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let sum: f64 = samples.iter().map(|s| f64::from(*s).powi(2)).sum();
    (sum / samples.len() as f64).sqrt()
}

/// Where speech is in a clean utterance: the first and last 10 ms window whose level is
/// within 40 dB of the loudest window's (espeak-ng pads its output with silence). Sample
/// indexes, end exclusive.
pub fn energy_edges(samples: &[i16]) -> (usize, usize) {
    const WINDOW: usize = RATE / 100;
    let levels: Vec<f64> = samples.chunks(WINDOW).map(rms).collect();
    let loudest = levels.iter().copied().fold(0.0, f64::max);
    let floor = loudest / 100.0; // -40 dB
    let first = levels
        .iter()
        .position(|l| *l > floor)
        .expect("the utterance has sound");
    let last = levels
        .iter()
        .rposition(|l| *l > floor)
        .expect("the utterance has sound");
    (first * WINDOW, ((last + 1) * WINDOW).min(samples.len()))
}
