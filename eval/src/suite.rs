//! [`Suite`] and [`Case`], in code and as a JSON file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cost::PriceTable;
use crate::criterion::Criterion;
use crate::error::{EvalError, SuiteProblem, without_position};
use crate::judge::Judge;

/// One case: a criterion under a name, with the score it must reach, over every recording
/// or the ones named.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The case's name (unique in its suite).
    pub name: String,
    /// What it checks.
    pub criterion: Criterion,
    /// The lowest passing score, in [0, 1] (default 1).
    #[serde(default = "one")]
    pub threshold: f64,
    /// The recordings it applies to, by name (the file name without `.wire.jsonl`,
    /// `.trace.json` or `.cassette.json`); none: every recording.
    #[serde(default)]
    pub recordings: Option<Vec<String>>,
}

fn one() -> f64 {
    1.0
}

impl Case {
    /// `criterion` under `name`, threshold 1, over every recording.
    pub fn new(name: impl Into<String>, criterion: impl Into<Criterion>) -> Self {
        Case {
            name: name.into(),
            criterion: criterion.into(),
            threshold: 1.0,
            recordings: None,
        }
    }

    /// The lowest passing score.
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }

    /// Only over the recordings named.
    pub fn only<S: Into<String>>(mut self, recordings: impl IntoIterator<Item = S>) -> Self {
        self.recordings = Some(recordings.into_iter().map(Into::into).collect());
        self
    }

    /// Whether the case applies to the recording called `name`.
    pub fn applies_to(&self, name: &str) -> bool {
        self.recordings
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
    }
}

/// Where a suite file's judge comes from: a cassette of its calls, and the model asked.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSpec {
    /// The cassette, relative to the suite file.
    pub cassette: PathBuf,
    /// The model.
    pub model: String,
}

/// A named list of cases, with the judge and the price table they need.
#[derive(Debug, Clone)]
pub struct Suite {
    name: String,
    cases: Vec<Case>,
    judge: Option<Judge>,
    prices: Option<PriceTable>,
    judge_spec: Option<JudgeSpec>,
}

/// A suite file, as read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: String,
    #[serde(default)]
    judge: Option<JudgeSpec>,
    #[serde(default)]
    prices: Option<PriceTable>,
    cases: Vec<Case>,
}

impl Suite {
    /// An empty suite.
    pub fn new(name: impl Into<String>) -> Self {
        Suite {
            name: name.into(),
            cases: Vec::new(),
            judge: None,
            prices: None,
            judge_spec: None,
        }
    }

    /// Adds a case.
    pub fn case(mut self, case: Case) -> Self {
        self.cases.push(case);
        self
    }

    /// The judge of the model-judged criteria.
    pub fn judge(mut self, judge: Judge) -> Self {
        self.judge = Some(judge);
        self
    }

    /// Sets the judge (for a suite read from a file, once its cassette is open).
    pub fn set_judge(&mut self, judge: Judge) {
        self.judge = Some(judge);
    }

    /// Prices recordings' tokens: each recording's cost is in the report.
    pub fn prices(mut self, prices: PriceTable) -> Self {
        self.prices = Some(prices);
        self
    }

    /// Sets the price table.
    pub fn set_prices(&mut self, prices: PriceTable) {
        self.prices = Some(prices);
    }

    /// The suite's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The cases, in order.
    pub fn cases(&self) -> &[Case] {
        &self.cases
    }

    /// The judge, if set.
    pub fn judge_ref(&self) -> Option<&Judge> {
        self.judge.as_ref()
    }

    /// The price table, if set.
    pub fn price_table(&self) -> Option<&PriceTable> {
        self.prices.as_ref()
    }

    /// The judge a suite file names (its cassette resolved against the file's directory).
    pub fn judge_spec(&self) -> Option<&JudgeSpec> {
        self.judge_spec.as_ref()
    }

