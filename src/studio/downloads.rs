//! What the studio's download buttons fetch besides the audio: a recording's agent trace
//! (`reel export --format trace`) and its self-contained page (`reel show LOG --html`),
//! made by the same code as those commands.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use reel_recorder::WireLogReader;
use reel_replayer::export::{ExportOptions, TraceExporter};

use super::offline;

/// The recording at `path` (file name `name`) as `reel export --format trace` writes it:
/// the agent trace as pretty JSON, named after the file.
pub fn trace_json(path: &Path, name: &str) -> Result<Vec<u8>, String> {
    let stem = name.strip_suffix(".wire.jsonl").unwrap_or(name);
    let mut exporter = TraceExporter::new(ExportOptions {
        trace_name: stem.to_owned(),
        agent_name: None,
    });
    for entry in WireLogReader::open(path).map_err(|error| error.to_string())? {
        exporter.push(&entry.map_err(|error| error.to_string())?);
    }
    let exported = exporter.finish().map_err(|error| error.to_string())?;
    Ok(exported.trace.to_json_pretty().into_bytes())
}

/// Temporary pages made at once by one process are told apart by this count.
static PAGES: AtomicU64 = AtomicU64::new(0);

/// The recording at `path` (file name `name`) as `reel show LOG --html` writes it. The page
/// is written by the same writer, into a temporary file that is read back and removed.
pub fn page_html(path: &Path, name: &str) -> Result<Vec<u8>, String> {
    let n = PAGES.fetch_add(1, Ordering::Relaxed);
    let temp =
        std::env::temp_dir().join(format!("reel-studio-page-{}-{n}.html", std::process::id()));
    let written = offline::write_page(path, name, &temp);
    let read = written
        .and_then(|_| std::fs::read(&temp).map_err(|error| format!("{}: {error}", temp.display())));
    // Best effort: a page left behind in the temporary directory harms nothing.
    let _ = std::fs::remove_file(&temp);
    read
}
