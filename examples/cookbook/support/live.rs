//! What the live cookbook examples share: their bundled wire logs (`assets/cookbook/`),
//! a tape server on loopback playing them (the model of an offline run), the caller's
//! voice as real PCM, waiting for the model's turn, the replay verdict, and `main`.
//!
//! A live example's default run is offline and the same every time: the bundled tapes are
//! served on loopback by the tape server (the model's side of the call comes from them),
//! and each bundled tape is then replayed through the session tree with nothing listening
//! at all, CLEAN or the divergences. `--live` runs the same agent against the Gemini Live
//! API (the key from the environment); `--live --record PATH` records its wire log too.

use std::error::Error;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use reel::fluent::ReplayOutcome;
use reel::protocol::ApiEndpoint;
use reel::recorder::jsonl::JsonlReader;
use reel::recorder::{RecordError, WireEntry, WireLogReader};
use reel::tape_server::{Pace, RunningServer, TapeLibrary, TapeServer};

#[path = "tool_session.rs"]
pub mod tool_session;
#[path = "../../support/turns.rs"]
pub mod turns;

pub use super::cookbook::Target;

/// A bundled file of the cookbook (`assets/cookbook/{file}`).
pub fn bundled(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/cookbook")
        .join(file)
}

/// The wire log at `path`, read and checked as any wire log is.
pub fn read_tape(path: &Path) -> Result<Vec<WireEntry>, Box<dyn Error>> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read the tape {}: {error}", path.display()))?;
    let entries: Result<Vec<WireEntry>, RecordError> = WireLogReader::new(JsonlReader::new(
        text.as_bytes(),
        path.display().to_string(),
    ))
    .collect();
    Ok(entries?)
}

/// A tape server on loopback playing `tapes` (name and entries) at once, no pauses: each
/// connection is matched to the recorded one whose setup frame it sends.
pub async fn serve(tapes: Vec<(String, Vec<WireEntry>)>) -> Result<RunningServer, Box<dyn Error>> {
    let library = tapes
        .into_iter()
        .fold(TapeLibrary::new(), |library, (name, entries)| {
            library.with_entries(name, entries)
        });
    Ok(TapeServer::replay(library)
        .pace(Pace::AtOnce)
        .start()
        .await?)
}

/// Where to reach `server`: Google AI's protocol, no credential.
pub fn endpoint_of(server: &RunningServer) -> ApiEndpoint {
    ApiEndpoint::google_ai("")
        .without_credential()
        .with_base_url(&server.base_url())
}

/// The caller's voice for utterance `index`: `chunks` chunks of 40 ms of 16 kHz mono
/// PCM16LE, a triangle wave whose pitch depends on `index` (integer arithmetic only, so
/// the bytes are the same on every machine).
pub fn voice(index: usize, chunks: usize) -> Vec<Vec<u8>> {
    const SAMPLES: usize = 640; // 40 ms at 16 kHz
    let period = 40 + 8 * (index % 8);
    (0..chunks)
        .map(|chunk| {
            let mut pcm = Vec::with_capacity(SAMPLES * 2);
            for n in 0..SAMPLES {
                let at = (chunk * SAMPLES + n) % period;
                let half = period / 2;
                let ramp = if at < half { at } else { period - at };
                // From -6000 to +6000: a quiet tone.
                let sample = (ramp * 12_000 / half) as i32 - 6_000;
                pcm.extend_from_slice(&(sample as i16).to_le_bytes());
            }
            pcm
        })
        .collect()
}

/// How long `bytes` of 24 kHz mono PCM16LE (the model's voice) last, in milliseconds.
pub fn model_audio_ms(bytes: usize) -> usize {
    bytes * 1000 / (24_000 * 2)
}

/// A replay's verdict: `CLEAN (N frames sent, each the recorded one)`, or the `DRIFT` line
/// and every divergence, one a line.
pub fn verdict(outcome: &ReplayOutcome) -> String {
    if outcome.is_clean() {
        let frames = outcome.outbound_frames.len();
        let plural = if frames == 1 { "" } else { "s" };
        format!("CLEAN ({frames} frame{plural} sent, each the recorded one)")
    } else {
        let mut text = outcome.verdict().to_string();
        for divergence in &outcome.divergences {
            text.push_str(&format!("\n    {divergence}"));
        }
        text
    }
}

/// The `main` of the live cookbook example `name`: runs `run` on the target the arguments
/// name (nothing: offline; `--live`; `--live --record PATH`) and prints what it returns
/// ([`main_on_target`](super::cookbook::main_on_target); a failure's line names `name`).
pub fn main<F, Fut>(name: &str, run: F) -> ExitCode
where
    F: FnOnce(Target) -> Fut,
    Fut: Future<Output = Result<String, Box<dyn Error>>>,
{
    super::cookbook::main_on_target(|target| async move {
        run(target)
            .await
            .map_err(|error| format!("{name}: {error}").into())
    })
}

/// Where `--record PATH` records a second session (a call back): `PATH` with `.callback`
/// before `.wire.jsonl` (or at the end).
pub fn callback_path(path: &Path) -> PathBuf {
    let text = path.display().to_string();
    match text.strip_suffix(".wire.jsonl") {
        Some(stem) => PathBuf::from(format!("{stem}.callback.wire.jsonl")),
        None => PathBuf::from(format!("{text}.callback")),
    }
}

/// What the command line of a governed example (37–40) asks for: one of its offline runs,
/// as its own arguments name them (nothing, `--replay`, `--speed N`), or the Live API.
#[derive(Debug, Clone, PartialEq)]
pub enum Governed<T> {
    /// An offline run: the bundled tape on loopback, or the bundled recording replayed.
    Offline(T),
    /// `--live` (with `--record PATH`): the Gemini Live API, the key from the environment,
    /// the call's wire log recorded to `PATH` if given.
    Live {
        /// Where to record the call's wire log.
        record: Option<PathBuf>,
    },
}

/// The run `args` (the program's name left out) name: with `--live`, the Live API
/// (`--live`, `--live --record PATH`, as every cookbook example reads them:
/// [`parse_target`](super::cookbook::parse_target)); otherwise what `offline` makes of them.
/// `--replay` or `--speed` with `--live`, and `--record` without it, are errors.
pub fn governed_target<T>(
    args: impl IntoIterator<Item = String>,
    offline: impl FnOnce(Vec<String>) -> Result<T, String>,
) -> Result<Governed<T>, String> {
    let args: Vec<String> = args.into_iter().collect();
    let named = |name: &str| args.iter().any(|arg| arg == name);
    if !named("--live") {
        if named("--record") {
            return Err("--record records live calls: add --live".to_owned());
        }
        return offline(args).map(Governed::Offline);
    }
    if let Some(offline_only) = ["--replay", "--speed"].into_iter().find(|arg| named(arg)) {
        return Err(format!(
            "{offline_only} runs the bundled recording: it does not go with --live"
        ));
    }
    match super::cookbook::parse_target(args)? {
        Target::Live { record } => Ok(Governed::Live { record }),
        Target::Bundled => Err("--live names no offline run".to_owned()),
    }
}

/// Lines the callbacks of a call noted (phase hooks, watchers, a resume callback), in
/// order; they run on the control lane, so the order is the same live and in a replay.
#[derive(Debug, Clone, Default)]
pub struct Notes(Arc<Mutex<Vec<String>>>);

impl Notes {
    /// Adds `line` at the end.
    pub fn note(&self, line: String) {
        // A poisoned list only means a panicking thread held it; the lines are whole.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(line);
    }

    /// Everything noted so far.
    pub fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}
