//! `reel flow check` on a real recording: reel records a collections call against a
//! scripted server (lookup_account verifies the caller, record_promise captures a promise
//! to pay, charge_card charges it; each tool writes state through its delta), then scores
//! the wire log and the journal beside it against a flow the call obeys (exit 0) and a
//! changed flow it breaks (exit 1, the refused calls with their frames' sequence numbers).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::{EventStream, Lane, LiveSessionBuilder};
use reel_flow::{Flow, Guard};
use reel_protocol::SessionConfig;
use reel_recorder::journal::{FileJournalSink, JournalSink};
use reel_recorder::wire_file::FileWireRecorder;
use reel_recorder::wire_log::WireRecorder;
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::{Value, json};

use crate::cli_support::{T0, TempDir, arg, reel};

/// A tool that writes `writes` into state and answers `{"ok": true}`.
fn writing_tool(name: &'static str, writes: &'static [(&'static str, Value)]) -> SimpleTool {
    SimpleTool::new(name, name, None, move |_args: Value, ctx| async move {
        for (key, value) in writes {
            ctx.state.set(key, value).map_err(|e| ctx.fail(e))?;
        }
        Ok(json!({"ok": true}))
    })
}

fn tools() -> ToolDispatcher {
    static VERIFIED: [(&str, Value); 1] = [("identity_verified", Value::Bool(true))];
    let promise: &'static [(&str, Value)] = Box::leak(Box::new([
        ("ptp_amount", json!(50)),
        ("ptp_confirmed", json!(true)),
    ]));
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(writing_tool("lookup_account", &VERIFIED))
        .unwrap();
    dispatcher
        .register(writing_tool("record_promise", promise))
        .unwrap();
    dispatcher
        .register(writing_tool("charge_card", &[]))
        .unwrap();
    dispatcher
}

async fn handled(events: &mut EventStream, kind: &str) {
    while let Some(event) = events.recv().await {
        if event.lane == Lane::Control && event.event.kind() == kind {
            return;
        }
    }
    panic!("the session ended before a {kind} event");
}

/// Records the call: three turns, one tool call each, 100 ms apart. Run under paused time.
async fn record(wire: &Path, journal: &Path) {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(FileWireRecorder::create(wire).unwrap());
    let sink = Arc::new(FileJournalSink::create(journal).unwrap());
    let builder = LiveSessionBuilder::new(
        SessionConfig::new("gemini-live-2.5-flash"),
        server.endpoint(),
    )
    .clock(Arc::new(TokioClock::anchored_at(T0)))
    .dispatcher(tools())
    .record_wire(recorder.clone() as Arc<dyn WireRecorder>)
    .journal_sink(sink.clone() as Arc<dyn JournalSink>);
    let mut events = builder.subscribe();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv_json().await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(), script);
    let handle = handle.unwrap();
    for (id, (user, tool)) in [
        ("Hi, this is Ada.", "lookup_account"),
        ("I can pay 50 on Friday.", "record_promise"),
        ("Charge my card now.", "charge_card"),
    ]
    .into_iter()
    .enumerate()
    {
        tokio::time::advance(Duration::from_millis(100)).await;
        handle.send_text(user).unwrap();
        conn.recv_json().await;
        tokio::time::advance(Duration::from_millis(100)).await;
        conn.send_json(&json!({"toolCall": {"functionCalls": [
            {"id": format!("call-{}", id + 1), "name": tool, "args": {}}
        ]}}))
        .await;
        conn.recv_json().await;
        tokio::time::advance(Duration::from_millis(100)).await;
        conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": "Done."}]}}}))
            .await;
        conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
            .await;
        handled(&mut events, "turn_complete").await;
    }
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    recorder.flush();
    JournalSink::flush(sink.as_ref());
}

/// The flow the call follows.
fn obeyed() -> Flow {
    Flow::new()
        .step("verify")
        .allow(["lookup_account"])
        .done(Guard::is_true("identity_verified"))
        .step("pay")
        .after("verify")
        .allow(["record_promise", "charge_card"])
        .done(Guard::called_ok("charge_card"))
        .step("close")
        .after("pay")
        .terminal()
        .never("charge_card")
        .until(Guard::is_true("ptp_confirmed"))
        .once("charge_card")
        .require(["close"])
}

/// The flow changed: a disclosure before any promise, and a supervisor's approval before
/// any charge.
fn changed() -> Flow {
    Flow::new()
        .step("verify")
        .allow(["lookup_account"])
        .done(Guard::is_true("identity_verified"))
        .step("disclose")
        .after("verify")
        .done(Guard::is_true("disclosure_given"))
        .step("pay")
        .after("disclose")
        .allow(["record_promise", "charge_card"])
        .done(Guard::called_ok("charge_card"))
        .step("close")
        .after("pay")
        .terminal()
        .never("charge_card")
        .until(Guard::is_true("supervisor_approved"))
        .require(["close"])
}

