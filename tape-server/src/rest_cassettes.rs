//! The REST calls a tape server answers beside Live, kept in cassettes
//! (`reel_recorder::cassette`): one file per test, `<test>.cassette.json` (`rest.cassette.json`
//! for clients that name no test), each interaction a call the server recorded.
//!
//! An interaction's request is `{"method", "model", "body"}`: the REST method
//! (`generateContent`, `streamGenerateContent`), the model id and the request body exactly as
//! the client sent it. Its response is the answer's chunks, each with the JSON the API sent
//! in `raw` (one chunk for `generateContent`, one per event for a stream). Interactions
//! without that shape (a session's out-of-band calls recorded by reel's own cassettes) are
//! not REST calls and are left alone.
//!
//! A call is answered by the first interaction of its test's cassette whose method, model
//! and body are equal to the call's (member order aside, and what the server's loose rules
//! ignore masked: their paths start at `method`, `model` or `body`), preferring one not
//! answered yet:
//! two identical calls in a test get the two recorded answers in order, and a third gets
//! the first again.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use reel_recorder::cassette::{CassetteFile, DEFAULT_MAX_CASSETTE_BYTES, Interaction};
use reel_recorder::llm_tape::DocumentError;
use serde_json::{Map, Value, json};

use super::matching::FrameMatcher;
use super::rest_path::RestMethod;
use super::test_name::TestName;
use reel_protocol::json::{PathDiff, json_diff};

/// The file name ending of a cassette.
pub const CASSETTE_SUFFIX: &str = ".cassette.json";

/// The cassette of clients that name no test.
pub const NO_TEST_CASSETTE: &str = "rest";

/// The cassettes a tape server answers REST calls from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CassetteLibrary {
    cassettes: Vec<(PathBuf, CassetteFile)>,
}

/// A cassette that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the cassette {}: {source}", path.display())]
pub struct CassetteLoadError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: DocumentError,
}

impl CassetteLibrary {
    /// No cassettes.
    pub fn new() -> Self {
        CassetteLibrary::default()
    }

    /// Every `*.cassette.json` in `dir`, in file-name order (none when `dir` does not
    /// exist).
    pub fn open_dir(dir: impl AsRef<Path>) -> Result<Self, CassetteLoadError> {
        let dir = dir.as_ref();
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| {
                    path.file_name()
                        .and_then(|name| name.to_str())
                        .is_some_and(|name| name.ends_with(CASSETTE_SUFFIX))
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        files.sort();
        let mut library = CassetteLibrary::new();
        for path in files {
            let cassette =
                CassetteFile::read(&path, DEFAULT_MAX_CASSETTE_BYTES).map_err(|source| {
                    CassetteLoadError {
                        path: path.clone(),
                        source,
                    }
                })?;
            library.cassettes.push((path, cassette));
        }
        Ok(library)
    }

    /// The same library with `cassette` added, as if read from `path`.
    pub fn with_cassette(mut self, path: impl Into<PathBuf>, cassette: CassetteFile) -> Self {
        self.cassettes.push((path.into(), cassette));
        self
    }

    /// How many REST calls the cassettes hold.
    pub fn calls(&self) -> usize {
        self.cassettes
            .iter()
            .flat_map(|(_, cassette)| &cassette.interactions)
            .filter(|interaction| is_rest_call(&interaction.request))
            .count()
    }
}

/// A REST call as a cassette keeps it.
pub(crate) fn call_request(method: RestMethod, model: &str, body: &Value) -> Map<String, Value> {
    match json!({"method": method.as_str(), "model": model, "body": body}) {
        Value::Object(map) => map,
        // `json!` of an object literal is an object.
        _ => Map::new(),
    }
}

fn is_rest_call(request: &Map<String, Value>) -> bool {
    request.len() == 3
        && request.get("method").is_some_and(Value::is_string)
        && request.get("model").is_some_and(Value::is_string)
        && request.contains_key("body")
}

/// Whether `path` is test `test`'s cassette (no test: the [`NO_TEST_CASSETTE`]).
fn belongs(path: &Path, test: Option<&TestName>) -> bool {
    let stem = path
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_suffix(CASSETTE_SUFFIX));
    match (stem, test) {
        (Some(stem), Some(test)) => stem == test.as_str(),
        (Some(stem), None) => stem == NO_TEST_CASSETTE,
        (None, _) => false,
    }
}

/// One recorded call, ready to answer.
#[derive(Debug, Clone)]
pub(crate) struct RecordedCall {
    /// The cassette it came from.
    pub cassette: PathBuf,
    /// Its place in the cassette (0-based).
    pub index: usize,
    pub request: Map<String, Value>,
    pub interaction: Interaction,
}

