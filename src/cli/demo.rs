//! `reel demo`: the main job on an embedded default. The weather assistant — the full
//! actor tree, a real `get_weather` tool, state writes, phase changes — talks over loopback
//! to the tape server playing the bundled tape (or, with `--live`, to the real API), records
//! its wire log and journal into `./recordings/`, then replays them offline and reports.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use reel::demo::run::{Recording, record_against_bundled_tape, record_session, replay_recording};
use reel_protocol::ApiEndpoint;

use super::replay_report::{RecordedJournal, ReplayReport};
use super::{CliError, print_stdout, print_text};

/// What ran in the demo's replay, said honestly.
const MODE: [&str; 2] = [
    "offline — the real session tree with the assistant's own tools and phases and a",
    "fresh state; the model's answers come from the recording; no network",
];

/// Arguments of `reel demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Run the session against the real Gemini Live API (needs GEMINI_API_KEY, or Vertex AI
    /// settings) instead of the bundled tape.
    #[arg(long)]
    live: bool,
    /// Where the recordings go (a directory; `--out` is the older spelling).
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        value_name = "DIR",
        default_value = "recordings"
    )]
    out: PathBuf,
    /// Play the bundled tape this many times faster than it was recorded (0 for no
    /// pauses at all).
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the demo; exit 0 when the replay is clean, 1 when it drifted.
pub fn run(args: DemoArgs) -> Result<ExitCode, CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let stem = format!("weather-{}", reel_actors::clock::wall_clock_ms());
    let (recording, outcome) = runtime.block_on(async {
        let recording: Recording = if args.live {
            let endpoint = ApiEndpoint::from_env().map_err(|e| CliError::Demo(e.to_string()))?;
            record_session(endpoint, &args.out, &stem).await
        } else {
            let speed = (args.speed > 0.0).then_some(args.speed);
            record_against_bundled_tape(&args.out, &stem, speed).await
        }
        .map_err(|e| CliError::Demo(e.to_string()))?;
        let outcome = replay_recording(&recording)
            .await
            .map_err(|e| CliError::Demo(e.to_string()))?;
        Ok::<_, CliError>((recording, outcome))
    })?;
    drop(runtime);

    let wire = recording.wire.display().to_string();
    let journal = recording.journal.display().to_string();
    let recorded = RecordedJournal {
        path: &journal,
        finals: outcome.recorded_journal.clone(),
        matched: outcome.journal_match.clone(),
    };
    let report =
        ReplayReport::new(&wire, &outcome.stats, &outcome.replay, Some(recorded)).with_mode(MODE);
    // The report's verdict is the outcome's: one definition of CLEAN.
    let clean = report.verdict().is_clean();
    if args.json {
        let mut json = report.to_json()?;
        json["journal_identical"] = outcome.journal_match.is_identical().into();
        json["clean"] = clean.into();
        print_stdout(&format!("{json:#}\n"))?;
    } else {
        let source = if args.live {
            "the Gemini Live API"
        } else {
            "the tape server playing the bundled weather tape, on loopback"
        };
        let text = format!(
            "  reel demo — a weather assistant, recorded and replayed\n\n  \
             Session:   the assistant talked to {source}\n  \
             Recorded:  {wire}\n             {journal}\n\n{report}"
        );
        print_text(&text)?;
    }
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
