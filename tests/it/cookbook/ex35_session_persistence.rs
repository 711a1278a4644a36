//! 35_session_persistence: the shopper's call and call back, the bundled tapes regenerated
//! byte for byte from a scripted model (two tool calls, resumption handles, the resume
//! from the snapshot file), the example's offline run printing its bundled output (both
//! tapes replayed CLEAN), and `cargo run` as a real process.
//!
//! After an intended change: `REEL_BLESS=1 cargo test --test it cookbook::ex35`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/35_session_persistence.rs"]
mod example;

use super::support::{text_turn, tool_call};
use std::sync::Arc;
use std::time::Duration;

use example::cookbook::Target;
use example::{
    CALL, CALLBACK, NAME, Resumes, SESSION_ID, assistant, callback_name, presented_handle, session,
    snapshot_lines, tape,
};
use reel::demo::model_script::play_script;
use reel::persistence::{FsPersistence, SessionPersistence};
use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_protocol::ClientMessage;
use serde_json::{Value, json};

use super::support::{as_tape, check_bundled, check_output, check_printed, scratch};

/// The call's start: 2026-11-27T11:00:00Z; the call back's, an hour later.
const START_MS: u64 = 1_795_777_200_000;
const CALLBACK_MS: u64 = START_MS + 3_600_000;
/// How long the scripted model "thinks" before each answer.
const THINKING: Duration = Duration::from_millis(200);

/// A resumption handle from the server, then `t`.
fn handle_then(handle: &str, t: &str) -> Vec<Value> {
    let mut frames =
        vec![json!({"sessionResumptionUpdate": {"newHandle": handle, "resumable": true}})];
    frames.extend(text_turn(t));
    frames
}

/// What the user typed last, in `message`.
fn typed(message: &ClientMessage) -> String {
    message
        .client_content
        .as_ref()
        .and_then(|c| c.turns.as_ref())
        .and_then(|turns| turns.last())
        .and_then(|turn| turn.parts().first())
        .and_then(|part| part.text.clone())
        .unwrap_or_default()
}

/// What the model answers in the call and the call back.
fn answer(message: &ClientMessage) -> Vec<Value> {
    if message.setup.is_some() {
        return vec![json!({"setupComplete": {}})];
    }
    if let Some(response) = &message.tool_response {
        let id = response
            .function_responses
            .iter()
            .flatten()
            .find_map(|r| r.id.clone())
            .unwrap_or_default();
        return match id.as_str() {
            "order-1" => handle_then("handle-1", "Two blue mugs, noted."),
            "address-1" => handle_then("handle-2", "They'll go to 12 Elm Street."),
            _ => Vec::new(),
        };
    }
    let said = typed(message);
    if said == CALL[0] {
        tool_call(
            "order-1",
            "add_to_order",
            json!({"item": "blue mug", "quantity": 2}),
        )
    } else if said == CALL[1] {
        tool_call(
            "address-1",
            "set_address",
            json!({"address": "12 Elm Street"}),
        )
    } else if said == CALL[2] {
        handle_then("handle-3", "Thank you! Your order is saved.")
    } else if said == CALLBACK[0] {
        text_turn("Welcome back! Two blue mugs, going to 12 Elm Street.")
    } else {
        Vec::new()
    }
}