/// What a call found.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// The recorded call that answers it.
    Found(Box<RecordedCall>),
    /// None: the closest recorded call of the test and how it differs, if the test has any.
    Missing(Option<(PathBuf, usize, Vec<PathDiff>)>),
}

/// Every REST call a server answers, shared by its connections; calls recorded in auto mode
/// join while it runs.
#[derive(Debug, Default)]
pub(crate) struct RestIndex {
    calls: Mutex<Vec<(RecordedCall, bool)>>,
    /// Tests (and [`NO_TEST_CASSETTE`]) that had a cassette when the server started.
    at_start: HashSet<String>,
}

impl RestIndex {
    pub(crate) fn build(library: &CassetteLibrary) -> RestIndex {
        let mut calls = Vec::new();
        let mut at_start = HashSet::new();
        for (path, cassette) in &library.cassettes {
            if let Some(stem) = path
                .file_name()
                .and_then(|name| name.to_str())
                .and_then(|name| name.strip_suffix(CASSETTE_SUFFIX))
            {
                at_start.insert(stem.to_owned());
            }
            for (index, interaction) in cassette.interactions.iter().enumerate() {
                if is_rest_call(&interaction.request) {
                    calls.push((
                        RecordedCall {
                            cassette: path.clone(),
                            index,
                            request: interaction.request.clone(),
                            interaction: interaction.clone(),
                        },
                        false,
                    ));
                }
            }
        }
        RestIndex {
            calls: Mutex::new(calls),
            at_start,
        }
    }

    /// Whether the test (no test: the shared cassette) had a cassette as the server started.
    pub(crate) fn had_cassette(&self, test: Option<&TestName>) -> bool {
        self.at_start
            .contains(test.map_or(NO_TEST_CASSETTE, TestName::as_str))
    }

    /// How many calls are indexed.
    pub(crate) fn len(&self) -> usize {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The recorded call that answers `request` for `test` (compared as `matcher` says),
    /// marked answered.
    pub(crate) fn lookup(
        &self,
        request: &Map<String, Value>,
        test: Option<&TestName>,
        matcher: &FrameMatcher,
    ) -> Lookup {
        let compared = |request: &Map<String, Value>| {
            let mut value = Value::Object(request.clone());
            matcher.mask(&mut value);
            value
        };
        let wanted = compared(request);
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let eligible: Vec<usize> = (0..calls.len())
            .filter(|&i| belongs(&calls[i].0.cassette, test))
            .collect();
        let recorded: Vec<Value> = eligible
            .iter()
            .map(|&i| compared(&calls[i].0.request))
            .collect();
        let matching: Vec<usize> = eligible
            .iter()
            .zip(&recorded)
            .filter(|(_, recorded)| **recorded == wanted)
            .map(|(&i, _)| i)
            .collect();
        let chosen = matching
            .iter()
            .copied()
            .find(|&i| !calls[i].1)
            .or_else(|| matching.first().copied());
        if let Some(i) = chosen {
            calls[i].1 = true;
            return Lookup::Found(Box::new(calls[i].0.clone()));
        }
        let closest = eligible
            .iter()
            .zip(&recorded)
            .map(|(&i, recorded)| {
                let call = &calls[i].0;
                let diffs = json_diff(recorded, &wanted);
                (call.cassette.clone(), call.index, diffs)
            })
            .min_by_key(|(_, _, diffs)| diffs.len());
        Lookup::Missing(closest)
    }

    /// Adds a call just recorded (auto mode), answered already.
    pub(crate) fn add(&self, call: RecordedCall) {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((call, true));
    }
}

/// Appends `interaction` to the cassette at `path` (created if absent); returns its index.
/// Callers serialize appends to one file.
pub(crate) fn append(path: &Path, interaction: Interaction) -> Result<usize, DocumentError> {
    let mut cassette = if path.exists() {
        CassetteFile::read(path, DEFAULT_MAX_CASSETTE_BYTES)?
    } else {
        CassetteFile::new()
    };
    cassette.interactions.push(interaction);
    cassette.write(path, DEFAULT_MAX_CASSETTE_BYTES)?;
    Ok(cassette.interactions.len() - 1)
}

/// The cassette file a test's calls are recorded into, in `dir`.
pub(crate) fn cassette_path(dir: &Path, test: Option<&TestName>) -> PathBuf {
    let stem = test.map_or(NO_TEST_CASSETTE, TestName::as_str);
    dir.join(format!("{stem}{CASSETTE_SUFFIX}"))
}
