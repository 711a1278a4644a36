//! 21 — full algebra (Run): every operator (`>>`, `|`, `* n`, `* until`, `/`) and all six
//! namespaces (`S::` state, `C::` context, `T::` tools, `P::` prompts, `M::` middleware,
//! `A::` artifacts, and `G::` guards besides) in one agent tree that writes a release note.
//! The tree is checked and described before it runs (`diagnose`: its shape, where each
//! state key flows, its contracts), then run; every model call is audited (`M::audit`)
//! and counted (`M::metrics`).
//!
//! ```text
//! cargo run --example 21_full_algebra                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 21_full_algebra -- --live
//! GEMINI_API_KEY=… cargo run --example 21_full_algebra -- --live --record algebra.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/21_full_algebra.cassette.json`), offline; the script it was recorded
//! from is in `tests/it/cookbook/ex21_full_algebra.rs`. The `/` step asks
//! `gemini-2.5-pro` first: in the recording that call failed (the script made it fail), so
//! the cassette holds no answer for it and the replay falls back exactly as the recording
//! did. The tool `release_facts` runs again in the replay (its answer is part of the next
//! recorded request, so a changed tool would be a cassette miss).

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use cookbook::Models;
use reel::actors::state::State;
use reel::compose::{
    A, AgentBuilder, AuditLog, C, Composable, ContextPolicy, G, M, Metrics, P, S, T, diagnose,
    until_state,
};
use reel::protocol::Content;
use serde_json::{Value, json};

/// The example's name: its cassette is `assets/cookbook/21_full_algebra.cassette.json`.
pub const NAME: &str = "21_full_algebra";
/// The change the release note is about.
pub const CHANGE: &str = "reel 0.2: every cookbook example runs offline from a bundled cassette";
/// The model the polishing step asks first (the `/` operator's primary).
pub const PRIMARY: &str = "gemini-2.5-pro";

/// The JSON Schema the packaged note must match (`A::json_output(..).schema(..)`).
pub fn note_schema() -> Value {
    json!({
        "type": "object",
        "required": ["headline", "body"],
        "properties": {
            "headline": {"type": "string", "maxLength": 80},
            "body": {"type": "string"}
        },
        "additionalProperties": false
    })
}

/// The conversation so far (the `C::` policies of the writer keep only its last user turn).
fn conversation() -> Value {
    let turns = vec![
        Content::user_text("Keep release notes short."),
        Content::model_text("Understood: short notes."),
        Content::user_text("Lead with what the reader can do now."),
    ];
    // Serializing protocol contents (strings in objects) cannot fail.
    serde_json::to_value(turns).unwrap_or_default()
}

/// The writer's context policy: of the conversation so far, only the last user turn.
pub fn writer_context() -> ContextPolicy {
    C::user_only() + C::window(1)
}

