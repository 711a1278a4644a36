//! `reel replay` on real recordings: reel records a session against a scripted server (a
//! greeting, a tool call, a reconnect, a goodbye), then replays the wire log offline and
//! compares the recorded journal with the replay's, entry by entry. Exact report text, exit
//! codes 0 (CLEAN) and 1 (DRIFT: an outbound divergence, a journal entry that differs).

use crate::cli_support;

use cli_support::{TempDir, ToolWrites, arg, lines, record, reel, tamper_frame, write_lines};
use serde_json::{Value, json};

/// The report up to the final state: the same for both recordings, whatever the tool
/// wrote, since the replay runs no tool.
fn report_head(wire: &str) -> String {
    format!(
        "  reel replay — {wire}

  Wire log:  20 frames (14 inbound, 6 outbound), 2.0s recorded, 1 reconnect
  Mode:      offline — the real session tree on the recorded frames; tool calls get
             their recorded responses; no model, no tool or application code runs
  Outbound:  3 runtime frames sent again, all byte-identical to the recording

  Turn-by-turn:
    turn  1  [connected×1, resume_update×1, user_text×1, text×1, text_complete×1, turn_complete×1]
             you: “Hello!”
             “Hello! Ask me about the weather.”
    turn  2  [user_text×1, tool_call×1, audio×3, output_transcription×2, usage×1, turn_complete×1]
             you: “What's the weather in London?”
             “It is 22C in London.”
             tool: get_weather({{\"city\":\"London\"}})
    turn  3  [go_away×1, disconnected×1, connected×1, user_text×1, text×1, text_complete×1, turn_complete×1]
             you: “Thanks, bye!”
             “Goodbye!”
    after    [disconnected×1]

  Final state (13 keys):
    session:disconnected = true
    session:elapsed_ms = 1930
    session:go_away_received = true
    session:go_away_time_left_ms = 5000
    session:is_model_speaking = false
    session:last_output_transcription = \"It is 22C in London.\"
    session:phase = \"Disconnected\"
    session:remaining_budget_ms = 898070
    session:resumable = true
    session:session_type = \"audio\"
    session:silence_ms = 200
    session:total_token_count = 42
    session:turn_count = 3
"
    )
}

#[tokio::test(start_paused = true)]
async fn a_session_whose_tools_write_no_state_replays_clean() {
    let dir = TempDir::new("replay-clean");
    let (wire, journal) = (
        dir.join("clean.wire.jsonl"),
        dir.join("clean.journal.jsonl"),
    );
    record(&wire, &journal, ToolWrites::Nothing).await;

    let (code, stdout, stderr) = reel(&["replay", arg(&wire), "--journal", arg(&journal)]);
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        format!(
            "{}
  Journal diff — {} (68 mutations, 13 keys):
    CLEAN — every key's final value matches

  Journal:   identical to the recording, entry by entry (68 mutations)

  CLEAN — the replay reproduced the session exactly.
",
            report_head(arg(&wire)),
            arg(&journal)
        )
    );
    assert_eq!(code, 0);

    // Without a journal only the frames are checked, and the verdict says so.
    let (code, stdout, stderr) = reel(&["replay", arg(&wire)]);
    assert_eq!(
        (code, stdout, stderr),
        (
            0,
            format!(
                "{}
  CLEAN — every runtime frame as recorded; no journal given to compare.
",
                report_head(arg(&wire))
            ),
            String::new()
        )
    );
    // Nothing is written beside the log unless asked.
    assert!(!dir.join("clean.replay.json").exists());
    let (code, _, stderr) = reel(&["replay", arg(&wire), "--save-verdict"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let note: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("clean.replay.json")).unwrap())
            .unwrap();
    assert_eq!(note["verdict"], "CLEAN");
    assert_eq!(note.get("first_divergence"), None);
}

#[tokio::test(start_paused = true)]
async fn a_diverging_frame_and_one_journal_entry_make_drift_and_exit_1() {
    let dir = TempDir::new("replay-tampered");
    let (wire, journal) = (dir.join("t.wire.jsonl"), dir.join("t.journal.jsonl"));
    record(&wire, &journal, ToolWrites::Nothing).await;
    // The reconnect's setup (frame 17) as if another handle had been presented...
    tamper_frame(&wire, 17, |setup| setup.replace("\"h-1\"", "\"h-9\""));
    // ...and one intermediate value of the journal changed (its final values still match).
    let mut entries = lines(&journal);
    let mut ninth: Value = serde_json::from_str(&entries[8]).unwrap();
    assert_eq!(
        (&ninth["key"], &ninth["new"]),
        (&json!("session:elapsed_ms"), &json!(200))
    );
    ninth["new"] = json!(201);
    entries[8] = ninth.to_string();
    write_lines(&journal, &entries);

    let (code, stdout, stderr) = reel(&[
        "replay",
        arg(&wire),
        "--journal",
        arg(&journal),
        "--save-verdict",
    ]);
    assert_eq!((code, stderr.as_str()), (1, ""));
    // Asked, the verdict is kept beside the log for `reel studio`, with the log's size.
    let note: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("t.replay.json")).unwrap()).unwrap();
    assert_eq!(note["verdict"], "DRIFT");
    assert_eq!(
        note["first_divergence"],
        "frame 17: the replayed frame differs\n  setup.sessionResumption.handle: expected \"h-9\", actual \"h-1\""
    );
    assert_eq!(note["log_bytes"], std::fs::metadata(&wire).unwrap().len());
    let outbound: Vec<&str> = stdout
        .lines()
        .skip_while(|line| !line.starts_with("  Outbound:"))
        .take(3)
        .collect();
    assert_eq!(
        outbound,
        [
            "  Outbound:  3 runtime frames sent again, 2 byte-identical; 1 divergence:",
            "             - frame 17: the replayed frame differs (setup)",
            "                 setup.sessionResumption.handle: expected \"h-9\", actual \"h-1\"",
        ]
    );
    let tail: Vec<&str> = stdout
        .lines()
        .skip_while(|line| !line.starts_with("  Journal diff"))
        .collect();
    assert_eq!(
        tail,
        [
            &format!(
                "  Journal diff — {} (68 mutations, 13 keys):",
                arg(&journal)
            ),
            "    CLEAN — every key's final value matches",
            "",
            "  Journal:   differs from the recording from entry 9 (68 recorded, 68 replayed):",
            "             entry 9 differs in new: recorded session:elapsed_ms = 201 (set at \
             1718000000240), replay session:elapsed_ms = 200 (set at 1718000000240)",
            "",
            "  DRIFT — the replay parted from the recording: 1 outbound divergence, the journal \
             from entry 9 on.",
        ]
    );

    let (code, json, _) = reel(&["replay", arg(&wire), "--journal", arg(&journal), "--json"]);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        report["verdict"],
        json!({"clean": false, "journal_entries": 68, "drift": [
            {"kind": "outbound", "divergences": 1},
            {"kind": "journal", "from_entry": 9, "recorded": 68, "replayed": 68}
        ]})
    );
    assert_eq!(
        report["journal"]["first_difference"]["fields"],
        json!(["new"])
    );
    assert_eq!(report["drift"], true);
}

