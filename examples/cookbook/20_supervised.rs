//! 20 — supervised (Walk): a person approves each reply before it is sent. The pipeline
//! `writer >> review_queue >> approval >> send` stops at the approval (an
//! `ApprovalTextAgent`) until the reviewer decides, then resumes: approved, the draft is
//! sent; rejected, the pipeline stops with who rejected it and why. A `TapTextAgent` puts
//! each draft on the reviewer's queue without changing the flow.
//!
//! ```text
//! cargo run --example 20_supervised                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 20_supervised -- --live      # you approve, on the terminal
//! GEMINI_API_KEY=… cargo run --example 20_supervised -- --live --record supervised.cassette.json
//! ```
//!
//! A person's decision is no byte of any model call, so it is recorded in the agents'
//! decisions log (`assets/cookbook/20_supervised.decisions.json`, beside the cassette);
//! offline the approval reads it back and asks nobody, so the replay decides as the person
//! did. With `--live` you are the reviewer: each draft is shown on standard error and your
//! answer read from standard input; with `--record` your decisions are saved beside the
//! cassette. The bundled cassette and decisions were recorded with a scripted model and a
//! scripted reviewer (`tests/it/cookbook/ex20_supervised.rs`).

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::future::Future;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::{
    AgentError, Approval, ApprovalTextAgent, Choice, FnTextAgent, LlmTextAgent,
    SequentialTextAgent, SharedAgent, TapTextAgent, TextAgent,
};

/// The example's name: its cassette is `assets/cookbook/20_supervised.cassette.json`.
pub const NAME: &str = "20_supervised";
/// The customers' messages, one pipeline run each.
pub const TICKETS: [&str; 2] = [
    "My order #4411 arrived with a cracked screen.",
    "Can you guarantee my refund arrives before Friday?",
];

const WRITER: &str = "You write short, polite replies to customer messages. Reply with the \
message only, two sentences at most.";

/// The example with the reviewer on the terminal (offline, nobody is asked: the recorded
/// decisions are read back).
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    run_with(models, ask_on_the_terminal).await
}

/// The example, asking `approver` about each draft.
pub async fn run_with<F, Fut>(models: Models, approver: F) -> Result<String, Box<dyn Error>>
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Approval> + Send + 'static,
{
    let decisions = models.decisions()?;
    let queue: Arc<Mutex<Vec<String>>> = Arc::default();
    let writer: SharedAgent = Arc::new(
        LlmTextAgent::new("writer", models.default_model()?)
            .instruction(WRITER)
            .temperature(0.2),
    );
    let review_queue: SharedAgent = Arc::new(TapTextAgent::new("review_queue", {
        let queue = Arc::clone(&queue);
        move |state: &State| {
            let draft = state.get::<String>("input").unwrap_or_default();
            // A poisoned queue only means a panicking thread held it; its drafts are whole.
            queue
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(draft);
        }
    }));
    let approval: SharedAgent =
        Arc::new(ApprovalTextAgent::new("approval", approver).decisions(decisions.clone()));
    let send: SharedAgent = Arc::new(FnTextAgent::new("send", |state: &State| {
        Ok(format!(
            "sent: {}",
            state.get::<String>("input").unwrap_or_default()
        ))
    }));
    let pipeline = SequentialTextAgent::new("reply", vec![writer, review_queue, approval, send]);

    let mut out = String::new();
    for (number, ticket) in TICKETS.iter().enumerate() {
        out.push_str(&format!("ticket {}: {ticket}\n", number + 1));
        let state = State::new();
        state.set("input", *ticket).await?;
        let outcome = pipeline.run(&state).await;
        let draft = state.get::<String>("output").unwrap_or_default();
        out.push_str(&format!("  writer       | {draft}\n"));
        let queued = queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len();
        out.push_str(&format!(
            "  review_queue | on the reviewer's queue ({queued} so far); the pipeline waits\n"
        ));
        if let Some(decision) = state.get_raw("approval:approval") {
            let verdict = if decision["approved"] == true {
                "approved"
            } else {
                "rejected"
            };
            out.push_str(&format!(
                "  approval     | {verdict} by {}: {}\n",
                decision["by"].as_str().unwrap_or_default(),
                decision["note"].as_str().unwrap_or_default()
            ));
        }
        match outcome {
            Ok(sent) => out.push_str(&format!("  send         | {sent}\n")),
            Err(error @ AgentError::Rejected { .. }) => {
                out.push_str(&format!("  stopped      | {error}\n"));
            }
            Err(error) => return Err(error.into()),
        }
    }
    out.push_str("decisions (the reviewer's, recorded; offline read back, nobody asked)\n");
    for decision in decisions.snapshot().decisions {
        if let Choice::Approval { approved, by, note } = decision.choice {
            out.push_str(&format!(
                "  {} approved={approved} by={by} note={note:?}\n",
                decision.agent
            ));
        }
    }
    models.keep_decisions(&decisions)?;
    Ok(out)
}

/// The reviewer on the terminal: the draft on standard error, the answer from standard
/// input (`y` approves; anything else rejects, the line being the reason).
async fn ask_on_the_terminal(draft: String) -> Approval {
    let answer = tokio::task::spawn_blocking(move || {
        let mut stderr = std::io::stderr();
        let _ = write!(
            stderr,
            "draft: {draft}\napprove? y, or the reason to reject: "
        );
        let _ = stderr.flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await;
    match answer {
        Ok(Ok(line)) if line.trim().eq_ignore_ascii_case("y") => {
            Approval::approve("you", "approved on the terminal")
        }
        Ok(Ok(line)) if !line.trim().is_empty() => Approval::reject("you", line.trim()),
        _ => Approval::reject("you", "no answer on the terminal"),
    }
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
