//! 16 — context engineering (Walk): one support agent over a long conversation held in the
//! state (`conversation`: both roles, two tool rounds, a user turn the client sent twice, a
//! digression), shown through each `C::` policy — `C::window`, `C::user_only`,
//! `C::model_only`, `C::exclude_tools`, `C::dedup`, `C::priority` — printing the turns each
//! keeps of what the agent would send. Then the agent runs with the chain
//! `C::dedup() + C::summarize(3)`: the turns before the last three are replaced by a summary
//! that the agent's own model writes in a real model call (recorded on the cassette with
//! the agent's call, and answered from it offline), and the agent answers the customer.
//!
//! `C::priority(max, markers)` keeps at most `max` turns, those holding one of the markers
//! (ignoring case; a tool turn's name, arguments and result count) first, most recent
//! first, then the most recent others; the seed names it without defining it, so this is
//! reel's meaning (decision 0070).
//!
//! ```text
//! cargo run --example 16_context_engineering                  # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 16_context_engineering -- --live
//! GEMINI_API_KEY=… cargo run --example 16_context_engineering -- --live --record context.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/16_context_engineering.cassette.json`), offline; the script it was
//! recorded from is in `tests/it/cookbook/ex16_context_engineering.rs`.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use cookbook::Models;
use futures_util::future::BoxFuture;
use reel::actors::state::State;
use reel::agents::TextAgent;
use reel::compose::{
    AgentBuilder, C, ContextPolicy, HISTORY_KEY, ProcessorError, RequestProcessor,
    SUMMARY_INSTRUCTION, diagnose_with, transcript_line,
};
use reel::llm::{BaseLlm, LlmRequest};
use reel::protocol::{Content, FunctionCall, FunctionResponse, Part};
use serde_json::{Value, json};

/// The example's name: its cassette is `assets/cookbook/16_context_engineering.cassette.json`.
pub const NAME: &str = "16_context_engineering";
/// The customer's new message: the agent's input.
pub const INPUT: &str = "OK, let's do the express shipping. Charge the card on file.";

const INSTRUCTION: &str = "You are the support agent of a furniture shop. Answer the \
customer's last message in one or two sentences, using what the conversation says.";

fn call(name: &str, args: Value) -> Content {
    Content::new(
        "model",
        vec![Part {
            function_call: Some(FunctionCall {
                id: Some(format!("{name}-1")),
                name: Some(name.to_owned()),
                args: Some(args.into()),
                ..FunctionCall::default()
            }),
            ..Part::default()
        }],
    )
}

fn result(name: &str, response: Value) -> Content {
    Content::new(
        "user",
        vec![Part {
            function_response: Some(FunctionResponse::new(format!("{name}-1"), name, response)),
            ..Part::default()
        }],
    )
}

/// The conversation so far, oldest first: 13 turns.
pub fn conversation() -> Vec<Content> {
    let moving = "That's too late, I move house on 2 December.";
    vec![
        Content::user_text("Hi, where is my standing desk? Order A-1042."),
        call("get_order", json!({"order_id": "A-1042"})),
        result(
            "get_order",
            json!({"status": "delayed", "carrier": "DHL", "eta": "2026-12-04"}),
        ),
        Content::model_text("Order A-1042 is with DHL and delayed: it now arrives on 4 December."),
        Content::user_text(moving),
        // The customer's app sent the same message twice.
        Content::user_text(moving),
        Content::model_text("Sorry about that. I can re-ship it express or refund it."),
        Content::user_text("What would express cost?"),
        call("quote_express", json!({"order_id": "A-1042"})),
        result(
            "quote_express",
            json!({"price_eur": 25, "arrives": "2026-12-01"}),
        ),
        Content::model_text("Express costs 25 EUR and arrives on 1 December."),
        Content::user_text("By the way, do you sell monitor arms?"),
        Content::model_text("Yes, from 39 EUR."),
    ]
}

/// The policies shown one by one, in order.
pub fn policies() -> Vec<ContextPolicy> {
    vec![
        C::window(4),
        C::user_only(),
        C::model_only(),
        C::exclude_tools(),
        C::dedup(),
        C::priority(6, &["A-1042"]),
    ]
}