#[tokio::test(start_paused = true)]
async fn a_key_only_a_tool_wrote_is_missing_on_replay() {
    let dir = TempDir::new("replay-drift");
    let (wire, journal) = (
        dir.join("drift.wire.jsonl"),
        dir.join("drift.journal.jsonl"),
    );
    record(&wire, &journal, ToolWrites::LastCity).await;

    let (code, stdout, stderr) = reel(&["replay", arg(&wire), "--journal", arg(&journal)]);
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        format!(
            "{}
  Journal diff — {} (69 mutations, 14 keys):
    DRIFT — 1 key diverged:
      - app:last_city: recorded \"London\", missing on replay

  Journal:   differs from the recording from entry 29 (69 recorded, 68 replayed):
             entry 29 differs in key, old, new, timestamp_ms, delta: recorded app:last_city = \"London\" (set at 1718000000790, delta), replay session:elapsed_ms = 870 (set at 1718000000910)

  DRIFT — the replay parted from the recording: the journal from entry 29 on, 1 key's final value.
",
            report_head(arg(&wire)),
            arg(&journal)
        )
    );
    assert_eq!(code, 1);
}

#[tokio::test(start_paused = true)]
async fn json_holds_the_same_report() {
    let dir = TempDir::new("replay-json");
    let (wire, journal) = (dir.join("j.wire.jsonl"), dir.join("j.journal.jsonl"));
    record(&wire, &journal, ToolWrites::LastCity).await;

    let (code, stdout, stderr) =
        reel(&["replay", arg(&wire), "--journal", arg(&journal), "--json"]);
    assert_eq!((code, stderr.as_str()), (1, ""));
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["file"], arg(&wire));
    assert_eq!(
        report["wire_log"],
        json!({
            "frames": 20, "inbound": 14, "outbound": 6, "close_markers": 2, "reconnects": 1,
            "first_ts_ms": 1_718_000_000_000u64, "last_ts_ms": 1_718_000_001_970u64,
            "first_outbound_seq": 1, "duration_ms": 1970
        })
    );
    assert_eq!(
        report["outbound"],
        json!({"runtime_frames": 3, "identical": 3, "taken_from_recording": [], "divergences": []})
    );
    assert_eq!(report["turns"].as_array().unwrap().len(), 4);
    assert_eq!(
        report["turns"][1],
        json!({
            "number": 2,
            "complete": true,
            "events": [
                {"kind": "user_text", "count": 1},
                {"kind": "tool_call", "count": 1},
                {"kind": "audio", "count": 3},
                {"kind": "output_transcription", "count": 2},
                {"kind": "usage", "count": 1},
                {"kind": "turn_complete", "count": 1}
            ],
            "user": "What's the weather in London?",
            "text": "It is 22C in London.",
            "tool_calls": [{"name": "get_weather", "args": {"city": "London"}, "id": "call-1"}]
        })
    );
    assert_eq!(report["final_state"]["session:turn_count"], 3);
    assert_eq!(
        report["journal"],
        json!({
            "file": arg(&journal),
            "mutations": 69,
            "keys": 14,
            "clean": false,
            "diverged": [{"key": "app:last_city", "status": "missing_on_replay", "recorded": "London"}],
            "identical": false,
            "replayed": 68,
            "first_difference": {
                "entry": 29,
                "recorded": {"sequence": 29, "key": "app:last_city", "old": null, "new": "London",
                             "origin": "set", "timestamp_ms": 1_718_000_000_790u64, "delta": true},
                "replayed": {"sequence": 29, "key": "session:elapsed_ms", "old": 750, "new": 870,
                             "origin": "set", "timestamp_ms": 1_718_000_000_910u64, "delta": false},
                "fields": ["key", "old", "new", "timestamp_ms", "delta"]
            }
        })
    );
    assert_eq!(
        report["verdict"],
        json!({"clean": false, "journal_entries": 69, "drift": [
            {"kind": "journal", "from_entry": 29, "recorded": 69, "replayed": 68},
            {"kind": "final_state", "keys": 1}
        ]})
    );
    assert_eq!(report["drift"], true);
}

/// The bundled tape was recorded with phases, whose instruction updates only application
/// code produces: the command line takes them from the recording and reports no drift.
#[test]
fn the_bundled_tape_replays_with_its_instruction_updates_taken_from_the_recording() {
    let tape = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/tapes/weather.wire.jsonl"
    );
    let (code, stdout, stderr) = reel(&["replay", tape]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let outbound: Vec<&str> = stdout
        .lines()
        .skip_while(|line| !line.starts_with("  Outbound:"))
        .take(2)
        .collect();
    assert_eq!(
        outbound,
        [
            "  Outbound:  2 runtime frames sent again, all byte-identical to the recording",
            "             2 frames from application code taken from the recording (none runs here)",
        ]
    );
    let (_, json, _) = reel(&["replay", tape, "--json"]);
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        report["outbound"],
        json!({"runtime_frames": 2, "identical": 2, "taken_from_recording": [16, 22], "divergences": []})
    );
}
