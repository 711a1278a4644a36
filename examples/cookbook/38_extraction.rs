//! 38 — extraction (Governed): deterministic recognizers fill the state and drive a flow's
//! guard, with no model in the control loop. A pizza order taken by voice (text here): an
//! `Extract::record("order")` reads the caller's own words at every turn boundary —
//! `integer_near` (how many), `one_of` (the size), `money` (the budget), `fuzzy` (the
//! name, misspelt by the transcript) and `yes_no` (the confirmation) — and writes each hit
//! to `derived:{field}`. The flow's `collect` step is done when
//! `captured([quantity, size, budget, name])` holds, `confirm` when `derived:confirmed` is
//! true, and only then is `place_order` allowed: the model's early try is refused by the
//! flow, its later one runs.
//!
//! ```text
//! cargo run --example 38_extraction                  # the bundled tape, on loopback
//! cargo run --example 38_extraction -- --replay      # replay the bundled recording offline
//! cargo run --example 38_extraction -- --speed 4     # … four times faster
//! GEMINI_API_KEY=… cargo run --example 38_extraction -- --live
//! GEMINI_API_KEY=… cargo run --example 38_extraction -- --live --record pizza.wire.jsonl
//! ```
//!
//! By default the model is the bundled tape (`assets/cookbook/38_extraction.wire.jsonl`,
//! recorded by reel from this very application against a scripted model that tries to
//! place the order first; `tests/it/cookbook/ex38_extraction.rs` holds the script),
//! played by the tape server on loopback: no network, no key. With `--replay` nothing
//! listens at all: the same agent replays the recording through its own tree, the
//! recognizers run again on the recorded transcript, and the replay says whether every
//! frame it sends — the refusal included — is the recorded one and lists what the
//! recognizers wrote, in journal order. With `--live` the same agent talks to the Gemini
//! Live API (the key from the environment; `--record PATH` records its wire log): the
//! model decides what to say and when to place the order, and the recognizers and the flow
//! govern it as they do offline.

#[allow(dead_code)] // the cookbook's shared part; this example parses `--live` with it
#[path = "support/cookbook.rs"]
pub mod cookbook;
#[allow(dead_code)] // the live examples' shared part; this example uses its `--live` parsing
#[path = "support/live.rs"]
pub mod live;
#[path = "../support/main_of.rs"]
mod main_of;
#[path = "../support/replayed_call.rs"]
pub mod replayed_call;
#[path = "../support/tape_server.rs"]
mod tape_server;

use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;

use live::Governed;
use live::turns::wait_for_turn;
use main_of::main_of;
use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::extract::{Extract, Recognizer, RecordExtractor};
use reel::flow::{Flow, Guard};
use reel::fluent::{GovernedHandle, Live, LiveBuilder};
use reel::protocol::{ApiEndpoint, SessionEvent};
use reel::recorder::{RecordError, WireEntry};
use reel::tools::{SimpleTool, ToolContext, ToolError};
use serde_json::{Value, json};
use tape_server::{endpoint_of, serve_tape};

pub use replayed_call::Target;

/// The example's name.
pub const NAME: &str = "38_extraction";
/// The bundled tape: this application's call, recorded against a scripted model.
pub const EXTRACTION_TAPE: &str = include_str!("../../assets/cookbook/38_extraction.wire.jsonl");

/// What the caller says; the model answers each line with one turn.
pub const CALLER_LINES: [&str; 5] = [
    "Hi, I'd like to order pizzas for the office.",
    "We want 3 large ones, and keep it under $40.",
    "It's Ada Lovlace.",
    "Yes, that's right.",
    "Great, go ahead.",
];

/// The record's fields, each with the recognizer that fills it (as the output names it).
pub const FIELDS: [(&str, &str); 5] = [
    ("quantity", "integer_near"),
    ("size", "one_of"),
    ("budget", "money"),
    ("name", "fuzzy"),
    ("confirmed", "yes_no"),
];

