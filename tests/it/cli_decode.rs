//! `reel decode` on real files: exact output and exit codes.

use std::process::Command;

fn reel(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn decode_prints_every_event_and_reports_bad_lines() {
    let dir = std::env::temp_dir().join(format!("reel-cli-decode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frames.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"setupComplete\":{}}\n",
            "{\"serverContent\":{\"modelTurn\":{\"parts\":[{\"text\":\"Hello!\"}]},\"turnComplete\":true}}\n",
            "{\"toolCall\":{\"functionCalls\":[{\"id\":\"c1\",\"name\":\"get_weather\",\"args\":{\"city\":\"London\"}}]}}\n",
            "{\"serverContent\":{\"turnComplete\":\"yes\"}}\n",
        ),
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let (code, stdout, stderr) = reel(&["decode", path]);
    assert_eq!(code, 2);
    assert_eq!(
        stdout,
        concat!(
            "    1  connected\n",
            "    2  text                   \"Hello!\"\n",
            "    2  text_complete          \"Hello!\"\n",
            "    2  turn_complete\n",
            "    3  tool_call              get_weather({\"city\":\"London\"}) id=c1\n",
        )
    );
    assert_eq!(
        stderr,
        format!(
            "{path}:4: invalid field `serverContent.turnComplete`: invalid type: string \"yes\", expected a boolean\n"
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decode_reads_client_frames_in_either_casing() {
    let dir = std::env::temp_dir().join(format!("reel-cli-client-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("client.jsonl");
    std::fs::write(
        &path,
        "{\"tool_response\": {\"function_responses\": [{\"id\": \"c1\", \"name\": \"f\", \"response\": {\"ok\": true}}]}}\n",
    )
    .unwrap();
    let (code, stdout, _) = reel(&["decode", "--client", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "{\"toolResponse\":{\"functionResponses\":[{\"id\":\"c1\",\"name\":\"f\",\"response\":{\"ok\":true}}]}}\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_file_is_exit_2_with_a_clear_message() {
    let (code, stdout, stderr) = reel(&["decode", "/nonexistent/frames.jsonl"]);
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "reel: cannot read /nonexistent/frames.jsonl: No such file or directory (os error 2)\n"
    );
}

#[test]
fn decode_on_a_wire_log_points_to_show_and_stops() {
    let tape = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/tapes/proxy.wire.jsonl");
    let (code, stdout, stderr) = reel(&["decode", tape]);
    assert_eq!(
        (code, stdout.as_str(), stderr),
        (
            2,
            "",
            format!(
                "reel: {tape}: a wire log (line 1 is a recorded entry, not a frame); `reel decode` reads bare frames, one JSON message a line; to read a wire log: reel show {tape}\n"
            )
        )
    );
}

#[test]
fn decode_says_what_each_event_holds_in_words_not_debug_text() {
    let dir = std::env::temp_dir().join(format!("reel-cli-decode-words-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frames.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"goAway\":{\"timeLeft\":\"5s\"}}\n",
            "{\"sessionResumptionUpdate\":{\"newHandle\":\"h-1\",\"resumable\":true}}\n",
            "{\"usageMetadata\":{\"totalTokenCount\":1}}\n",
            "{\"serverContent\":{\"interrupted\":true}}\n",
            "{\"toolCallCancellation\":{\"ids\":[\"c1\",\"c2\"]}}\n",
            "{\"serverContent\":{\"outputTranscription\":{\"text\":\"Hi \\\"you\\\"\"}}}\n",
            "{\"setupComplete\":{\"sessionId\":\"s-9\"}}\n",
        ),
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let (code, stdout, stderr) = reel(&["decode", path]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            concat!(
                "    1  go_away                time left 5.000s\n",
                "    2  resume_update          handle h-1, resumable\n",
                "    3  usage                  1 token\n",
                "    4  interrupted\n",
                "    5  tool_call_cancelled    ids c1, c2\n",
                "    6  output_transcription   partial \"Hi \\\"you\\\"\"\n",
                "    7  connected              session s-9\n",
            ),
            ""
        )
    );
    let (code, stdout, _) = reel(&["decode", "--json", path]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.lines().nth(2).unwrap(),
        r#"{"line":3,"kind":"usage","summary":"1 token"}"#
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
