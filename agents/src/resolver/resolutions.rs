//! [`Resolutions`]: every outside result a session's resolvers used, recorded so a
//! replay takes them from the recording and calls nothing (decision 0056).
//!
//! One line per resolution, in the order the results landed, in `X.resolved.jsonl` beside
//! the wire log `X.wire.jsonl`:
//!
//! ```text
//! {"resolver":"availability","call":1,"source":"fetch","inputs":{"slot":"afternoon"},"result":{"open":true}}
//! {"resolver":"check","call":1,"source":"agent","inputs":{},"result":"free at 3","landedAfter":41,"landedAtMs":1718000004200,"landedAtMark":17}
//! ```
//!
//! A replay looks each resolution up by its resolver's name and call number (the n-th
//! resolution of that resolver), compares the inputs, and hands back the recorded result
//! without running the source. A detached resolution's result is held until the replay's
//! journal and event time reach the place it landed when recording (`landedAfter`: the
//! journal sequence number just before its write; `landedAtMs`: its event time;
//! `landedAtMark`: the control lane's mark, [`State::lane_mark`] — between two events, or
//! inside one, and which), released by whoever drives the session's positions
//! ([`Resolutions::release_due`]). The mark tells apart the places a journal position
//! alone cannot: events handled one after another that wrote nothing.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use reel_actors::state::State;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::error::{ResolutionsError, ResolveError};
use super::source::SourceKind;
use super::write::{Outcome, write_outcome};

/// One recorded resolution: which resolver, which of its calls, what it read and what it
/// got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resolution {
    /// The resolver's name.
    pub resolver: String,
    /// Which call of this resolver, from 1 (cache hits are not calls).
    pub call: u64,
    /// What kind of source answered.
    pub source: SourceKind,
    /// The resolver's inputs as read from state (`null` for a key not set).
    pub inputs: Map<String, Value>,
    /// The result, when the source succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The source's error message, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For a detached resolution: the journal sequence number just before its write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed_after: Option<u64>,
    /// For a detached resolution: the event time its write was stamped with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed_at_ms: Option<u64>,
    /// For a detached resolution: the session's control lane mark when it was written
    /// ([`State::lane_mark`]): whether it landed between two events or inside the
    /// handling of one, and which. Logs written before it was kept have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed_at_mark: Option<u64>,
}

impl Resolution {
    pub(crate) fn outcome(&self) -> Outcome {
        match (&self.result, &self.error) {
            (_, Some(error)) => Err(error.clone()),
            (Some(result), None) => Ok(result.clone()),
            (None, None) => Ok(Value::Null),
        }
    }
}

/// Where a replay's resolutions parted from the recorded ones. `Display` names the
/// resolver.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResolverDrift {
    /// The resolver read other inputs than when recording (the recorded result was used).
    Inputs {
        /// The resolver.
        resolver: String,
        /// Which call, from 1.
        call: u64,
        /// The recorded inputs.
        recorded: Map<String, Value>,
        /// The replay's inputs.
        replayed: Map<String, Value>,
    },
    /// The recorded call was answered by another kind of source.
    Source {
        /// The resolver.
        resolver: String,
        /// Which call, from 1.
        call: u64,
        /// The recorded kind.
        recorded: SourceKind,
        /// The replay's kind.
        replayed: SourceKind,
    },
    /// The replay resolved a call the recording does not hold.
    NotRecorded {
        /// The resolver.
        resolver: String,
        /// Which call, from 1.
        call: u64,
    },
    /// The recording holds a call the replay never made.
    Unused {
        /// The resolver.
        resolver: String,
        /// Which call, from 1.
        call: u64,
    },
}

impl ResolverDrift {
    /// The resolver the drift is about.
    pub fn resolver(&self) -> &str {
        match self {
            ResolverDrift::Inputs { resolver, .. }
            | ResolverDrift::Source { resolver, .. }
            | ResolverDrift::NotRecorded { resolver, .. }
            | ResolverDrift::Unused { resolver, .. } => resolver,
        }
    }
}

