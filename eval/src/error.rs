//! [`EvalError`]: a suite or an input that cannot be evaluated at all.

use std::path::PathBuf;

/// What is wrong with a case.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SuiteProblem {
    /// A judged criterion, and no judge.
    #[error("`{criterion}` is model-judged and the suite has no judge")]
    NoJudge {
        /// The criterion's kind.
        criterion: &'static str,
    },
    /// A threshold outside [0, 1].
    #[error("threshold {threshold} is outside [0, 1]")]
    Threshold {
        /// The threshold given.
        threshold: f64,
    },
    /// Two cases of one name.
    #[error("another case has this name")]
    DuplicateName,
    /// A case without a name.
    #[error("case {position} (0-based) has no name")]
    EmptyName {
        /// Its position in the suite.
        position: usize,
    },
}

/// A suite that cannot run, or inputs that cannot be listed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The suite file cannot be read.
    #[error("{}: cannot read the suite: {source}", path.display())]
    SuiteRead {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The suite file is not a suite.
    #[error("{}: not a suite: {message} (at `{at}`)", path.display())]
    SuiteInvalid {
        /// The file.
        path: PathBuf,
        /// The JSON path of what is wrong (`cases[2].criterion`).
        at: String,
        /// What is wrong.
        message: String,
    },
    /// A case cannot run.
    #[error("suite {suite:?}, case {case:?}: {problem}")]
    Suite {
        /// The suite.
        suite: String,
        /// The case.
        case: String,
        /// What is wrong.
        problem: SuiteProblem,
    },
    /// An input path cannot be listed.
    #[error("{}: cannot list recordings: {source}", path.display())]
    List {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No recording under the inputs.
    #[error("no recordings (*.wire.jsonl, *.trace.json, *.cassette.json) in {}", paths.join(", "))]
    NoRecordings {
        /// The inputs, as given.
        paths: Vec<String>,
    },
    /// The price table cannot be read.
    #[error("{}: not a price table: {message}", path.display())]
    Prices {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// serde_json's message without its ` at line L column C`: the JSON path says where.
pub(crate) fn without_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}
