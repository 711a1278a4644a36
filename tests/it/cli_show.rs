//! `reel show` on a real recording: one exact line per frame, audio runs collapsed, turns
//! and kinds filtered.

use crate::cli_support;

use cli_support::{TempDir, ToolWrites, arg, record, reel};
use serde_json::{Value, json};

const TIMELINE: &str = r#"    1  →  +0.000s  setup                             model models/gemini-live-2.5-flash, tools: get_weather
    2  ←  +0.040s  setupComplete
    3  ←  +0.040s  sessionResumptionUpdate           handle h-1, resumable
    4  →  +0.240s  clientContent                     "Hello!" · turnComplete
    5  ←  +0.390s  serverContent.text                "Hello! Ask me about the weather."
    6  ←  +0.390s  serverContent.turnComplete
    7  →  +0.690s  clientContent                     "What's the weather in London?" · turnComplete
    8  ←  +0.790s  toolCall                          get_weather({"city":"London"})
    9  →  +0.790s  toolResponse                      get_weather → {"city":"London","temp_c":22}
   10  ←  +0.910s  serverContent.audio               audio ×3 (0.3s)
   13  ←  +0.910s  serverContent.outputTranscription "It is 22C in London."
   14  ←  +0.910s  serverContent.turnComplete        usage 42 tokens
   15  ←  +1.410s  goAway                            time left 5s
   16  ←  +1.410s  close                             no code "go_away", closed by the client
   17  →  +1.410s  setup                             model models/gemini-live-2.5-flash, tools: get_weather
   18  ←  +1.470s  setupComplete
   19  →  +1.670s  clientContent                     "Thanks, bye!" · turnComplete
   20  ←  +1.770s  serverContent.text                "Goodbye!"
   21  ←  +1.770s  serverContent.turnComplete
   22  ←  +1.970s  close                             code 1000 "client disconnect", closed by the client
"#;

/// The lines of [`TIMELINE`] with these sequence numbers.
fn timeline_lines(seqs: &[u64]) -> String {
    TIMELINE
        .lines()
        .filter(|line| {
            let seq: u64 = line.split_whitespace().next().unwrap().parse().unwrap();
            seqs.contains(&seq)
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn show_prints_one_line_per_frame_and_filters() {
    let dir = TempDir::new("show");
    let (wire, journal) = (dir.join("s.wire.jsonl"), dir.join("s.journal.jsonl"));
    record(&wire, &journal, ToolWrites::LastCity).await;
    let wire = arg(&wire);

    let (code, stdout, stderr) = reel(&["show", wire]);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, TIMELINE, ""));

    // Model turn 2: from the frame after turn 1's turnComplete to its own.
    let (code, stdout, _) = reel(&["show", wire, "--turn", "2"]);
    assert_eq!((code, stdout), (0, timeline_lines(&[7, 8, 9, 10, 13, 14])));

    let (code, stdout, _) = reel(&["show", wire, "--kind", "serverContent.t"]);
    assert_eq!((code, stdout), (0, timeline_lines(&[5, 6, 14, 20, 21])));

    let (code, stdout, _) = reel(&["show", wire, "--kind", "close"]);
    assert_eq!((code, stdout), (0, timeline_lines(&[16, 22])));

    let (_, stdout, _) = reel(&["show", wire, "--turn", "3", "--kind", "setup"]);
    assert_eq!(stdout, timeline_lines(&[17, 18]));

    // A turn the log does not have, a kind no frame has: bad input that lists what exists.
    let (code, stdout, stderr) = reel(&["show", wire, "--turn", "9"]);
    assert_eq!(
        (code, stdout.as_str(), stderr),
        (
            2,
            "",
            format!(
                "reel: {wire}: no turn 9: it has 3 model turns; --turn takes 1 to 4 (turn 4: the frames after the last turnComplete)\n"
            )
        )
    );
    let (code, stdout, stderr) = reel(&["show", wire, "--kind", "toolcall"]);
    assert_eq!(
        (code, stdout.as_str(), stderr),
        (
            2,
            "",
            format!(
                "reel: {wire}: no frame has a kind starting with \"toolcall\"; its kinds: setup, setupComplete, sessionResumptionUpdate, clientContent, serverContent.text, serverContent.turnComplete, toolCall, toolResponse, serverContent.audio, serverContent.outputTranscription, goAway, close\n"
            )
        )
    );
    let (code, _, stderr) = reel(&["show", wire, "--turn", "1", "--kind", "toolCall"]);
    assert_eq!(
        (code, stderr),
        (
            2,
            format!(
                "reel: {wire}: no frame of turn 1 has a kind starting with \"toolCall\"; its kinds: setup, setupComplete, sessionResumptionUpdate, clientContent, serverContent.text, serverContent.turnComplete\n"
            )
        )
    );

    let (code, stdout, _) = reel(&["show", wire, "--json", "--kind", "serverContent.audio"]);
    assert_eq!(code, 0);
    let rows: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        rows,
        [json!({
            "seq": 10, "last_seq": 12, "dir": "in", "offset_ms": 910, "turn": 2,
            "kind": "serverContent.audio", "summary": "audio ×3 (0.3s)", "frames": 3,
            "audio_ms": 300.0
        })]
    );
}
