//! Reading a trace with checks ([`read_trace`], [`parse_trace`]) and writing one
//! ([`write_trace`]).

use std::path::Path;

use super::AgentTrace;
use super::entry::{TraceEntry, TraceRequest, TraceResponse};
use super::error::{TraceError, TraceProblem};
use crate::json_fault::{JsonFault, parse_at_path};

/// Reads and checks the trace at `path` (see [`parse_trace`]).
pub fn read_trace(path: impl AsRef<Path>) -> Result<AgentTrace, TraceError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_trace(&text, path)
}

/// Parses and checks a trace; `path` names it in errors.
///
/// Checks, each failing with the JSON path of what is wrong: the document is a trace
/// ([`TraceError::Invalid`]: a missing field, a wrong type, a timestamp that is not RFC
/// 3339), its version is 1.x ([`TraceError::UnsupportedVersion`]), requests are numbered
/// 0, 1, 2, … in order and each response answers one earlier request, once
/// ([`TraceError::Inconsistent`]). Fields this reader does not know are ignored, so a
/// newer writer's additions do not make a file unreadable.
///
/// ```
/// use reel_recorder::trace::{parse_trace, TraceError};
///
/// let text = r#"{"version":"1.0","traceName":"t","capturedAt":"2026-01-07T10:30:00Z",
///   "agentName":"a","entries":[{"type":"Request","index":0,"timestamp":"noon"}],
///   "performance":{"totalDurationMs":0,"totalPromptTokens":0,"totalCompletionTokens":0}}"#;
/// let error = parse_trace(text, "t.trace.json").unwrap_err();
/// assert!(matches!(&error, TraceError::Invalid { at, .. } if at == "entries[0].timestamp"));
/// ```
pub fn parse_trace(text: &str, path: impl AsRef<Path>) -> Result<AgentTrace, TraceError> {
    let path = path.as_ref();
    let trace: AgentTrace = parse_at_path(text.as_bytes()).map_err(|(at, error)| {
        entry_error(text, path, &at)
            .unwrap_or_else(|| trace_error(path, JsonFault::new(&error, at)))
    })?;
    check(&trace, path)?;
    Ok(trace)
}

/// Writes `trace` to `path` as pretty JSON ending with a newline, replacing the file.
pub fn write_trace(path: impl AsRef<Path>, trace: &AgentTrace) -> Result<(), TraceError> {
    let path = path.as_ref();
    std::fs::write(path, trace.to_json_pretty()).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// `fault`, in the trace file at `path`.
fn trace_error(path: &Path, fault: JsonFault) -> TraceError {
    let path = path.to_path_buf();
    match fault {
        JsonFault::Syntax {
            line,
            column,
            message,
        } => TraceError::Syntax {
            path,
            line,
            column,
            message,
        },
        JsonFault::Invalid { at, message } => TraceError::Invalid { path, at, message },
    }
}

/// The precise error inside entry `i` when `at` is `entries[i]`.
///
/// An entry is read by its `type` tag, which makes serde read the whole entry before its
/// fields, and lose the path inside it on the way. So a failing entry is read again here,
/// as the struct its tag names, to say which of its fields is wrong.
fn entry_error(text: &str, path: &Path, at: &str) -> Option<TraceError> {
    let position: usize = at
        .strip_prefix("entries[")?
        .strip_suffix(']')?
        .parse()
        .ok()?;
    let document: serde_json::Value = serde_json::from_str(text).ok()?;
    let entry = document.get("entries")?.get(position)?;
    let inner = match entry.get("type").and_then(serde_json::Value::as_str)? {
        "Request" => serde_path_to_error::deserialize::<_, TraceRequest>(entry).err()?,
        "Response" => serde_path_to_error::deserialize::<_, TraceResponse>(entry).err()?,
        _ => return None,
    };
    let at = format!("{at}.{}", inner.path());
    Some(trace_error(path, JsonFault::new(inner.inner(), at)))
}

fn check(trace: &AgentTrace, path: &Path) -> Result<(), TraceError> {
    let major = trace.version.split('.').next().unwrap_or_default();
    if major != "1" {
        return Err(TraceError::UnsupportedVersion {
            path: path.to_path_buf(),
            found: trace.version.clone(),
        });
    }
    let mut answered: Vec<bool> = Vec::new();
    for (position, entry) in trace.entries.iter().enumerate() {
        let problem = match entry {
            TraceEntry::Request(request) => {
                let expected = answered.len() as u64;
                answered.push(false);
                (request.index != expected).then_some(TraceProblem::RequestOutOfOrder {
                    expected,
                    found: request.index,
                })
            }
            TraceEntry::Response(response) => {
                let index = response.index;
                match usize::try_from(index)
                    .ok()
                    .and_then(|i| answered.get_mut(i))
                {
                    None => Some(TraceProblem::ResponseWithoutRequest { index }),
                    Some(true) => Some(TraceProblem::SecondResponse { index }),
                    Some(done) => {
                        *done = true;
                        None
                    }
                }
            }
        };
        if let Some(problem) = problem {
            return Err(TraceError::Inconsistent {
                path: path.to_path_buf(),
                at: format!("entries[{position}].index"),
                problem,
            });
        }
    }
    Ok(())
}