/// The order record: five fields, each filled by a CPU recognizer from the caller's words.
pub fn order_record() -> RecordExtractor {
    Extract::record("order")
        .field("quantity", Recognizer::integer_near(["want", "order"]))
        .field("size", Recognizer::one_of(["small", "medium", "large"]))
        .field("budget", Recognizer::money())
        .field("name", Recognizer::fuzzy(["Lovelace", "Babbage", "Hopper"]))
        .field("confirmed", Recognizer::yes_no())
        .build()
}

/// The flow: collect → confirm → place → done; `place_order` only while `place` is active.
pub fn order_flow() -> Flow {
    Flow::new()
        .step("collect")
        .posture("Ask how many pizzas, what size, the budget and the caller's name.")
        .done(Guard::captured([
            "derived:quantity",
            "derived:size",
            "derived:budget",
            "derived:name",
        ]))
        .step("confirm")
        .after("collect")
        .posture("Read the order back and ask the caller to confirm it.")
        .done(Guard::is_true("derived:confirmed"))
        .step("place")
        .after("confirm")
        .posture("Place the order.")
        .allow(["place_order"])
        .done(Guard::called_ok("place_order"))
        .step("done")
        .after("place")
        .terminal()
        .require(["done"])
}

async fn place_order(args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
    let order = json!({
        "quantity": args["quantity"],
        "size": args["size"],
        "name": args["name"],
        "reference": "P-0042",
    });
    ctx.state.set("placed", &order).map_err(|e| ctx.fail(e))?;
    Ok(json!({"placed": true, "reference": "P-0042"}))
}

/// The governed order taker: the record fills the state, the flow gates `place_order`.
pub fn order_agent() -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .instruction("You are Luca, who takes orders for Pizzeria Reel. Be brief.")
        .tool(SimpleTool::new(
            "place_order",
            "Places the order: quantity, size and the caller's name.",
            None,
            place_order,
        ))
        .extract_record(order_record())
        .govern(order_flow())
}

/// The record's fields the state holds now, as `(field, value)`.
fn derived(handle: &LiveHandle) -> Vec<(&'static str, Option<Value>)> {
    let state = handle.state();
    FIELDS
        .iter()
        .map(|(field, _)| (*field, state.get::<Value>(&format!("derived:{field}"))))
        .collect()
}

/// The caller's side: says each of [`CALLER_LINES`], waits for the model's turn, and
/// tells what happened — the refusals and tools, each recognizer's new hits (a field whose
/// value appeared or changed that turn), the steps completed — then the state at the end.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
) -> Result<String, Box<dyn Error>> {
    let mut out = String::new();
    let mut known = derived(handle);
    let mut completed = 0;
    for (turn, &line) in CALLER_LINES.iter().enumerate() {
        out.push_str(&format!("turn {}\n  caller: {line}\n", turn + 1));
        handle.send_text(line)?;
        let mut answer = String::new();
        let mut tools = Vec::new();
        let finished = wait_for_turn(events, |lane, event| {
            if lane != Lane::Control {
                return;
            }
            match event {
                LiveEvent::Session(SessionEvent::TextComplete(text)) => answer = text.clone(),
                LiveEvent::ToolFinished {
                    call_id,
                    name,
                    response,
                    ok,
                } => {
                    let shown = if *ok {
                        format!("ran: {response}")
                    } else {
                        format!(
                            "refused: {}",
                            response["error"].as_str().unwrap_or_default()
                        )
                    };
                    tools.push(format!("  tool {name} ({call_id}) {shown}\n"));
                }
                _ => {}
            }
        })
        .await?;
        if !finished {
            return Err("the session ended before the model finished its turn".into());
        }
        for tool in tools {
            out.push_str(&tool);
        }
        out.push_str(&format!("  agent: {answer}\n"));
        let now = derived(handle);
        let mut hits = Vec::new();
        for (((field, before), (_, after)), (_, recognizer)) in
            known.iter().zip(&now).zip(FIELDS.iter())
        {
            if after.is_some() && after != before {
                let value = after.as_ref().map(Value::to_string).unwrap_or_default();
                hits.push(format!("{field} = {value} ({recognizer})"));
            }
        }
        if hits.is_empty() {
            out.push_str("  recognized: nothing new\n");
        } else {
            out.push_str(&format!("  recognized: {}\n", hits.join(", ")));
        }
        known = now;
        let done: Vec<String> = handle.state().get("flow:done").unwrap_or_default();
        for step in done.iter().skip(completed) {
            out.push_str(&format!("  step {step} completed\n"));
        }
        completed = done.len();
    }
    out.push_str("state at the end:\n");
    let state = handle.state();
    let mut keys: Vec<String> = FIELDS
        .iter()
        .map(|(field, _)| format!("derived:{field}"))
        .collect();
    keys.extend(["placed", "flow:active", "flow:done"].map(str::to_owned));
    for key in keys {
        let value = state.get::<Value>(&key).unwrap_or(Value::Null);
        out.push_str(&format!("  {key} = {value}\n"));
    }
    if let Some(explanation) = handle.why_blocked() {
        out.push_str(&format!("flow complete: {}\n", explanation.complete));
    }
    Ok(out)
}

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    replayed_call::wire_entries(EXTRACTION_TAPE, "assets/cookbook/38_extraction.wire.jsonl")
}

