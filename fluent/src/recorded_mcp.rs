//! MCP tools in a replay: declared from the recorded setup, answered from the recorded
//! tool responses, the server never started.
//!
//! When the chain names MCP servers, the replay reads the tape through a [`TapeScan`] (one
//! pass: the scan watches each entry as the tape's reader reads it). Every function the
//! recorded setup declares that the chain's own tools and setup do not, and that one of
//! the chain's servers may declare (by its prefix and allow-list) — the MCP tools —
//! becomes a [`RecordedTool`]: declared exactly as recorded, each call answered with the
//! response recorded for its call id. A recorded function nobody claims is left out, so a
//! native tool removed since the recording shows up as drift. The setup
//! frame and the tool responses then come out byte-identical, with no server running.

use std::sync::Arc;

use reel_actors::tools::ToolFunction;
use reel_recorder::RecordError;
use reel_replayer::{RecordedTool, Tape, TapeScan};

use crate::error::ReplayError;
use crate::mcp::{Discovered, McpPart};

/// `tape` read through a scan, and the scan.
pub(crate) fn scanned(mut tape: Tape) -> Result<(Tape, Arc<TapeScan>), ReplayError> {
    let scan = TapeScan::new();
    let observer = Arc::clone(&scan);
    let name = tape.name.clone();
    let entries = std::iter::from_fn(move || match tape.next_entry() {
        Some(Ok(entry)) => {
            observer.observe(&entry);
            Some(entry)
        }
        Some(Err(error)) => {
            tracing::warn!(%error, "the tape ends at a bad entry");
            observer.end();
            None
        }
        None => {
            observer.end();
            None
        }
    });
    let tape = Tape::streamed(name.clone(), entries).map_err(|source| ReplayError::Tape {
        path: name.clone().into(),
        source: RecordError::Io {
            path: name.into(),
            source,
        },
    })?;
    if let Some(read_ahead) = tape.read_ahead() {
        scan.attach(read_ahead);
    }
    Ok((tape, scan))
}

/// The recorded functions not in `native` (the chain's own tools and declarations) that
/// a server of `mcp` may declare, as tools answered from the recording.
pub(crate) async fn recorded_tools(
    scan: &Arc<TapeScan>,
    native: &[String],
    mcp: &McpPart,
) -> Result<Discovered, ReplayError> {
    let setup = scan.setup().await.map_err(ReplayError::RecordedSetup)?;
    let tools = setup
        .tools
        .into_iter()
        .flatten()
        .flat_map(|tool| tool.function_declarations.unwrap_or_default())
        .filter(|declaration| {
            declaration
                .name
                .as_ref()
                .is_some_and(|name| !native.contains(name) && mcp.may_declare(name))
        })
        .map(|declaration| {
            Arc::new(RecordedTool::new(declaration, Arc::clone(scan))) as Arc<dyn ToolFunction>
        })
        .collect();
    Ok(Discovered {
        call: "mcp(recorded)".to_owned(),
        tools,
    })
}