impl fmt::Display for ResolverDrift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolverDrift::Inputs {
                resolver,
                call,
                recorded,
                replayed,
            } => write!(
                f,
                "resolver `{resolver}` call {call}: inputs {} recorded, {} in the replay",
                Value::Object(recorded.clone()),
                Value::Object(replayed.clone())
            ),
            ResolverDrift::Source {
                resolver,
                call,
                recorded,
                replayed,
            } => write!(
                f,
                "resolver `{resolver}` call {call}: source {recorded} recorded, {replayed} in the replay"
            ),
            ResolverDrift::NotRecorded { resolver, call } => write!(
                f,
                "resolver `{resolver}` call {call}: not in the recording (nothing was called)"
            ),
            ResolverDrift::Unused { resolver, call } => write!(
                f,
                "resolver `{resolver}` call {call}: recorded, never asked for in the replay"
            ),
        }
    }
}

/// What a log is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolutionMode {
    /// Resolvers call their sources; nothing is kept.
    Pass,
    /// Resolvers call their sources; every resolution is kept (and written to the file,
    /// if there is one).
    Record,
    /// Resolvers call nothing: every result comes from the recording.
    Replay,
}

/// A detached replayed result waiting for its recorded place.
struct Held {
    after: u64,
    at_ms: u64,
    mark: Option<u64>,
    order: u64,
    resolver: String,
    source: SourceKind,
    inputs: Map<String, Value>,
    outcome: Outcome,
    state: State,
    done: oneshot::Sender<Result<Value, ResolveError>>,
}

#[derive(Default)]
struct Inner {
    mode: Option<Mode>,
    calls: HashMap<String, u64>,
    driven: bool,
    held: Vec<Held>,
    order: u64,
}

enum Mode {
    Record {
        file: Option<(PathBuf, File)>,
        entries: Vec<Resolution>,
    },
    Replay {
        recorded: Vec<Resolution>,
        used: HashSet<(String, u64)>,
        drift: Vec<ResolverDrift>,
    },
}

/// What a log says to do with a resolution about to start.
pub(crate) enum Begin {
    /// Call the source.
    Run {
        /// Which call of the resolver.
        call: u64,
        /// Whether to keep the resolution ([`Resolutions::finish`]).
        record: bool,
    },
    /// Replaying: the recorded resolution (`None`: not recorded).
    Replayed {
        /// Which call of the resolver.
        call: u64,
        /// The recorded resolution.
        recorded: Option<Box<Resolution>>,
    },
}

/// The log of a session's resolutions: passes, records or replays them (see the
/// [module documentation](crate::resolver)). Cheap to clone: clones share the log, so a chain's log
/// handed to resolvers before the session starts is the one the session binds to a file.
#[derive(Clone, Default)]
pub struct Resolutions {
    inner: Arc<Mutex<Inner>>,
}

impl fmt::Debug for Resolutions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolutions")
            .field("mode", &self.mode())
            .finish_non_exhaustive()
    }
}

impl Resolutions {
    /// A log that keeps nothing (until a session binds it: see
    /// [`record_into`](Resolutions::record_into), [`replay_from`](Resolutions::replay_from)).
    pub fn new() -> Self {
        Resolutions::default()
    }

    /// A log recording into memory ([`entries`](Resolutions::entries)).
    pub fn record() -> Self {
        let log = Resolutions::new();
        log.lock().mode = Some(Mode::Record {
            file: None,
            entries: Vec::new(),
        });
        log
    }

    /// A log replaying `recorded`.
    pub fn replay(recorded: Vec<Resolution>) -> Self {
        let log = Resolutions::new();
        log.replay_from(recorded);
        log
    }

