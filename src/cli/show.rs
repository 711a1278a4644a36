//! `reel show`: a wire log as a readable timeline, one line per frame.
//!
//! ```text
//!     1  →  +0.000s  setup                    model models/gemini-live-2.5-flash, tools: get_weather
//!     2  ←  +0.040s  setupComplete
//!     5  ←  +0.490s  serverContent.audio      audio ×42 (1.2s)
//!     9  ←  +1.100s  toolCall                 get_weather({"city":"Paris"})
//!    14  ←  +2.000s  close                    code 1000 "client disconnect", closed by the client
//! ```
//!
//! Columns: sequence number (the first of an audio run), direction (`→` the client sent,
//! `←` the server sent or the connection ended), time since the first entry, the frame's
//! kind, what it says. The timeline itself is [`reel_replayer::timeline`].

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use reel_recorder::wire_log::Direction;
use reel_replayer::timeline::{Timeline, TimelineFilter, TimelineRow};

use super::CliError;
use super::input::WireInput;
use super::progress::Progress;

/// Arguments of `reel show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The wire log.
    log: String,
    /// Only the frames of model turn N (1-based; a turn ends with its turnComplete).
    #[arg(long, value_name = "N")]
    turn: Option<u64>,
    /// Only the frames whose kind starts with K (`toolCall`, `serverContent`, `close`, …).
    #[arg(long, value_name = "K")]
    kind: Option<String>,
    /// Print JSON lines (one object per line) instead of text.
    #[arg(long)]
    json: bool,
    /// A damaged log (a NUL-filled tail after a power loss, a corrupt line): read the
    /// entries before its first bad line instead of failing.
    #[arg(long)]
    salvage: bool,
    /// Write the studio's timeline of the call, with its audio, as one self-contained HTML
    /// file (no server, no network) instead of printing.
    #[arg(long, value_name = "OUT.html", conflicts_with_all = ["turn", "kind", "json", "salvage"])]
    html: Option<String>,
}

/// Prints the timeline, streaming: memory holds one frame at a time.
pub fn run(args: ShowArgs) -> Result<ExitCode, CliError> {
    if let Some(out) = &args.html {
        return html(&args.log, out);
    }
    let progress = Progress::start("reading");
    let mut timeline = Timeline::new(TimelineFilter {
        turn: args.turn,
        kind: args.kind.clone(),
    });
    let mut rows = Vec::new();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for entry in WireInput::open(&args.log)?
        .salvaging(args.salvage)
        .counting(progress.counter())
    {
        timeline.push(&entry?, &mut rows);
        for row in rows.drain(..) {
            print_row(&mut out, &row, args.json)?;
        }
    }
    if let Some(row) = timeline.finish() {
        print_row(&mut out, &row, args.json)?;
    }
    progress.finish();
    out.flush().map_err(CliError::Output)?;
    Ok(ExitCode::SUCCESS)
}

fn print_row(out: &mut impl Write, row: &TimelineRow, json: bool) -> Result<(), CliError> {
    if json {
        let line = serde_json::to_string(row)?;
        return writeln!(out, "{line}").map_err(CliError::Output);
    }
    // One row, one line: a line break in recorded text is shown as an escape too.
    let line = text_row(row).replace('\n', "\\n");
    writeln!(out, "{}", super::terminal::visible(&line)).map_err(CliError::Output)
}

/// One row as text.
pub fn text_row(row: &TimelineRow) -> String {
    let arrow = match row.dir {
        Direction::Out => "→",
        Direction::In => "←",
    };
    let line = format!(
        "{:>5}  {arrow}  +{}.{:03}s  {:<33} {}",
        row.seq,
        row.offset_ms / 1000,
        row.offset_ms % 1000,
        row.kind,
        row.summary
    );
    line.trim_end().to_owned()
}

/// `--html OUT`: the call as one self-contained page.
fn html(log: &str, out: &str) -> Result<ExitCode, CliError> {
    let path = std::path::Path::new(log);
    let name = path
        .file_name()
        .map_or_else(|| log.to_owned(), |n| n.to_string_lossy().into_owned());
    match reel::studio::offline::write_page(path, &name, std::path::Path::new(out)) {
        Ok(summary) => {
            eprintln!(
                "reel show: {out}: {} entries{}",
                summary.entries,
                if summary.audio {
                    ", with the audio"
                } else {
                    ""
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("reel show: {log}: {error}");
            Ok(ExitCode::from(2))
        }
    }
}
