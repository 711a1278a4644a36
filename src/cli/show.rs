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
use super::input::{STDIN, WireInput, is_regular_file, open_text};
use super::progress::Progress;

/// Arguments of `reel show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Where `s3://` paths are read from.
    #[command(flatten)]
    s3: super::S3Args,
    /// The wire log (`-`: standard input).
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
    /// file (no server, no network) instead of printing (`--html` is the older spelling).
    #[arg(
        short = 'o',
        long = "output",
        alias = "html",
        value_name = "OUT.html",
        conflicts_with_all = ["turn", "kind", "json", "salvage"]
    )]
    html: Option<String>,
}

/// Prints the timeline, streaming: memory holds one frame at a time (and the kinds seen, a
/// short list). A `--turn` the log does not have, or a `--kind` no frame (of that turn) has,
/// is bad input that lists what the log holds.
pub fn run(args: ShowArgs) -> Result<ExitCode, CliError> {
    args.s3.apply();
    if args.html.is_none() && super::llm_tape_file::is_tape(&args.log) {
        return super::llm_tape_file::show(&args.log, args.json);
    }
    if let Some(out) = &args.html {
        return html(&args.log, out);
    }
    let progress = Progress::start("reading");
    // The kind filter is applied here, not by the timeline, so that the kinds the frames
    // (of the turn asked for) do have are known when none matches.
    let mut timeline = Timeline::new(TimelineFilter {
        turn: args.turn,
        kind: None,
    });
    let mut kinds: Vec<String> = Vec::new();
    let mut shown = 0usize;
    let mut rows = Vec::new();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut emit = |row: &TimelineRow, out: &mut std::io::BufWriter<_>| {
        if !kinds.contains(&row.kind) {
            kinds.push(row.kind.clone());
        }
        if args.kind.as_deref().is_none_or(|k| row.kind.starts_with(k)) {
            shown += 1;
            print_row(out, row, args.json)?;
        }
        Ok::<(), CliError>(())
    };
    for entry in WireInput::open(&args.log)?
        .salvaging(args.salvage)
        .counting(progress.counter())
    {
        timeline.push(&entry?, &mut rows);
        for row in rows.drain(..) {
            emit(&row, &mut out)?;
        }
    }
    if let Some(row) = timeline.finish() {
        emit(&row, &mut out)?;
    }
    progress.finish();
    out.flush().map_err(CliError::Output)?;
    if let Some(turn) = args.turn
        && !(1..=timeline.last_turn()).contains(&turn)
    {
        return Err(CliError::NoSuchTurn {
            log: args.log.clone(),
            turn,
            turns: timeline.completed_turns(),
            last: timeline.last_turn(),
        });
    }
    if let Some(kind) = args.kind
        && shown == 0
    {
        return Err(CliError::NoSuchKind {
            log: args.log.clone(),
            kind,
            turn: args.turn,
            kinds: kinds.join(", "),
        });
    }
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

/// `--html OUT`: the call as one self-contained page. The page is made in several passes
/// over the log; an input that cannot be read twice (standard input, a pipe) is first
/// copied, once, into a scratch file.
fn html(log: &str, out: &str) -> Result<ExitCode, CliError> {
    let name = if log == STDIN {
        "stdin".to_owned()
    } else {
        std::path::Path::new(log)
            .file_name()
            .map_or_else(|| log.to_owned(), |n| n.to_string_lossy().into_owned())
    };
    let spooled = if is_regular_file(log) {
        None
    } else {
        Some(Spooled::copy(log)?)
    };
    let path = spooled
        .as_ref()
        .map_or_else(|| std::path::Path::new(log), |spooled| spooled.0.as_path());
    match reel::studio::offline::write_page(path, &name, std::path::Path::new(out)) {
        Ok(summary) => {
            eprintln!(
                "reel show: {out}: {}{}",
                super::plural(summary.entries, "entry", "entries"),
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

/// An input that cannot be read twice, copied into a scratch file (removed when dropped).
struct Spooled(std::path::PathBuf);

impl Spooled {
    /// Copies the input `log` (standard input for [`STDIN`]) into a scratch file.
    fn copy(log: &str) -> Result<Spooled, CliError> {
        let path =
            std::env::temp_dir().join(format!("reel-show-input-{}.wire.jsonl", std::process::id()));
        let spooled = Spooled(path);
        let write_error = |error: std::io::Error| {
            CliError::Output(std::io::Error::new(
                error.kind(),
                format!("{}: {error}", spooled.0.display()),
            ))
        };
        let mut file = std::fs::File::create(&spooled.0).map_err(write_error)?;
        let mut input = open_text(log, "wire log")?;
        std::io::copy(&mut input, &mut file).map_err(|source| CliError::Read {
            path: log.to_owned(),
            source,
        })?;
        file.sync_all().map_err(write_error)?;
        Ok(spooled)
    }
}

impl Drop for Spooled {
    fn drop(&mut self) {
        // A scratch file left behind in the temporary directory is harmless.
        let _ = std::fs::remove_file(&self.0);
    }
}
