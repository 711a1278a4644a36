//! 34 — tool policies (Fly): a live session's tools wrapped in `T::` policies — a cached
//! exchange rate (`T::cached`: the second call with the same arguments never runs the
//! tool), a slow broker limited in time (`T::timeout`: the model gets the timeout), a
//! transfer wrapped in two policies at once (`T::timeout(T::confirm(..))`) and asked of a
//! `ConfirmationProvider` that refuses one transfer and approves the next, and the same
//! transfer a flow's commit tool (`Flow::commit`: at most once, refused until the rate was
//! looked up) — so the model's third transfer is refused.
//!
//! ```text
//! cargo run --example 34_tool_policies                    # the bundled tape, offline
//! GEMINI_API_KEY=… cargo run --example 34_tool_policies -- --live
//! GEMINI_API_KEY=… cargo run --example 34_tool_policies -- --live --record tools.wire.jsonl
//! ```
//!
//! Offline (the default), the model is the bundled tape
//! (`assets/cookbook/34_tool_policies.wire.jsonl`) served on loopback by the tape server;
//! the tape is then replayed through the session tree with nothing listening (the
//! confirmations answered from the recording: nobody is asked), and the example prints
//! the verdict. The tape was recorded by reel from this very session talking to a scripted
//! model (`tests/it/cookbook/ex34_tool_policies.rs` holds the script and regenerates the
//! tape byte for byte). With `--live` the model decides which tools to call, so the
//! session may go differently.

#[allow(dead_code)] // the cookbook's shared part; a live example uses its `Target`
#[path = "support/cookbook.rs"]
pub mod cookbook;
#[allow(dead_code)] // the tests use parts a run from the command line does not
#[path = "support/live.rs"]
pub mod live;

use std::error::Error;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cookbook::Target;
use reel::compose::T;
use reel::flow::{Flow, Guard};
use reel::fluent::{Live, LiveBuilder};
use reel::protocol::ApiEndpoint;
use reel::recorder::WireEntry;
use reel::tools::{ConfirmationRequest, ToolConfirmation};
use serde_json::json;

/// The example's name: its tape is `assets/cookbook/34_tool_policies.wire.jsonl`.
pub const NAME: &str = "34_tool_policies";
/// The Live model.
pub const MODEL: &str = "gemini-live-2.5-flash-preview";
/// The largest transfer the confirmation provider approves, in dollars.
pub const LIMIT_USD: u64 = 1_000;
/// How long the broker may take.
pub const BROKER_LIMIT: Duration = Duration::from_millis(300);

/// What the user types, turn by turn.
pub const USER: [&str; 6] = [
    "What's the dollar to euro rate today?",
    "Say the euro rate again, please.",
    "Get me a quote from the broker.",
    "Move $5,000 to my savings.",
    "Then move $500.",
    "Move another $500, please.",
];

/// How often each tool's own code ran, and what the confirmation provider was asked.
#[derive(Debug, Default)]
pub struct Ledger {
    rate_runs: AtomicUsize,
    broker_runs: AtomicUsize,
    transfer_runs: AtomicUsize,
    asked: Mutex<Vec<String>>,
}

impl Ledger {
    fn ask(&self, line: String) {
        // A poisoned list only means a panicking thread held it; the lines are whole.
        self.asked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(line);
    }

    /// What the confirmation provider was asked and answered, in order.
    pub fn asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// How often each tool's own code ran: rate, broker, transfer.
    pub fn runs(&self) -> [usize; 3] {
        [
            self.rate_runs.load(Ordering::SeqCst),
            self.broker_runs.load(Ordering::SeqCst),
            self.transfer_runs.load(Ordering::SeqCst),
        ]
    }
}

/// The flow: one step allowing the three tools (active all session), and `transfer` its commit tool — at most
/// once, refused until `get_rate` ran.
pub fn transfer_flow() -> Flow {
    Flow::new()
        .step("assist")
        .allow(["get_rate", "broker_quote", "transfer"])
        // Done when the user says goodbye: never, in this session.
        .done(Guard::is_true("said_goodbye"))
        .commit("transfer", Guard::called_ok("get_rate"))
}

