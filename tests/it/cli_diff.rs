//! `reel diff` on real recordings: a log against itself, against a copy with one frame
//! changed, against a copy cut short, and against one without a reconnect's close marker.

use crate::cli_support;

use cli_support::{TempDir, ToolWrites, arg, lines, record, reel, write_lines};
use reel_recorder::wire_log::WireEntry;
use serde_json::{Value, json};

/// `line` with its frame's payload rewritten by `edit`.
fn edit_payload(line: &str, edit: impl FnOnce(&str) -> String) -> String {
    let mut entry: WireEntry = serde_json::from_str(line).unwrap();
    let payload = edit(std::str::from_utf8(&entry.payload).unwrap());
    entry.payload = payload.into_bytes().into();
    serde_json::to_string(&entry).unwrap()
}

#[tokio::test(start_paused = true)]
async fn diff_finds_the_first_divergence_with_its_context() {
    let dir = TempDir::new("diff");
    let (wire, journal) = (dir.join("a.wire.jsonl"), dir.join("a.journal.jsonl"));
    record(&wire, &journal, ToolWrites::LastCity).await;
    let a = arg(&wire);

    let (code, stdout, stderr) = reel(&["diff", a, a]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            "SAME — 20 frames, 2 close markers: direction and payload match frame by frame\n",
            ""
        )
    );

    // The model says something else in its last turn (seq 20, the 19th frame).
    let mut changed = lines(&wire);
    changed[19] = edit_payload(&changed[19], |p| p.replace("Goodbye!", "Bye now!"));
    let b = dir.join("b.wire.jsonl");
    write_lines(&b, &changed);
    let (code, stdout, stderr) = reel(&["diff", a, arg(&b)]);
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        r#"DIFFERENT — first divergence at frame 19 (A seq 20, B seq 20): payload
  before it:
    A seq 18, B seq 18  ←  setupComplete
    A seq 19, B seq 19  →  clientContent  "Thanks, bye!" · turnComplete
  A seq 20  ←  serverContent.text  "Goodbye!"
  B seq 20  ←  serverContent.text  "Bye now!"
  differences:
    serverContent.modelTurn.parts[0].text: A "Goodbye!", B "Bye now!"
"#
    );
    assert_eq!(code, 1);

    let (code, stdout, _) = reel(&["diff", a, arg(&b), "--json"]);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["result"], "differs");
    assert_eq!(report["position"], 19);
    assert_eq!(
        report["difference"],
        json!({"kind": "payload", "diffs": [
            {"path": "serverContent.modelTurn.parts[0].text", "a": "Goodbye!", "b": "Bye now!"}
        ]})
    );
    assert_eq!(
        report["b"],
        json!({"seq": 20, "dir": "in", "ts_ms": 1_718_000_001_770u64,
               "kind": "serverContent.text", "summary": "\"Bye now!\""})
    );
    let context: Vec<(&Value, &Value)> = report["context"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (&c["a"]["seq"], &c["b"]["seq"]))
        .collect();
    assert_eq!(
        context,
        [(&json!(18), &json!(18)), (&json!(19), &json!(19))]
    );
}

#[tokio::test(start_paused = true)]
async fn a_shorter_log_and_a_missing_reconnect_are_differences() {
    let dir = TempDir::new("diff-ends");
    let (wire, journal) = (dir.join("a.wire.jsonl"), dir.join("a.journal.jsonl"));
    record(&wire, &journal, ToolWrites::LastCity).await;
    let a = arg(&wire);

    let short = dir.join("short.wire.jsonl");
    write_lines(&short, &lines(&wire)[..9]);
    let (code, stdout, _) = reel(&["diff", a, arg(&short)]);
    assert_eq!(
        stdout,
        r#"DIFFERENT — first divergence at frame 10 (A seq 10, B ends): B ends after 9 frames
  before it:
    A seq 8, B seq 8  ←  toolCall  get_weather({"city":"London"})
    A seq 9, B seq 9  →  toolResponse  get_weather → {"city":"London","temp_c":22}
  A seq 10  ←  serverContent.audio  audio ×1 (0.1s)
  B (no more frames)
"#
    );
    assert_eq!(code, 1);

    // Line 16 is the first connection's close marker (the goAway reconnect).
    let mut no_close = lines(&wire);
    no_close.remove(15);
    let b = dir.join("no-close.wire.jsonl");
    write_lines(&b, &no_close);
    let (code, stdout, _) = reel(&["diff", a, arg(&b)]);
    assert_eq!(
        stdout,
        r#"DIFFERENT — first divergence before frame 16 (A seq 17, B seq 17): close markers
  before it:
    A seq 14, B seq 14  ←  serverContent.turnComplete  usage 42 tokens
    A seq 15, B seq 15  ←  goAway  time left 5s
  A: no code "go_away", closed by the client
  B: (none)
"#
    );
    assert_eq!(code, 1);
}
