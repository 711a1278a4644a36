//! [`Decisions`]: the timing-dependent choices of a pipeline run, recorded so a replay
//! makes the same ones (decision 0054).
//!
//! A model call replays from a cassette, but which of two racing branches answered first,
//! or whether a deadline passed, depends on the machine's timing, not on any recorded
//! byte. A [`RaceTextAgent`](crate::RaceTextAgent) or
//! [`TimeoutTextAgent`](crate::TimeoutTextAgent) given a [`Decisions`] log writes each such
//! choice into it when recording, and, when replaying, reads the choice back before it
//! runs anything: a race runs only its recorded winner, a timeout that fired fails at once
//! and one that did not runs its agent with no deadline.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::AgentError;

/// The version of the decisions file this crate writes and reads.
pub const DECISIONS_VERSION: u32 = 1;

/// One timing-dependent choice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Choice {
    /// A race's first success: the branch's position and name.
    RaceWinner {
        /// The winner's position among the race's agents.
        index: usize,
        /// The winner's name.
        winner: String,
    },
    /// Whether a timeout's deadline passed before its agent finished.
    Timeout {
        /// `true` when the deadline passed.
        fired: bool,
    },
    /// What a middleware layer around an agent decided by reading the clock (a retry's
    /// attempts, a cache entry's freshness, a circuit breaker's state, a measured latency):
    /// the layer's name and its outcome, read back by the same layer in a replay
    /// (`reel-compose`'s `M::` layers, decision 0058).
    Middleware {
        /// The layer (`retry`, `cache`, `circuitBreaker`, `latency`).
        layer: String,
        /// What it decided, in the layer's own shape.
        outcome: serde_json::Value,
    },
    /// What a person decided at an [`ApprovalTextAgent`](crate::ApprovalTextAgent).
    Approval {
        /// Whether they approved.
        approved: bool,
        /// Who decided.
        by: String,
        /// What they said.
        note: String,
    },
}

/// A choice and the agent that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The deciding agent's name.
    pub agent: String,
    /// What it chose.
    #[serde(flatten)]
    pub choice: Choice,
}

/// The decisions file: `{"version": 1, "decisions": [...]}`, in the order they were made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionFile {
    /// [`DECISIONS_VERSION`].
    pub version: u32,
    /// The decisions, in the order they were made.
    pub decisions: Vec<Decision>,
}

/// Why a decisions file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecisionsError {
    /// The file could not be read or written.
    #[error("decisions file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a decisions file.
    #[error("decisions file {path} is not valid: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where the JSON went wrong.
        #[source]
        source: serde_json::Error,
    },
    /// The file is of a version this crate does not read.
    #[error(
        "decisions file {path} has version {found}; this reel reads version {DECISIONS_VERSION}"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version it has.
        found: u32,
    },
}

/// Whether a log is being written or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionMode {
    /// Decisions are made by timing and written down.
    Record,
    /// Decisions are read back in order; timing decides nothing.
    Replay,
}

#[derive(Debug, Default)]
struct Log {
    decisions: Vec<Decision>,
    used: Vec<bool>,
}

/// A pipeline's log of timing-dependent choices; cheap to clone (clones share the log).
#[derive(Debug, Clone)]
pub struct Decisions {
    mode: DecisionMode,
    log: Arc<Mutex<Log>>,
}

impl Decisions {
    /// An empty log that records.
    pub fn record() -> Self {
        Decisions {
            mode: DecisionMode::Record,
            log: Arc::default(),
        }
    }

    /// A log replaying `file`'s decisions.
    pub fn replay(file: DecisionFile) -> Self {
        let used = vec![false; file.decisions.len()];
        Decisions {
            mode: DecisionMode::Replay,
            log: Arc::new(Mutex::new(Log {
                decisions: file.decisions,
                used,
            })),
        }
    }

    /// Reads the decisions file at `path` to replay it.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, DecisionsError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| DecisionsError::Io {
            path: path.to_owned(),
            source,
        })?;
        let file: DecisionFile =
            serde_json::from_str(&text).map_err(|source| DecisionsError::Parse {
                path: path.to_owned(),
                source,
            })?;
        if file.version != DECISIONS_VERSION {
            return Err(DecisionsError::Version {
                path: path.to_owned(),
                found: file.version,
            });
        }
        Ok(Decisions::replay(file))
    }

    /// The decisions file that goes with the cassette `cassette`: `X.decisions.json` for
    /// `X.cassette.json` (or `X.json`).
    pub fn path_beside(cassette: impl AsRef<Path>) -> PathBuf {
        let cassette = cassette.as_ref();
        let name = cassette
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name
            .strip_suffix(".cassette.json")
            .or_else(|| name.strip_suffix(".json"))
            .filter(|stem| !stem.is_empty())
            .unwrap_or("pipeline");
        cassette.with_file_name(format!("{stem}.decisions.json"))
    }

    /// The mode.
    pub fn mode(&self) -> DecisionMode {
        self.mode
    }

    /// The log as a file.
    pub fn snapshot(&self) -> DecisionFile {
        DecisionFile {
            version: DECISIONS_VERSION,
            decisions: self.lock().decisions.clone(),
        }
    }

    /// Writes the log to `path` (pretty JSON, a final newline).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), DecisionsError> {
        let path = path.as_ref();
        // Serializing plain strings, numbers and booleans cannot fail.
        let mut text = serde_json::to_string_pretty(&self.snapshot()).unwrap_or_default();
        text.push('\n');
        std::fs::write(path, text).map_err(|source| DecisionsError::Io {
            path: path.to_owned(),
            source,
        })
    }

    /// The recorded decisions no replayed run has read yet (positions in the file).
    pub fn unused(&self) -> Vec<usize> {
        let log = self.lock();
        (0..log.used.len()).filter(|&i| !log.used[i]).collect()
    }

    fn lock(&self) -> MutexGuard<'_, Log> {
        // Every change is one push or one flag: a poisoned log is still whole.
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes `choice` of `agent` down (recording). Agents outside this crate that decide
    /// by timing (the composition layer's middleware) write their choices here too.
    pub fn note(&self, agent: &str, choice: Choice) {
        let mut log = self.lock();
        log.decisions.push(Decision {
            agent: agent.to_owned(),
            choice,
        });
        log.used.push(true);
    }

    /// The next recorded choice of `agent` (replaying): its first unread decision; none left
    /// is [`AgentError::Decision`].
    pub fn next(&self, agent: &str) -> Result<Choice, AgentError> {
        let mut log = self.lock();
        let log = &mut *log;
        let index = (0..log.decisions.len())
            .find(|&i| !log.used[i] && log.decisions[i].agent == agent)
            .ok_or_else(|| AgentError::Decision {
                agent: agent.to_owned(),
                problem: "the recording holds no further decision of this agent".to_owned(),
            })?;
        log.used[index] = true;
        Ok(log.decisions[index].choice.clone())
    }
}
