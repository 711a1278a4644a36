//! 18 — artifacts (Walk): agents declare what they produce with `A::` and it is checked.
//! An extractor's answer must be JSON matching its schema (`A::json_output(..).schema(..)`):
//! a good answer is written to the state, a bad one is rejected with the error saying
//! where it failed, and nothing is kept. A summarizer produces text (`A::text_output`).
//! What the agents produced goes to an artifact store (real files): `A::publish` saves each
//! declared output as a new version, `A::save` saves a value of your own, `A::version`
//! says the latest version and `A::load` reads any version back.
//!
//! ```text
//! cargo run --example 18_artifacts                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 18_artifacts -- --live
//! GEMINI_API_KEY=… cargo run --example 18_artifacts -- --live --record artifacts.cassette.json
//! ```
//!
//! The store lives in a fresh temporary directory, removed at the end. The bundled
//! cassette was recorded with a scripted model standing in for Gemini
//! (`tests/it/cookbook/ex18_artifacts.rs`): its first answer for the second invoice is
//! deliberately bad (the total as text), to show the rejection.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::TextAgent;
use reel::compose::{A, AgentBuilder, ArtifactStore, Artifacts};
use serde_json::json;

/// The example's name: its cassette is `assets/cookbook/18_artifacts.cassette.json`.
pub const NAME: &str = "18_artifacts";
/// The invoices, as they arrive.
pub const INVOICES: [&str; 2] = [
    "Invoice 1041 from Nordlys AS: 3 lamps at 120 EUR each. Total 360 EUR.",
    "Invoice 1042 from Fjell Tools: 2 ladders at 95 EUR each. Total 190 EUR.",
];

const EXTRACTOR: &str =
    "Extract the invoice's number, supplier and total (a number, in euros) as JSON.";
const SUMMARIZER: &str = "Summarize the invoice in one sentence for the bookkeeper.";

fn invoice_artifact() -> Artifacts {
    A::json_output("invoice", "The invoice's number, supplier and total").schema(json!({
        "type": "object",
        "properties": {
            "number": {"type": "integer"},
            "supplier": {"type": "string"},
            "total": {"type": "number"}
        },
        "required": ["number", "supplier", "total"]
    }))
}

fn summary_artifact() -> Artifacts {
    A::text_output("summary", "One sentence for the bookkeeper")
}

/// The example: extract and summarize the first invoice and publish both; the second
/// invoice's extraction rejected, then extracted again and published as version 2.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let model = models.default_model()?;
    let extractor = AgentBuilder::new("extractor")
        .instruction(EXTRACTOR)
        .temperature(0.0)
        .artifacts(invoice_artifact())
        .build(model.clone());
    let summarizer = AgentBuilder::new("summarizer")
        .instruction(SUMMARIZER)
        .artifacts(summary_artifact())
        .build(model);

    let dir = std::env::temp_dir().join(format!("reel-cookbook-{NAME}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = ArtifactStore::open(&dir)?;
    let outcome = walk(&extractor, &summarizer, &store).await;
    std::fs::remove_dir_all(&dir)?;
    outcome
}

async fn walk(
    extractor: &impl TextAgent,
    summarizer: &impl TextAgent,
    store: &ArtifactStore,
) -> Result<String, Box<dyn Error>> {
    let mut out = String::new();

    out.push_str(&format!("invoice 1: {}\n", INVOICES[0]));
    let state = State::new();
    state.set("input", INVOICES[0]).await?;
    extractor.run(&state).await?;
    summarizer.run(&state).await?;
    out.push_str(&format!(
        "  extractor  | invoice (application/json, schema checked): {}\n",
        state.get_raw("invoice").unwrap_or_default()
    ));
    out.push_str(&format!(
        "  summarizer | summary (text/plain): {}\n",
        state.get::<String>("summary").unwrap_or_default()
    ));
    for (name, version) in A::publish(store, &(invoice_artifact() + summary_artifact()), &state)? {
        out.push_str(&format!("  A::publish | {name} v{version}\n"));
    }

    out.push_str(&format!("invoice 2: {}\n", INVOICES[1]));
    let state = State::new();
    state.set("input", INVOICES[1]).await?;
    match extractor.run(&state).await {
        Ok(answer) => out.push_str(&format!("  extractor  | accepted: {answer}\n")),
        Err(error) => {
            out.push_str(&format!("  extractor  | rejected: {error}\n"));
            out.push_str(&format!(
                "               the state's `invoice` is {}\n",
                state
                    .get_raw("invoice")
                    .map_or("still unset".to_owned(), |v| v.to_string())
            ));
        }
    }
    // Asked again, the model gets it right.
    extractor.run(&state).await?;
    out.push_str(&format!(
        "  extractor  | asked again: {}\n",
        state.get_raw("invoice").unwrap_or_default()
    ));
    for (name, version) in A::publish(store, &invoice_artifact(), &state)? {
        out.push_str(&format!("  A::publish | {name} v{version}\n"));
    }
    let version = A::save(store, "invoice_batch", json!({"invoices": [1041, 1042]}))?;
    out.push_str(&format!("  A::save    | invoice_batch v{version}\n"));

    out.push_str("the store\n");
    for name in ["invoice", "summary", "invoice_batch"] {
        let latest = A::version(store, name)?;
        out.push_str(&format!(
            "  A::version | {name}: {}\n",
            latest.map_or("none".to_owned(), |v| format!("v{v}"))
        ));
    }
    for version in [1, 2] {
        let stored = A::load(store, "invoice", Some(version))?;
        out.push_str(&format!(
            "  A::load    | invoice v{} ({}): {}\n",
            stored.version, stored.mime, stored.value
        ));
    }
    match A::load(store, "invoice", Some(3)) {
        Ok(stored) => out.push_str(&format!("  A::load    | invoice v3: {}\n", stored.value)),
        Err(error) => out.push_str(&format!("  A::load    | invoice v3: {error}\n")),
    }
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