/// One call: the agent connects, then the caller speaks.
pub async fn call(endpoint: ApiEndpoint) -> Result<String, Box<dyn Error>> {
    call_with(order_agent(), endpoint).await
}

/// The call against the Gemini Live API (`--live`), the key from the environment, its
/// wire log recorded to `record` if given.
pub async fn live_call(record: Option<PathBuf>) -> Result<String, Box<dyn Error>> {
    let endpoint = ApiEndpoint::from_env()?;
    let agent = match record {
        Some(path) => order_agent().record_wire(path),
        None => order_agent(),
    };
    call_with(agent, endpoint).await
}

/// One call of `agent`: it connects, then the caller speaks.
async fn call_with(agent: LiveBuilder, endpoint: ApiEndpoint) -> Result<String, Box<dyn Error>> {
    let mut events = agent.subscribe();
    let handle = agent.connect(endpoint).await?;
    let call = converse(&handle, &mut events).await;
    handle.disconnect().await;
    call
}

/// Runs `target` and returns what it prints: the call against the bundled tape, or the
/// offline replay (CLEAN, else an error) with what the recognizers and the flow wrote.
pub async fn run(target: Target) -> Result<String, Box<dyn Error>> {
    match target {
        Target::BundledTape { speed } => {
            let mut server = serve_tape(NAME, bundled_tape()?, speed).await?;
            let endpoint = endpoint_of(&server);
            let call = call(endpoint).await;
            server.shutdown().await;
            call
        }
        Target::Replay => {
            let outcome = order_agent().replay(bundled_tape()?).await?.finish().await;
            let replayed_call::Outcome::<()>::Replay { frames } = replayed_call::clean(&outcome)?
            else {
                return Err("a replay's outcome is a replay".into());
            };
            let mut out = String::from("the recognizers, run again on the recorded words:\n");
            for mutation in &outcome.journal {
                if mutation.key.starts_with("derived:") || mutation.key == "flow:done" {
                    out.push_str(&format!("  {} = {}\n", mutation.key, mutation.new));
                }
            }
            out.push_str(&format!(
                "replay CLEAN: {frames} frames sent, each the recorded one\n"
            ));
            Ok(out)
        }
    }
}

fn main() -> ExitCode {
    println!("{}", order_flow().to_mermaid());
    main_of(
        || live::governed_target(std::env::args().skip(1), replayed_call::target_from),
        |choice| async move {
            match choice {
                Governed::Offline(target) => run(target).await,
                Governed::Live { record } => live_call(record).await,
            }
        },
        |printed| print!("{printed}"),
    )
}
