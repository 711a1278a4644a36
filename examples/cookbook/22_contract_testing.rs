//! 22 — contract testing (Run): an invoice pipeline whose extractor must answer JSON
//! matching a schema (`A::json_output(..).schema(..)`: asked of the model as
//! `responseSchema` and checked on the answer), and whose wiring is checked before anything
//! runs. A deliberately mis-wired version is rejected by `check_contracts` with one typed
//! violation per mistake (a read of a key nothing writes, two parallel branches writing one
//! key, a branch reading what its sibling writes at the same time, a write nothing reads)
//! and `diagnose_with` shows where each key flows; the fixed version passes and runs; an answer
//! that breaks the schema is refused with where and why.
//!
//! ```text
//! cargo run --example 22_contract_testing                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 22_contract_testing -- --live
//! GEMINI_API_KEY=… cargo run --example 22_contract_testing -- --live --record contracts.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/22_contract_testing.cassette.json`), offline; the script it was
//! recorded from is in `tests/it/cookbook/ex22_contract_testing.rs`.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::TextAgent;
use reel::compose::{A, AgentBuilder, Composable, P, check_contracts_with, diagnose_with};
use serde_json::{Value, json};

/// The example's name: its cassette is `assets/cookbook/22_contract_testing.cassette.json`.
pub const NAME: &str = "22_contract_testing";
/// The state key the caller sets before the pipeline runs: the invoice as text.
pub const INVOICE_TEXT: &str = "invoice_text";
/// The invoice the pipeline reads.
pub const INVOICE: &str =
    "ACME Tools, invoice 2026-118: 3 hammers at 12.50 EUR, VAT 20%, total 45.00 EUR";
/// An invoice whose extraction the model gets wrong (the total as words).
pub const SMUDGED: &str = "Brightline Ltd, invoice 77: consulting, total twelve hundred GBP";

/// The JSON Schema the extractor's answer must match.
pub fn invoice_schema() -> Value {
    json!({
        "type": "object",
        "required": ["vendor", "net", "vat_rate", "total", "currency"],
        "properties": {
            "vendor": {"type": "string"},
            "net": {"type": "number"},
            "vat_rate": {"type": "number"},
            "total": {"type": "number"},
            "currency": {"enum": ["EUR", "GBP", "USD"]}
        },
        "additionalProperties": false
    })
}

/// The extractor: the invoice text in (a text input artifact), the invoice out (a JSON
/// output artifact with its schema).
pub fn extractor() -> AgentBuilder {
    AgentBuilder::new("extractor")
        .instruction(P::task(
            "Extract the invoice's vendor, net amount, VAT rate, total and currency",
        ))
        .temperature(0.0)
        .artifacts(
            A::text_input(INVOICE_TEXT, "The invoice as text")
                + A::json_output("invoice", "The invoice's fields").schema(invoice_schema()),
        )
}

fn checker(name: &str, task: &str) -> AgentBuilder {
    AgentBuilder::new(name)
        .instruction(P::task(task) + P::with_state(&["invoice"]))
        .temperature(0.0)
}

/// The pipeline wired wrong, four ways: the arithmetic checker reads `invoice_json` (the
/// extractor writes `invoice`), both checkers write `check` at once, the tax checker reads
/// `check` while the arithmetic checker writes it, and the extractor declares a write of
/// `raw_lines` that nothing reads.
pub fn miswired() -> Composable {
    extractor().writes("raw_lines")
        >> (checker("arithmetic", "Check that net plus VAT is the total")
            .reads("invoice_json")
            .output_key("check")
            | checker("tax", "Check the VAT rate for the vendor's country")
                .reads("check")
                .output_key("check"))
        >> AgentBuilder::new("summary")
            .reads(["check"])
            .output_key("summary")
}

/// The same pipeline wired right.
pub fn fixed() -> Composable {
    extractor()
        >> (checker("arithmetic", "Check that net plus VAT is the total")
            .output_key("arithmetic_check")
            | checker("tax", "Check the VAT rate for the vendor's country").output_key("tax_check"))
        >> AgentBuilder::new("summary")
            .instruction(
                P::task("Summarise the invoice and both checks in one line")
                    + P::with_state(&["arithmetic_check", "tax_check"]),
            )
            .output_key("summary")
}

async fn invoice_state(text: &str) -> Result<State, Box<dyn Error>> {
    let state = State::new();
    state.set(INVOICE_TEXT, text).await?;
    state.set("input", text).await?;
    Ok(state)
}

/// The example: the mis-wired pipeline's violations, the fixed one's diagnosis and run, and
/// a schema-breaking answer refused, as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let given = [INVOICE_TEXT];
    let mut out = String::from("== mis-wired: check_contracts ==\n");
    for violation in check_contracts_with(&miswired(), &given) {
        let level = if violation.is_error() {
            "error"
        } else {
            "warning"
        };
        out.push_str(&format!("{level}: {violation}\n  {violation:?}\n"));
    }
    out.push_str(&format!(
        "\n== fixed: diagnose_with({INVOICE_TEXT} given) ==\n"
    ));
    let fixed = fixed();
    out.push_str(&diagnose_with(&fixed, &given));

    out.push_str("\n== fixed: run ==\n");
    let model = models.default_model()?;
    let state = invoice_state(INVOICE).await?;
    fixed.compile(model.clone()).run(&state).await?;
    let invoice = state.get_raw("invoice").unwrap_or(Value::Null);
    out.push_str(&format!("invoice (matches its schema) = {invoice}\n"));
    for key in ["arithmetic_check", "tax_check", "summary"] {
        let value = state.get::<String>(key).unwrap_or_default();
        out.push_str(&format!("{key} = {value}\n"));
    }

    out.push_str("\n== a schema-breaking answer ==\n");
    let state = invoice_state(SMUDGED).await?;
    match extractor().build(model).run(&state).await {
        Ok(answer) => out.push_str(&format!("accepted (unexpectedly): {answer}\n")),
        Err(error) => out.push_str(&format!("refused: {error}\n")),
    }
    out.push_str(&format!(
        "invoice key after the refusal: {}\n",
        state
            .get_raw("invoice")
            .map_or("not set".to_owned(), |v| v.to_string())
    ));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