#[tokio::test(start_paused = true)]
async fn a_recorded_call_conforms_to_its_flow_and_breaks_a_changed_one() {
    let dir = TempDir::new("flow-check");
    let (wire, journal) = (dir.join("call.wire.jsonl"), dir.join("call.journal.jsonl"));
    record(&wire, &journal).await;
    let (good, bad) = (dir.join("good.flow.json"), dir.join("changed.flow.json"));
    std::fs::write(&good, obeyed().to_json().unwrap()).unwrap();
    std::fs::write(&bad, changed().to_json().unwrap()).unwrap();
    let journal_entries = crate::cli_support::lines(&journal).len();
    // The frames that carried the tool calls, as `reel show` numbers them.
    let (_, calls, _) = reel(&["show", arg(&wire), "--kind", "toolCall"]);
    let seqs: Vec<&str> = calls
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(seqs, ["4", "9", "14"], "{calls}");

    let (code, stdout, stderr) = reel(&["flow", "check", arg(&wire), arg(&good)]);
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        format!(
            "  reel flow check — {}

  Flow:       {} (3 steps)
  Journal:    {} ({journal_entries} mutations)
  Tool calls: 3, 0 refused by the flow

  Steps:
    verify  done
    pay     done
    close   done

  Complete:   yes

  CONFORMS — every tool call was admissible under the flow.
",
            arg(&wire),
            arg(&good),
            arg(&journal)
        )
    );
    assert_eq!(code, 0);

    let (code, stdout, stderr) = reel(&["flow", "check", arg(&wire), arg(&bad)]);
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        format!(
            "  reel flow check — {}

  Flow:       {} (4 steps)
  Journal:    {} ({journal_entries} mutations)
  Tool calls: 3, 2 refused by the flow

  Steps:
    verify    done
    disclose  active
    pay       pending
    close     pending

  Violations:
    frame 9  record_promise (call-2): \"record_promise\" is not allowed by any active step (active: disclose)
    frame 14  charge_card (call-3): \"charge_card\" is forbidden until is_true(supervisor_approved)

  Complete:   no — missing: close

  VIOLATED — the flow refuses 2 calls.
",
            arg(&wire),
            arg(&bad),
            arg(&journal)
        )
    );
    assert_eq!(code, 1);

    let (code, stdout, _) = reel(&["flow", "check", arg(&wire), arg(&bad), "--json"]);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["verdict"], "violated");
    assert_eq!(
        report["violations"],
        json!([
            {"seq": 9, "call_id": "call-2", "tool": "record_promise",
             "denial": {"kind": "not_allowed", "tool": "record_promise", "active": ["disclose"]},
             "reason": "\"record_promise\" is not allowed by any active step (active: disclose)"},
            {"seq": 14, "call_id": "call-3", "tool": "charge_card",
             "denial": {"kind": "never", "tool": "charge_card", "until": "is_true(supervisor_approved)"},
             "reason": "\"charge_card\" is forbidden until is_true(supervisor_approved)"}
        ])
    );
    assert_eq!(
        report["verdicts"],
        json!([
            {"step": "verify", "verdict": "done"},
            {"step": "disclose", "verdict": "active"},
            {"step": "pay", "verdict": "pending"},
            {"step": "close", "verdict": "pending"}
        ])
    );
    assert_eq!(report["complete"], false);
    assert_eq!(report["unmet_requirements"], json!(["close"]));
}

#[tokio::test(start_paused = true)]
async fn without_the_journal_the_state_guards_see_nothing_and_a_bad_flow_is_bad_input() {
    let dir = TempDir::new("flow-check-inputs");
    let (wire, journal) = (dir.join("call.wire.jsonl"), dir.join("call.journal.jsonl"));
    record(&wire, &journal).await;
    std::fs::remove_file(&journal).unwrap();
    let good = dir.join("good.flow.json");
    std::fs::write(&good, obeyed().to_json().unwrap()).unwrap();
    let (code, stdout, _) = reel(&["flow", "check", arg(&wire), arg(&good)]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("  Journal:    none beside the log: guards read an empty state\n"),
        "{stdout}"
    );

    let typo = dir.join("typo.flow.json");
    std::fs::write(
        &typo,
        r#"{"steps": [{"id": "a", "after": ["b"], "terminal": true}]}"#,
    )
    .unwrap();
    let (code, stdout, stderr) = reel(&["flow", "check", arg(&wire), arg(&typo)]);
    assert_eq!(
        (code, stdout.as_str(), stderr),
        (
            2,
            "",
            format!(
                "reel: {}: step \"a\" comes after \"b\", which is not a step of the flow: declare it or fix the name\n",
                arg(&typo)
            )
        )
    );

    let (code, stdout, _) = reel(&["flow", "mermaid", arg(&good)]);
    assert_eq!(code, 0);
    assert_eq!(stdout, obeyed().to_mermaid());
}

#[tokio::test(start_paused = true)]
async fn without_a_flow_argument_the_flow_beside_the_log_is_scored() {
    let dir = TempDir::new("flow-check-beside");
    let (wire, journal) = (dir.join("call.wire.jsonl"), dir.join("call.journal.jsonl"));
    record(&wire, &journal).await;
    // No `call.flow.json` yet: bad input, naming the file looked for.
    let (code, stdout, stderr) = reel(&["flow", "check", arg(&wire)]);
    assert_eq!(
        (code, stdout.as_str(), stderr),
        (
            2,
            "",
            format!(
                "reel: {}: no flow file given and no {} beside the log; give the flow: reel flow check LOG FLOW.json\n",
                arg(&wire),
                arg(&dir.join("call.flow.json"))
            )
        )
    );
    // What a governed session writes beside its recording (`X.flow.json`, the flow's
    // serde JSON): scored as if it were given.
    let beside = dir.join("call.flow.json");
    std::fs::write(&beside, obeyed().to_json().unwrap()).unwrap();
    let (code, stdout, stderr) = reel(&["flow", "check", arg(&wire), "--json"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["flow"], json!(arg(&beside)));
    assert_eq!(report["verdict"], "conforms");
    assert_eq!(report["complete"], true);
}
