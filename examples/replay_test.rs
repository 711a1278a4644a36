//! Record once, replay in CI: the weather assistant's session, recorded, then replayed
//! offline with the real tools attached, asserting that nothing drifted.
//!
//! ```text
//! cargo run --example replay_test
//! ```
//!
//! Here the recording is made against the bundled tape, so the example runs anywhere; in
//! your project, record once against the real API (`assistant().record_wire(..).journal(..)
//! .connect_from_env()`), commit the two files, and keep a test like this one:
//!
//! ```ignore
//! #[tokio::test]
//! async fn the_weather_session_still_replays_clean() {
//!     // Finds tests/recordings/weather.journal.jsonl beside the wire log.
//!     let outcome = assistant()
//!         .replay("tests/recordings/weather.wire.jsonl")
//!         .await
//!         .unwrap()
//!         .finish()
//!         .await;
//!     assert!(outcome.is_clean(), "{}\n{:#?}", outcome.verdict(), outcome.divergences);
//! }
//! ```
//!
//! A change to a tool, a phase or an instruction that alters what the runtime sends shows
//! up as a divergence naming the frame and the JSON path; one that alters the state shows
//! up in the journal.

#[path = "support/weather_assistant.rs"]
mod weather_assistant;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use reel::recorder::journal::read_journal;
use reel::replayer::journal_diff::JournalDiff;
use reel::replayer::{Divergence, Verdict as Clean};
use weather_assistant::{USER_TURNS, assistant, endpoint_of, serve_bundled_tape, talk};

/// The files a recorded session left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    /// The wire log.
    pub wire: PathBuf,
    /// The state journal.
    pub journal: PathBuf,
}

/// What the replay showed.
#[derive(Debug)]
pub struct Verdict {
    /// Where the replayed runtime's frames parted from the recorded ones.
    pub divergences: Vec<Divergence>,
    /// Whether the replay wrote the recorded journal again, entry by entry.
    pub journal_identical: bool,
    /// The recorded journal's final values against the replay's final state.
    pub journal_diff: JournalDiff,
    /// How many state mutations the recording holds.
    pub mutations: usize,
    /// CLEAN or DRIFT, as `reel replay` and `reel demo` decide it.
    pub clean: Clean,
}

impl Verdict {
    /// No divergence, the journal written again entry by entry, no key drifted.
    pub fn is_clean(&self) -> bool {
        self.clean.is_clean()
    }
}

/// Records the assistant's session into `dir` — here against the bundled tape; in a real
/// project, once, against the API.
pub async fn record_once(dir: &Path) -> Result<Recording, Box<dyn Error>> {
    std::fs::create_dir_all(dir)?;
    let recording = Recording {
        wire: dir.join("weather.wire.jsonl"),
        journal: dir.join("weather.journal.jsonl"),
    };
    let mut server = serve_bundled_tape(None).await?;
    let [greeting, rest @ ..] = USER_TURNS;
    let builder = assistant()
        .record_wire(&recording.wire)
        .journal(&recording.journal)
        .greeting(greeting);
    let mut events = builder.subscribe();
    let handle = builder.connect(endpoint_of(&server)).await?;
    let talked = talk(&handle, &mut events, &rest).await;
    handle.disconnect().await;
    server.shutdown().await;
    talked?;
    Ok(recording)
}

/// Replays `recording` with the assistant's real tools and phases and a fresh state, and
/// compares what it sends and writes with what was recorded.
pub async fn replay(recording: &Recording) -> Result<Verdict, Box<dyn Error>> {
    let outcome = assistant().replay(&recording.wire).await?.finish().await;
    let recorded = read_journal(&recording.journal)?;
    // The replay found the journal beside the wire log; judged against the file read here.
    let outcome = outcome.with_recorded_journal(recorded.clone());
    Ok(Verdict {
        clean: outcome.verdict(),
        journal_identical: outcome.journal == recorded,
        journal_diff: outcome.journal_diff(&recorded),
        mutations: recorded.len(),
        divergences: outcome.divergences,
    })
}

/// Records into `dir`, then replays.
pub async fn run(dir: &Path) -> Result<Verdict, Box<dyn Error>> {
    let recording = record_once(dir).await?;
    replay(&recording).await
}

fn main() -> ExitCode {
    let dir = std::env::temp_dir().join(format!("reel-replay-test-{}", std::process::id()));
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let verdict = runtime.block_on(run(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    match verdict {
        Ok(verdict) if verdict.is_clean() => {
            println!(
                "\nCLEAN — the replay sent every runtime frame byte for byte and wrote the \
                 journal again ({} mutations).",
                verdict.mutations
            );
            ExitCode::SUCCESS
        }
        Ok(verdict) => {
            println!("\n{}", verdict.clean);
            for divergence in &verdict.divergences {
                println!("  {divergence}");
            }
            if !verdict.journal_identical {
                println!("  the journal was not written again entry by entry");
            }
            for key in &verdict.journal_diff.diverged {
                println!("  - {key}");
            }
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
