//! `M::cost`: every model call's tokens priced from a table the user supplies, per model.
//!
//! The table is `reel-eval`'s [`PriceTable`] (the same file `reel eval --prices` reads):
//! prompt tokens at the prompt price, answer and thinking tokens at the completion price.
//! Each call is priced at its request's model, after `M::fallback_model` rewrote it, so a
//! fallback is charged at the fallback's price. No clock is read: a replay from a cassette
//! gives back the recorded usage and costs the same.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use reel_eval::PriceTable;
use reel_llm::{BaseLlm, LlmError, LlmRequest, LlmStream, LlmUsage};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change is one charge: a poisoned ledger is still whole.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the calls to one model cost.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCost {
    /// The model (the request's, `gemini-2.5-flash`).
    pub model: String,
    /// Calls answered.
    pub calls: u64,
    /// Prompt tokens over those calls.
    pub prompt_tokens: u64,
    /// Answer and thinking tokens over those calls (billed at the completion price).
    pub completion_tokens: u64,
    /// The amount, in the table's currency (rounded to 1e-9); `None` when the table holds
    /// no price for the model.
    pub amount: Option<f64>,
}

/// What the calls so far cost.
#[derive(Debug, Clone, PartialEq)]
pub struct CostReport {
    /// The table's currency.
    pub currency: String,
    /// Per model, in name order.
    pub models: Vec<ModelCost>,
    /// The priced models' amounts summed (rounded to 1e-9).
    pub total: f64,
    /// Calls answered with no usage reported (not counted anywhere else).
    pub without_usage: u64,
}

impl CostReport {
    /// `0.000123 USD`, with `(at least: …)` when a model has no price or a call reported
    /// no usage: the total is then a lower bound.
    pub fn total_text(&self) -> String {
        let mut text = format!("{:.6} {}", self.total, self.currency);
        let unpriced: Vec<&str> = self
            .models
            .iter()
            .filter(|m| m.amount.is_none())
            .map(|m| m.model.as_str())
            .collect();
        let mut gaps = Vec::new();
        if !unpriced.is_empty() {
            gaps.push(format!("no price for {}", unpriced.join(", ")));
        }
        if self.without_usage > 0 {
            let calls = if self.without_usage == 1 {
                "call"
            } else {
                "calls"
            };
            gaps.push(format!("{} {calls} without usage", self.without_usage));
        }
        if !gaps.is_empty() {
            text.push_str(&format!(" (at least: {})", gaps.join("; ")));
        }
        text
    }
}

#[derive(Default)]
struct Tally {
    per_model: BTreeMap<String, (u64, u64, u64)>,
    without_usage: u64,
}

/// Where `M::cost` charges each call: the price table and the tokens so far, per model.
/// Cheap to clone (clones share it); share one ledger between agents to cost a pipeline.
#[derive(Clone)]
pub struct CostLedger {
    prices: Arc<PriceTable>,
    tally: Arc<Mutex<Tally>>,
}

impl std::fmt::Debug for CostLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CostLedger")
            .field("currency", &self.prices.currency)
            .finish_non_exhaustive()
    }
}

/// `tokens` at `per_million`.
fn priced(tokens: u64, per_million: f64) -> f64 {
    // Token counts stay far below 2^53: the conversion is exact.
    tokens as f64 * per_million / 1_000_000.0
}

fn rounded(amount: f64) -> f64 {
    (amount * 1e9).round() / 1e9
}

impl CostLedger {
    /// An empty ledger pricing from `prices`.
    pub fn new(prices: PriceTable) -> Self {
        CostLedger {
            prices: Arc::new(prices),
            tally: Arc::default(),
        }
    }

    /// Charges one answered call of `model` with `usage`.
    fn charge(&self, model: &str, usage: Option<LlmUsage>) {
        let mut tally = lock(&self.tally);
        let Some(usage) = usage else {
            tally.without_usage += 1;
            return;
        };
        // Thinking is billed as output: what the total holds beyond the prompt.
        let completion = usage
            .response_tokens
            .max(usage.total_tokens.saturating_sub(usage.prompt_tokens));
        let entry = tally.per_model.entry(model.to_owned()).or_default();
        entry.0 += 1;
        entry.1 += usage.prompt_tokens;
        entry.2 += completion;
    }

    /// What the calls so far cost.
    pub fn report(&self) -> CostReport {
        let tally = lock(&self.tally);
        let models: Vec<ModelCost> = tally
            .per_model
            .iter()
            .map(
                |(model, &(calls, prompt_tokens, completion_tokens))| ModelCost {
                    model: model.clone(),
                    calls,
                    prompt_tokens,
                    completion_tokens,
                    amount: self.prices.price(model).map(|price| {
                        rounded(
                            priced(prompt_tokens, price.prompt_per_million)
                                + priced(completion_tokens, price.completion_per_million),
                        )
                    }),
                },
            )
            .collect();
        CostReport {
            currency: self.prices.currency.clone(),
            // Folded from +0.0: an empty `sum` of floats is -0.0.
            total: rounded(
                models
                    .iter()
                    .filter_map(|m| m.amount)
                    .fold(0.0, |a, b| a + b),
            ),
            models,
            without_usage: tally.without_usage,
        }
    }
}

/// A model whose answered calls are charged to a [`CostLedger`] at the request's model,
/// with the last usage the answer reported, when the answer has been read to its end.
pub(crate) struct CostLlm {
    inner: Arc<dyn BaseLlm>,
    ledger: CostLedger,
}

impl CostLlm {
    pub(crate) fn new(inner: Arc<dyn BaseLlm>, ledger: CostLedger) -> Self {
        CostLlm { inner, ledger }
    }
}

impl BaseLlm for CostLlm {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(async move {
            let model = request.model.clone();
            let stream = self.inner.generate_stream(request).await?;
            let usage: Arc<Mutex<Option<LlmUsage>>> = Arc::default();
            let seen = Arc::clone(&usage);
            let ledger = self.ledger.clone();
            let watched = stream.inspect(move |chunk| {
                if let Ok(chunk) = chunk
                    && chunk.usage.is_some()
                {
                    *lock(&seen) = chunk.usage;
                }
            });
            let charge = futures_util::stream::once(async move {
                ledger.charge(&model, lock(&usage).take());
                None
            })
            .filter_map(std::future::ready);
            Ok(Box::pin(watched.chain(charge)) as LlmStream)
        })
    }
}
