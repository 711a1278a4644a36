//! `A::`: an agent's input and output artifacts, declared and validated.

use std::ops::Add;

use serde_json::Value;

/// A text artifact's MIME type.
pub const TEXT_MIME: &str = "text/plain";
/// A JSON artifact's MIME type.
pub const JSON_MIME: &str = "application/json";

/// One artifact: a named value in the state an agent reads or writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    /// The state key it lives at.
    pub name: String,
    /// `text/plain`, `application/json`, or another type (not validated).
    pub mime: String,
    /// What it is.
    pub description: String,
    /// For a JSON artifact, the JSON Schema it must match, if given.
    pub schema: Option<Value>,
}

impl Artifact {
    /// Whether it is JSON.
    pub fn is_json(&self) -> bool {
        self.mime == JSON_MIME
    }

    /// Whether it is text.
    pub fn is_text(&self) -> bool {
        self.mime == TEXT_MIME
    }
}

/// Declared artifacts (`+` adds). A composed agent checks its inputs before it calls its
/// model (each set in the state; a text input a string; a JSON input matching its schema)
/// and its answer after (a JSON output parsed and matched against its schema), then writes
/// each output to the state at its name. With one JSON output the whole answer is that
/// artifact; with several, the answer is an object holding each by name. A JSON output
/// makes the agent ask for JSON (`responseMimeType`, and `responseSchema` when one output
/// has a schema).
///
/// ```
/// use reel_compose::A;
///
/// let artifacts = A::text_input("source_document", "The document to analyze")
///     + A::json_output("analysis_report", "Structured analysis results")
///     + A::json_output("risk_assessment", "Risk scores and flags");
/// assert_eq!(artifacts.all_inputs().len(), 1);
/// assert_eq!(artifacts.all_outputs().len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Artifacts {
    inputs: Vec<Artifact>,
    outputs: Vec<Artifact>,
}

impl Artifacts {
    /// The inputs, in declaration order.
    pub fn all_inputs(&self) -> &[Artifact] {
        &self.inputs
    }

    /// The outputs, in declaration order.
    pub fn all_outputs(&self) -> &[Artifact] {
        &self.outputs
    }

    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty() && self.outputs.is_empty()
    }

    /// Gives the last declared artifact the JSON Schema `schema`.
    #[must_use]
    pub fn schema(mut self, schema: Value) -> Self {
        let last = if self.outputs.is_empty() {
            self.inputs.last_mut()
        } else {
            self.outputs.last_mut()
        };
        if let Some(artifact) = last {
            artifact.schema = Some(schema);
        }
        self
    }
}

impl Add for Artifacts {
    type Output = Artifacts;

    /// Both sets, `self`'s first.
    fn add(mut self, rhs: Artifacts) -> Artifacts {
        self.inputs.extend(rhs.inputs);
        self.outputs.extend(rhs.outputs);
        self
    }
}

fn artifact(name: &str, mime: &str, description: &str) -> Artifact {
    Artifact {
        name: name.to_owned(),
        mime: mime.to_owned(),
        description: description.to_owned(),
        schema: None,
    }
}

/// The `A::` namespace: artifact declarations ([`Artifacts`]).
#[derive(Debug, Clone, Copy)]
pub struct A;

impl A {
    /// An output artifact of type `mime`.
    pub fn output(name: &str, mime: &str, description: &str) -> Artifacts {
        Artifacts {
            inputs: Vec::new(),
            outputs: vec![artifact(name, mime, description)],
        }
    }

    /// An input artifact of type `mime`.
    pub fn input(name: &str, mime: &str, description: &str) -> Artifacts {
        Artifacts {
            inputs: vec![artifact(name, mime, description)],
            outputs: Vec::new(),
        }
    }

    /// A JSON output.
    pub fn json_output(name: &str, description: &str) -> Artifacts {
        A::output(name, JSON_MIME, description)
    }

    /// A JSON input.
    pub fn json_input(name: &str, description: &str) -> Artifacts {
        A::input(name, JSON_MIME, description)
    }

    /// A text output.
    pub fn text_output(name: &str, description: &str) -> Artifacts {
        A::output(name, TEXT_MIME, description)
    }

    /// A text input.
    pub fn text_input(name: &str, description: &str) -> Artifacts {
        A::input(name, TEXT_MIME, description)
    }
}

/// Checks `value` against `schema`; `Err` says where and what did not match.
pub(crate) fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    let validator = jsonschema::validator_for(schema)
        .map_err(|error| format!("its schema is not a valid JSON Schema: {error}"))?;
    match validator.iter_errors(value).next() {
        None => Ok(()),
        Some(error) => Err(format!(
            "does not match its schema at `{}`: {error}",
            error.instance_path()
        )),
    }
}
