//! A trace's cost: its tokens × a price table the user supplies.
//!
//! ```json
//! {"currency": "USD",
//!  "models": {"gemini-2.5-flash": {"promptPerMillion": 0.30, "completionPerMillion": 2.50}}}
//! ```
//!
//! Each answer is priced at its request's model (the trace's model when the request names
//! none): prompt tokens at the prompt price, completion and thinking tokens at the
//! completion price (thinking is billed as output). An answer whose model the table does
//! not hold, or that reported no usage, is counted as unpriced: the figure is then a lower
//! bound, and says so.

use std::collections::BTreeMap;
use std::path::Path;

use reel_recorder::trace::AgentTrace;
use serde::{Deserialize, Serialize};

use crate::error::{EvalError, without_position};

/// A model's prices, per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelPrice {
    /// Per million prompt tokens.
    pub prompt_per_million: f64,
    /// Per million completion (and thinking) tokens.
    pub completion_per_million: f64,
}

/// Prices per model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriceTable {
    /// The currency the prices are in (`USD`).
    pub currency: String,
    /// Prices by model name (`gemini-2.5-flash`; a `models/` prefix is ignored when
    /// looking up).
    pub models: BTreeMap<String, ModelPrice>,
}

/// What a trace cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// The amount, over the priced answers (rounded to 1e-9).
    pub amount: f64,
    /// The table's currency.
    pub currency: String,
    /// Answers priced.
    pub priced_answers: u64,
    /// Answers not priced: no usage reported, or a model the table does not hold.
    pub unpriced_answers: u64,
    /// The models the table does not hold, in name order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
}

impl Cost {
    /// `0.000123 USD`, with `(at least: 2 answers unpriced)` when some were not priced.
    pub fn to_text(&self) -> String {
        let mut text = format!("{:.6} {}", self.amount, self.currency);
        if self.unpriced_answers > 0 {
            text.push_str(&format!(
                " (at least: {} unpriced{})",
                if self.unpriced_answers == 1 {
                    "1 answer".to_owned()
                } else {
                    format!("{} answers", self.unpriced_answers)
                },
                if self.unpriced_models.is_empty() {
                    String::new()
                } else {
                    format!(", no price for {}", self.unpriced_models.join(", "))
                }
            ));
        }
        text
    }
}

impl PriceTable {
    /// Reads a price table file.
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<PriceTable, EvalError> {
        let path = path.as_ref();
        let problem = |message: String| EvalError::Prices {
            path: path.to_path_buf(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| problem(e.to_string()))?;
        let mut reader = serde_json::Deserializer::from_str(&text);
        serde_path_to_error::deserialize(&mut reader).map_err(|e| {
            let at = e.path().to_string();
            let message = without_position(&e.inner().to_string());
            if at == "." {
                problem(message)
            } else {
                problem(format!("{message} (at `{at}`)"))
            }
        })
    }

    /// The price of `model`.
    pub fn price(&self, model: &str) -> Option<ModelPrice> {
        let short = model.rsplit('/').next().unwrap_or(model);
        self.models
            .get(model)
            .or_else(|| self.models.get(short))
            .copied()
    }

    /// What `trace` cost (see the module docs).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use reel_eval::{ModelPrice, PriceTable};
    /// use reel_recorder::trace::*;
    ///
    /// let mut trace = AgentTrace::new("t", "a", Timestamp::from_epoch_ms(0));
    /// trace.model = Some("m".into());
    /// trace.entries.push(TraceEntry::Request(TraceRequest::default()));
    /// trace.entries.push(TraceEntry::Response(TraceResponse {
    ///     token_usage: Some(TokenUsage { prompt: Some(1_000), completion: Some(200), ..Default::default() }),
    ///     ..Default::default()
    /// }));
    /// let prices = PriceTable {
    ///     currency: "USD".into(),
    ///     models: BTreeMap::from([("m".into(), ModelPrice { prompt_per_million: 1.0, completion_per_million: 10.0 })]),
    /// };
    /// let cost = prices.cost(&trace);
    /// assert_eq!(cost.amount, 0.003); // 1000 × 1/1e6 + 200 × 10/1e6
    /// assert_eq!(cost.unpriced_answers, 0);
    /// ```
    pub fn cost(&self, trace: &AgentTrace) -> Cost {
        let mut amount = 0.0;
        let mut priced = 0;
        let mut unpriced = 0;
        let mut unknown: Vec<String> = Vec::new();
        for turn in trace.turns() {
            let Some(response) = turn.response else {
                continue;
            };
            let Some(usage) = response.token_usage else {
                unpriced += 1;
                continue;
            };
            let model = trace.model_of(turn.request).unwrap_or(&trace.agent_name);
            let Some(price) = self.price(model) else {
                unpriced += 1;
                if !unknown.iter().any(|m| m == model) {
                    unknown.push(model.to_owned());
                }
                continue;
            };
            let prompt = usage.prompt.unwrap_or(0) as f64;
            let completion = (usage.completion.unwrap_or(0) + usage.thoughts.unwrap_or(0)) as f64;
            amount += (prompt * price.prompt_per_million
                + completion * price.completion_per_million)
                / 1_000_000.0;
            priced += 1;
        }
        unknown.sort();
        Cost {
            amount: (amount * 1e9).round() / 1e9,
            currency: self.currency.clone(),
            priced_answers: priced,
            unpriced_answers: unpriced,
            unpriced_models: unknown,
        }
    }
}