/// The chain the agent runs with: duplicates out, then everything before the last three
/// turns summarized by the agent's model.
pub fn chain() -> ContextPolicy {
    C::dedup() + C::summarize(3)
}

/// The support agent, its history shaped by `context`.
pub fn support(context: ContextPolicy) -> AgentBuilder {
    AgentBuilder::new("support")
        .instruction(INSTRUCTION)
        .temperature(0.2)
        .context(context)
}

/// Keeps a copy of every request the agent's model is sent (its summary call's too) and
/// passes it on unchanged.
#[derive(Clone, Default)]
struct Sent(Arc<Mutex<Vec<LlmRequest>>>);

impl Sent {
    fn requests(&self) -> Vec<LlmRequest> {
        // A poisoned list only means a panicking thread held it; the requests are whole.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

impl RequestProcessor for Sent {
    fn name(&self) -> &str {
        "sent"
    }

    fn process_request(
        &self,
        request: LlmRequest,
    ) -> BoxFuture<'_, Result<LlmRequest, ProcessorError>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(request.clone());
        Box::pin(async move { Ok(request) })
    }
}

/// `kept` as lines `#N line`, N the turn's number in `history` (from 1): each kept turn is
/// matched to the next equal turn of `history`, as every policy shown keeps turns in
/// order.
fn numbered(history: &[Content], kept: &[Content]) -> Vec<String> {
    let mut from = 0;
    kept.iter()
        .map(|turn| {
            let at = history[from..]
                .iter()
                .position(|candidate| candidate == turn)
                .map(|offset| from + offset);
            match at {
                Some(at) => {
                    from = at + 1;
                    format!("#{:<2} {}", at + 1, transcript_line(turn))
                }
                None => format!("    {}", transcript_line(turn)),
            }
        })
        .collect()
}

/// The turns a request sends before its input turn.
fn history_sent(request: &LlmRequest) -> &[Content] {
    let end = request.contents.len().saturating_sub(1);
    &request.contents[..end]
}

/// The example on `history`: each policy's selection, then the summarizing run.
pub async fn run_on(
    model: Arc<dyn BaseLlm>,
    history: Vec<Content>,
) -> Result<String, Box<dyn Error>> {
    let state = State::new();
    state.set(HISTORY_KEY, &history).await?;
    state.set("input", INPUT).await?;
    let mut out = format!("the conversation ({} turns):\n", history.len());
    for line in numbered(&history, &history) {
        out.push_str(&format!("  {line}\n"));
    }

    for policy in policies() {
        let request = support(policy.clone())
            .build(model.clone())
            .request(&state)?;
        let kept = history_sent(&request);
        out.push_str(&format!(
            "\n{} keeps {} of {}:\n",
            policy.label(),
            kept.len(),
            history.len()
        ));
        for line in numbered(&history, kept) {
            out.push_str(&format!("  {line}\n"));
        }
    }

    let chain = chain();
    let builder = support(chain.clone());
    out.push_str(&format!("\n{}, the agent's run:\n", chain.label()));
    out.push_str(
        &diagnose_with(&builder.clone().into(), &[HISTORY_KEY])
            .lines()
            .map(|line| format!("  diagnose | {line}\n"))
            .collect::<String>(),
    );
    let sent = Sent::default();
    let agent = builder.request_processor(sent.clone()).build(model);
    let answer = agent.run(&state).await?;
    let requests = sent.requests();
    out.push_str(&format!("  model calls: {}\n", requests.len()));
    for (number, request) in requests.iter().enumerate() {
        let kind = if request.system_instruction.as_deref() == Some(SUMMARY_INSTRUCTION) {
            "the summary call"
        } else {
            "the agent's call"
        };
        out.push_str(&format!(
            "  call {} ({kind}, {}) sent:\n",
            number + 1,
            request.model
        ));
        for turn in &request.contents {
            for (line_number, line) in transcript_line(turn).lines().enumerate() {
                let lead = if line_number == 0 { "    " } else { "      " };
                out.push_str(&format!("{lead}{line}\n"));
            }
        }
    }
    out.push_str(&format!("  answer: {answer}\n"));
    Ok(out)
}

/// The example: [`conversation`] through each policy and the summarizing chain, as it
/// prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    run_on(models.default_model()?, conversation()).await
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