    /// Reads a suite file (see `docs/cli.md`, `reel eval`) and checks it.
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<Suite, EvalError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::SuiteRead {
            path: path.to_path_buf(),
            source,
        })?;
        let mut suite = Suite::from_json(&text, path)?;
        if let Some(spec) = &mut suite.judge_spec {
            let base = path.parent().unwrap_or_else(|| Path::new(""));
            spec.cassette = base.join(&spec.cassette);
        }
        Ok(suite)
    }

    /// Parses a suite; `path` names it in errors. The judge's cassette stays as written.
    pub fn from_json(text: &str, path: impl AsRef<Path>) -> Result<Suite, EvalError> {
        let path = path.as_ref();
        let mut reader = serde_json::Deserializer::from_str(text);
        let file: SuiteFile = serde_path_to_error::deserialize(&mut reader).map_err(|error| {
            let at = error.path().to_string();
            let (at, message) = criterion_error(text, &at)
                .unwrap_or_else(|| (at, without_position(&error.inner().to_string())));
            EvalError::SuiteInvalid {
                path: path.to_path_buf(),
                at,
                message,
            }
        })?;
        let suite = Suite {
            name: file.name,
            cases: file.cases,
            judge: None,
            prices: file.prices,
            judge_spec: file.judge,
        };
        suite.check_cases()?;
        if suite.judge_spec.is_none()
            && let Some(case) = suite.cases.iter().find(|c| c.criterion.needs_judge())
        {
            return Err(suite.problem(
                &case.name,
                SuiteProblem::NoJudge {
                    criterion: case.criterion.kind(),
                },
            ));
        }
        Ok(suite)
    }

    /// Checks the cases: names present and unique, thresholds in [0, 1], a judge for the
    /// judged criteria.
    pub fn check(&self) -> Result<(), EvalError> {
        self.check_cases()?;
        if self.judge.is_none()
            && let Some(case) = self.cases.iter().find(|c| c.criterion.needs_judge())
        {
            return Err(self.problem(
                &case.name,
                SuiteProblem::NoJudge {
                    criterion: case.criterion.kind(),
                },
            ));
        }
        Ok(())
    }

    fn check_cases(&self) -> Result<(), EvalError> {
        for (i, case) in self.cases.iter().enumerate() {
            if case.name.trim().is_empty() {
                return Err(self.problem(&case.name, SuiteProblem::EmptyName { position: i }));
            }
            if self.cases[..i].iter().any(|c| c.name == case.name) {
                return Err(self.problem(&case.name, SuiteProblem::DuplicateName));
            }
            if !(0.0..=1.0).contains(&case.threshold) {
                return Err(self.problem(
                    &case.name,
                    SuiteProblem::Threshold {
                        threshold: case.threshold,
                    },
                ));
            }
        }
        Ok(())
    }

    fn problem(&self, case: &str, problem: SuiteProblem) -> EvalError {
        EvalError::Suite {
            suite: self.name.clone(),
            case: case.to_owned(),
            problem,
        }
    }
}

/// The precise error inside case `i`'s criterion when `at` is `cases[i].criterion`.
///
/// A criterion is read by its `kind` tag, which makes serde read the whole criterion
/// before its fields and lose the path inside it (and add a line and column of its
/// buffer). So a failing criterion is read again here, as the struct its kind names.
fn criterion_error(text: &str, at: &str) -> Option<(String, String)> {
    use crate::criterion::{
        ContainsMatch, Hallucination, Persona, ResponseMatch, Safety, SemanticMatch, Trajectory,
    };
    fn inner<T: serde::de::DeserializeOwned>(
        value: &serde_json::Value,
    ) -> Option<(String, String)> {
        let error = serde_path_to_error::deserialize::<_, T>(value).err()?;
        Some((error.path().to_string(), error.inner().to_string()))
    }
    let position: usize = at
        .strip_prefix("cases[")?
        .strip_suffix("].criterion")?
        .parse()
        .ok()?;
    let document: serde_json::Value = serde_json::from_str(text).ok()?;
    let mut criterion = document
        .get("cases")?
        .get(position)?
        .get("criterion")?
        .clone();
    let kind = criterion.as_object_mut()?.remove("kind")?;
    let (path, message) = match kind.as_str()? {
        "response_match" => inner::<ResponseMatch>(&criterion),
        "contains_match" => inner::<ContainsMatch>(&criterion),
        "trajectory" => inner::<Trajectory>(&criterion),
        "safety" => inner::<Safety>(&criterion),
        "semantic_match" => inner::<SemanticMatch>(&criterion),
        "hallucination" => inner::<Hallucination>(&criterion),
        "persona" => inner::<Persona>(&criterion),
        _ => None,
    }?;
    let at = if path == "." {
        at.to_owned()
    } else {
        format!("{at}.{path}")
    };
    Some((at, message))
}