#[tokio::test(start_paused = true)]
async fn the_bundled_tapes_are_what_reel_records_today() {
    let dir = scratch("ex35", "recorded");
    let sessions: Arc<dyn SessionPersistence> = Arc::new(FsPersistence::new(dir.join("sessions")));
    let mut server = ScriptedServer::bind().await;
    let endpoint = server.endpoint().without_credential();
    let resumes = Resumes::default();
    let model = async {
        play_script(&mut server.accept().await, THINKING, answer).await;
        play_script(&mut server.accept().await, THINKING, answer).await;
    };
    let callback_wire = dir.join(tape(&callback_name()));
    let shopper = async {
        let agent = assistant(sessions.clone(), &resumes)
            .customize(|s| s.clock(Arc::new(TokioClock::anchored_at(START_MS))));
        let call = session(agent, endpoint.clone(), &CALL, None).await.unwrap();
        let saved = sessions.load(SESSION_ID).await.unwrap().unwrap();
        let agent = assistant(sessions.clone(), &resumes)
            .customize(|s| s.clock(Arc::new(TokioClock::anchored_at(CALLBACK_MS))));
        let callback = session(agent, endpoint, &CALLBACK, Some(&callback_wire))
            .await
            .unwrap();
        (call, saved, callback)
    };
    let ((), ((call, call_entries), saved, (callback, callback_entries))) =
        tokio::join!(model, shopper);

    assert_eq!(
        call,
        [
            "user       | I'd like two blue mugs, please.",
            r#"  call     | add_to_order({"item":"blue mug","quantity":2})"#,
            r#"  result   | {"order":"2 × blue mug"}"#,
            "assistant  | Two blue mugs, noted.",
            "user       | Send them to 12 Elm Street.",
            r#"  call     | set_address({"address":"12 Elm Street"})"#,
            r#"  result   | {"address":"12 Elm Street"}"#,
            "assistant  | They'll go to 12 Elm Street.",
            "user       | That's all for now, thanks.",
            "assistant  | Thank you! Your order is saved.",
        ]
    );
    // The snapshot the call left: three turns, the latest handle, the tools' keys; saved
    // when the session ended, at session time.
    assert_eq!(saved.turn_count, 3);
    assert_eq!(saved.resume_handle.as_deref(), Some("handle-3"));
    assert_eq!(saved.state["app:order"], json!("2 × blue mug"));
    assert_eq!(saved.state["app:address"], json!("12 Elm Street"));
    assert_eq!(
        snapshot_lines(&saved)[0],
        "turns 3, phase \"\", resume handle handle-3"
    );
    assert_eq!(
        resumes.lines(),
        ["on_resumed | after 3 turns: 2 × blue mug to 12 Elm Street"]
    );
    assert_eq!(presented_handle(&call_entries), None);
    assert_eq!(
        presented_handle(&callback_entries).as_deref(),
        Some("handle-3")
    );
    assert_eq!(
        callback,
        [
            "user       | Hi, it's me again. What did I order?",
            "resumed    | after 3 turns",
            "assistant  | Welcome back! Two blue mugs, going to 12 Elm Street.",
        ]
    );
    check_bundled(&tape(NAME), &as_tape(&call_entries));
    check_bundled(&tape(&callback_name()), &as_tape(&callback_entries));
    let resume = std::fs::read_to_string(dir.join(format!("{}.resume.json", callback_name())))
        .expect("the call back resumed, so its recording has a resume file");
    check_bundled(&format!("{}.resume.json", callback_name()), &resume);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_runs_offline_from_its_bundled_tapes() {
    let printed = example::run(Target::Bundled).await.unwrap();
    check_output(NAME, &printed);
}

#[tokio::test(start_paused = true)]
async fn a_replay_without_the_snapshot_file_parts_from_the_call_back_at_its_setup() {
    // The call back's recording resumed from a snapshot: its `.resume.json` holds it.
    // Copied without it, the replay starts afresh and its setup presents no handle.
    let dir = scratch("ex35", "no-resume");
    let wire = dir.join("callback.wire.jsonl");
    std::fs::copy(example::live::bundled(&tape(&callback_name())), &wire).unwrap();
    let sessions: Arc<dyn SessionPersistence> = Arc::new(FsPersistence::new(dir.join("sessions")));
    let outcome = assistant(sessions, &Resumes::default())
        .replay(&wire)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(
        example::live::verdict(&outcome),
        "DRIFT — the replay parted from the recording: 1 outbound divergence.\n    \
         frame 1: the replayed frame differs\n  \
         setup.sessionResumption.handle: expected \"handle-3\", actual (absent)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