/// The session: three tools under `T::` policies, the confirmation provider, the flow.
pub fn assistant(ledger: &Arc<Ledger>) -> Result<LiveBuilder, Box<dyn Error>> {
    let (rate, broker, transfer, provider) = (
        ledger.clone(),
        ledger.clone(),
        ledger.clone(),
        ledger.clone(),
    );
    let rates = T::cached(T::simple(
        "get_rate",
        "Today's exchange rate from US dollars to `currency` (e.g. EUR).",
        move |args| {
            rate.rate_runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok(json!({"currency": args["currency"], "rate": 0.92})) }
        },
    ));
    let quote = T::timeout(
        T::simple("broker_quote", "Asks the broker for a quote.", move |_| {
            broker.broker_runs.fetch_add(1, Ordering::SeqCst);
            async {
                // The broker is slow today: far past the limit.
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(json!({"rate": 0.91}))
            }
        }),
        BROKER_LIMIT,
    );
    let transfers = T::timeout(
        T::confirm(
            T::simple(
                "transfer",
                "Moves `amount_usd` dollars to the user's savings account.",
                move |args| {
                    transfer.transfer_runs.fetch_add(1, Ordering::SeqCst);
                    async move { Ok(json!({"moved_usd": args["amount_usd"], "to": "savings"})) }
                },
            ),
            "Move this money to savings?",
        ),
        Duration::from_secs(10),
    );
    let tools = (rates | quote | transfers).dispatcher()?;
    Ok(Live::builder()
        .model(MODEL)
        .text_only()
        .instruction("You are a careful banking assistant. Use the tools; never guess.")
        .tools(tools)
        .confirmation_provider(Arc::new(move |request: ConfirmationRequest| {
            let ledger = provider.clone();
            async move {
                let amount = request.args["amount_usd"].as_u64().unwrap_or(u64::MAX);
                let answer = if amount <= LIMIT_USD {
                    ToolConfirmation::Confirmed
                } else {
                    ToolConfirmation::denied(format!("over the ${LIMIT_USD} limit"))
                };
                let said = match &answer {
                    ToolConfirmation::Confirmed => "yes".to_owned(),
                    ToolConfirmation::Denied { reason } => format!("no, {reason}"),
                };
                ledger.ask(format!(
                    "{}({}) \"{}\" → {said}",
                    request.tool, request.args, request.message
                ));
                answer
            }
        }))
        .govern(transfer_flow()))
}

/// One session against `endpoint` saying the user's lines: its story
/// ([`live::tool_session`]) and wire log (recorded to `wire_file` when given).
pub async fn session(
    agent: LiveBuilder,
    endpoint: ApiEndpoint,
    wire_file: Option<&Path>,
) -> Result<(Vec<String>, Vec<WireEntry>), Box<dyn Error>> {
    live::tool_session::session(agent, endpoint, wire_file, &USER).await
}

/// What the example prints for a session's `story` and `ledger`.
pub fn report(story: &[String], ledger: &Ledger) -> String {
    let mut out = String::from("── the session ──\n");
    for line in story {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str("── the confirmation provider was asked ──\n");
    for line in ledger.asked() {
        out.push_str(&format!("  {line}\n"));
    }
    let [rate, broker, transfer] = ledger.runs();
    out.push_str("── each tool's own code ran ──\n");
    out.push_str(&format!(
        "  get_rate: {rate} (T::cached answered the same arguments again)\n"
    ));
    out.push_str(&format!(
        "  broker_quote: {broker} (T::timeout stopped it after {} ms)\n",
        BROKER_LIMIT.as_millis()
    ));
    out.push_str(&format!(
        "  transfer: {transfer} (T::confirm refused one; the flow's commit refused a second run)\n"
    ));
    out
}

/// The example, as it prints.
pub async fn run(target: Target) -> Result<String, Box<dyn Error>> {
    let ledger = Arc::new(Ledger::default());
    let (story, mut out) = match &target {
        Target::Bundled => {
            let tape = live::read_tape(&live::bundled(&format!("{NAME}.wire.jsonl")))?;
            let mut server = live::serve(vec![(NAME.to_owned(), tape)]).await?;
            let endpoint = live::endpoint_of(&server);
            let session = session(assistant(&ledger)?, endpoint, None).await;
            server.shutdown().await;
            (session?.0, String::new())
        }
        Target::Live { record } => {
            let endpoint = ApiEndpoint::from_env()?;
            let session = session(assistant(&ledger)?, endpoint, record.as_deref()).await?;
            (session.0, String::new())
        }
    };
    out.push_str(&report(&story, &ledger));
    if target == Target::Bundled {
        let replayed = assistant(&Arc::new(Ledger::default()))?
            .replay(live::bundled(&format!("{NAME}.wire.jsonl")))
            .await?
            .finish()
            .await;
        out.push_str("── the bundled tape replayed offline through the session tree ──\n");
        out.push_str(&format!("  {}\n", live::verdict(&replayed)));
    }
    Ok(out)
}

fn main() -> ExitCode {
    live::main(NAME, run)
}