/// The tree. `audit` and `metrics` are shared by every agent in it; `facts_asked` records
/// each call of the `release_facts` tool.
pub fn tree(
    audit: &AuditLog,
    metrics: &Metrics,
    facts_asked: Arc<Mutex<Vec<String>>>,
) -> Composable {
    let observed = || M::audit(audit) | M::metrics(metrics);
    let facts = T::simple(
        "release_facts",
        "The facts about a feature of the release, by its `feature` argument",
        move |args: Value| {
            let asked = facts_asked.clone();
            async move {
                let feature = args["feature"].as_str().unwrap_or_default().to_owned();
                // A poisoned list only means a panicking thread held it; the list is whole.
                asked
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .push(feature.clone());
                Ok(json!({"feature": feature, "examples": 40, "offline": true, "keyNeeded": false}))
            }
        },
    );
    let researcher = AgentBuilder::new("researcher")
        .instruction(
            P::role("a release researcher")
                + P::task("Look the change up with release_facts and list its facts, one per line")
                + P::with_state(&["audience"]),
        )
        .tools(facts)
        .temperature(0.2)
        .middleware(observed());
    let developer = AgentBuilder::new("developer_angle")
        .instruction(P::task(
            "Say in one sentence what the facts mean for a developer",
        ))
        .output_key("developer_angle")
        .middleware(observed());
    let operator = AgentBuilder::new("operator_angle")
        .instruction(P::task(
            "Say in one sentence what the facts mean for an operator",
        ))
        .output_key("operator_angle")
        .middleware(observed());
    let writer = AgentBuilder::new("writer")
        .instruction(
            P::role("a technical writer")
                + P::task("Write a two-sentence release note from the angles; given a critique, rewrite it")
                + P::constraint("no marketing words")
                + P::with_state(&["developer_angle", "operator_angle", "draft"]),
        )
        .context(writer_context())
        .output_key("draft")
        .middleware(observed());
    let critic = AgentBuilder::new("critic")
        .instruction(P::task(
            "Answer good if the note is ready, else say what to change",
        ))
        .output_key("verdict")
        .middleware(observed());
    let polish_pro = AgentBuilder::new("polish_pro")
        .model(PRIMARY)
        .instruction(P::task("Polish the note"))
        .middleware(observed());
    let polish_flash = AgentBuilder::new("polish_flash")
        .instruction(P::task("Polish the note"))
        .middleware(observed());
    let tightener = AgentBuilder::new("tightener")
        .instruction(P::task("Cut every word the note does not need"))
        .middleware(observed());
    let packager = AgentBuilder::new("packager")
        .instruction(
            P::task("Package the note as JSON with a headline and a body") + P::format("JSON"),
        )
        .artifacts(A::json_output("release_note", "The packaged note").schema(note_schema()))
        .guard(G::non_empty() | G::not_contains(&["revolutionary"]))
        .middleware(observed());
    S::defaults(json!({"audience": "backend developers"}))
        >> researcher
        >> (developer | operator)
        >> ((writer >> critic) * until_state(S::eq("verdict", "good")).max(3))
        >> (polish_pro / polish_flash)
        >> (tightener * 2)
        >> packager
}

/// The example: the tree described, then run on [`CHANGE`], as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let audit = AuditLog::new();
    let metrics = Metrics::new();
    let facts_asked = Arc::new(Mutex::new(Vec::new()));
    let tree = tree(&audit, &metrics, facts_asked.clone());
    let mut out = String::from("== the tree, before it runs (diagnose) ==\n");
    out.push_str(&diagnose(&tree));

    let state = State::new();
    state.set("input", CHANGE).await?;
    state.set("conversation", conversation()).await?;
    let agent = tree.compile(models.default_model()?);
    agent.run(&state).await?;

    out.push_str("\n== the run ==\n");
    let asked = facts_asked
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    out.push_str(&format!(
        "T:: release_facts called for: {}\n",
        asked.join(", ")
    ));
    for key in ["audience", "developer_angle", "operator_angle", "verdict"] {
        let value = state.get::<String>(key).unwrap_or_default();
        out.push_str(&format!("S:: state[{key}] = {value}\n"));
    }
    let history: Vec<Content> = serde_json::from_value(conversation())?;
    for turn in writer_context().apply(&history) {
        let text: String = turn
            .parts()
            .iter()
            .filter_map(|p| p.text.as_deref())
            .collect();
        out.push_str(&format!(
            "C:: {} keeps, of {} turns so far, the {}: {text}\n",
            writer_context().label(),
            history.len(),
            turn.role.as_deref().unwrap_or("?")
        ));
    }
    out.push_str("M::audit, each agent's call in order (the two angles ran at once):\n");
    for entry in audit.entries() {
        if entry.agent.ends_with("_angle") {
            continue;
        }
        let outcome = match &entry.outcome {
            Ok(output) => output.replace('\n', " / "),
            Err(_) => "failed: no answer, so `/` tries the next".to_owned(),
        };
        out.push_str(&format!("  {:<12} {outcome}\n", entry.agent));
    }
    let counts = metrics.snapshot();
    out.push_str(&format!(
        "M::metrics: {} calls, {} succeeded, {} failed\n",
        counts.calls, counts.succeeded, counts.failed
    ));
    let note = state.get_raw("release_note").unwrap_or(Value::Null);
    out.push_str(&format!(
        "A:: release_note (schema-checked) = {}\n",
        serde_json::to_string_pretty(&note)?
    ));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