    /// A log replaying the file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ResolutionsError> {
        Ok(Resolutions::replay(read_resolutions(path)?))
    }

    /// `X.resolved.jsonl` beside the wire log `X.wire.jsonl` (`X.jsonl` works too).
    pub fn path_beside(wire_log: impl AsRef<Path>) -> PathBuf {
        let wire_log = wire_log.as_ref();
        let name = wire_log
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name
            .strip_suffix(".wire.jsonl")
            .or_else(|| name.strip_suffix(".jsonl"))
            .filter(|stem| !stem.is_empty())
            .unwrap_or("session");
        wire_log.with_file_name(format!("{stem}.resolved.jsonl"))
    }

    /// From now on, records every resolution, appending each as a line to the file at
    /// `path` (created afresh) as it lands.
    pub fn record_into(&self, path: impl AsRef<Path>) -> Result<(), ResolutionsError> {
        let path = path.as_ref().to_owned();
        let file = File::create(&path).map_err(|source| ResolutionsError::Io {
            path: path.clone(),
            source,
        })?;
        let mut inner = self.lock();
        inner.mode = Some(Mode::Record {
            file: Some((path, file)),
            entries: Vec::new(),
        });
        inner.calls.clear();
        Ok(())
    }

    /// From now on, replays `recorded`: no resolver calls its source.
    pub fn replay_from(&self, recorded: Vec<Resolution>) {
        let mut inner = self.lock();
        inner.mode = Some(Mode::Replay {
            recorded,
            used: HashSet::new(),
            drift: Vec::new(),
        });
        inner.calls.clear();
    }

    /// Says that something releases held detached results at their recorded places
    /// ([`release_due`](Resolutions::release_due)): a session does. Without it, a replayed
    /// detached result is written as soon as it is dispatched.
    pub fn drive(&self) {
        self.lock().driven = true;
    }

    /// What the log does.
    pub fn mode(&self) -> ResolutionMode {
        match &self.lock().mode {
            None => ResolutionMode::Pass,
            Some(Mode::Record { .. }) => ResolutionMode::Record,
            Some(Mode::Replay { .. }) => ResolutionMode::Replay,
        }
    }

    /// The resolutions recorded so far (recording), or the recording (replaying).
    pub fn entries(&self) -> Vec<Resolution> {
        match &self.lock().mode {
            None => Vec::new(),
            Some(Mode::Record { entries, .. }) => entries.clone(),
            Some(Mode::Replay { recorded, .. }) => recorded.clone(),
        }
    }

    /// Where the replay's resolutions parted from the recording: each drift as it was
    /// found, then every recorded resolution the replay did not ask for. Empty when not
    /// replaying.
    pub fn drift(&self) -> Vec<ResolverDrift> {
        let inner = self.lock();
        let Some(Mode::Replay {
            recorded,
            used,
            drift,
        }) = &inner.mode
        else {
            return Vec::new();
        };
        let mut all = drift.clone();
        all.extend(
            recorded
                .iter()
                .filter(|r| !used.contains(&(r.resolver.clone(), r.call)))
                .map(|r| ResolverDrift::Unused {
                    resolver: r.resolver.clone(),
                    call: r.call,
                }),
        );
        all
    }

    /// How many detached replayed results wait for their place.
    pub fn held(&self) -> usize {
        self.lock().held.len()
    }

    /// Writes every held result whose place has come: the journal has reached its
    /// recorded sequence number, event time has reached its recorded time and the control
    /// lane its recorded mark (a result that landed between two events is written once
    /// the lane is done with the first: the session calls this then too). Called by
    /// the session after each event and at each commit point, on the control lane, so
    /// the write lands where it did when recording.
    pub async fn release_due(&self, state: &State, now_ms: u64) {
        loop {
            let due = {
                let mut inner = self.lock();
                let cursor = state.mutation_cursor();
                let lane_mark = state.lane_mark();
                let next = inner
                    .held
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| {
                        h.after <= cursor
                            && h.at_ms <= now_ms
                            && h.mark.is_none_or(|mark| mark <= lane_mark)
                    })
                    .min_by_key(|(_, h)| (h.after, h.order))
                    .map(|(index, _)| index);
                next.map(|index| inner.held.remove(index))
            };
            let Some(held) = due else { return };
            let written = write_outcome(
                &held.state,
                &held.resolver,
                held.source,
                &held.inputs,
                held.outcome,
            )
            .await;
            // The dispatcher may have stopped waiting: the write is made either way.
            let _ = held.done.send(written);
        }
    }

    pub(crate) fn is_driven(&self) -> bool {
        self.lock().driven
    }

    /// Holds a replayed detached result until [`release_due`](Resolutions::release_due)
    /// finds its place; the receiver gets what the write gave.
    pub(crate) fn hold(
        &self,
        recorded: &Resolution,
        state: State,
    ) -> oneshot::Receiver<Result<Value, ResolveError>> {
        let (done, receiver) = oneshot::channel();
        let mut inner = self.lock();
        inner.order += 1;
        let order = inner.order;
        inner.held.push(Held {
            after: recorded.landed_after.unwrap_or(0),
            at_ms: recorded.landed_at_ms.unwrap_or(0),
            mark: recorded.landed_at_mark,
            order,
            resolver: recorded.resolver.clone(),
            source: recorded.source,
            inputs: recorded.inputs.clone(),
            outcome: recorded.outcome(),
            state,
            done,
        });
        receiver
    }

    /// Starts the next call of `resolver`, reading `inputs`.
    pub(crate) fn begin(
        &self,
        resolver: &str,
        source: SourceKind,
        inputs: &Map<String, Value>,
    ) -> Begin {
        let mut inner = self.lock();
        let call = {
            let count = inner.calls.entry(resolver.to_owned()).or_insert(0);
            *count += 1;
            *count
        };
        match &mut inner.mode {
            None => Begin::Run {
                call,
                record: false,
            },
            Some(Mode::Record { .. }) => Begin::Run { call, record: true },
            Some(Mode::Replay {
                recorded,
                used,
                drift,
            }) => {
                let found = recorded
                    .iter()
                    .find(|r| r.resolver == resolver && r.call == call)
                    .cloned();
                match &found {
                    None => drift.push(ResolverDrift::NotRecorded {
                        resolver: resolver.to_owned(),
                        call,
                    }),
                    Some(found) => {
                        used.insert((resolver.to_owned(), call));
                        if found.source != source {
                            drift.push(ResolverDrift::Source {
                                resolver: resolver.to_owned(),
                                call,
                                recorded: found.source,
                                replayed: source,
                            });
                        }
                        if &found.inputs != inputs {
                            drift.push(ResolverDrift::Inputs {
                                resolver: resolver.to_owned(),
                                call,
                                recorded: found.inputs.clone(),
                                replayed: inputs.clone(),
                            });
                        }
                    }
                }
                Begin::Replayed {
                    call,
                    recorded: found.map(Box::new),
                }
            }
        }
    }

    /// Keeps a finished resolution (recording; ignored otherwise). A line that cannot be
    /// written is logged: the session goes on, as with the wire log.
    pub(crate) fn finish(&self, resolution: Resolution) {
        let mut inner = self.lock();
        let Some(Mode::Record { file, entries }) = &mut inner.mode else {
            return;
        };
        if let Some((path, file)) = file {
            let written = serde_json::to_string(&resolution)
                .map_err(std::io::Error::other)
                .and_then(|line| writeln!(file, "{line}"))
                .and_then(|()| file.flush());
            if let Err(error) = written {
                tracing::warn!(path = %path.display(), %error, "a resolution could not be written");
            }
        }
        entries.push(resolution);
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every change under the lock is a push, a remove or a counter step: a poisoned
        // log is still whole.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Reads a resolutions file: one [`Resolution`] per line, blank lines skipped.
pub fn read_resolutions(path: impl AsRef<Path>) -> Result<Vec<Resolution>, ResolutionsError> {
    let path = path.as_ref();
    let io = |source| ResolutionsError::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let mut all = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io)?;
        if line.trim().is_empty() {
            continue;
        }
        let resolution = serde_json::from_str(&line).map_err(|source| ResolutionsError::Parse {
            path: path.to_owned(),
            line: index + 1,
            source,
        })?;
        all.push(resolution);
    }
    Ok(all)
}
