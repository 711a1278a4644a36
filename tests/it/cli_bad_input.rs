//! Bad input to `reel replay`, `show` and `diff`: one line on stderr naming the file (and
//! the line), nothing on stdout, exit code 2. A torn last line is only a warning.

use crate::cli_support;

use cli_support::{TempDir, ToolWrites, arg, lines, record, reel, write_lines};

/// Exit code 2, nothing on stdout, exactly `message` on stderr.
fn assert_bad_input(args: &[&str], message: &str) {
    let (code, stdout, stderr) = reel(args);
    assert_eq!(stderr, format!("reel: {message}\n"), "{args:?}");
    assert_eq!((code, stdout.as_str()), (2, ""), "{args:?}");
}

#[test]
fn missing_empty_and_binary_files() {
    let dir = TempDir::new("bad-files");
    for command in ["replay", "show"] {
        assert_bad_input(
            &[command, "/nonexistent/s.wire.jsonl"],
            "cannot read /nonexistent/s.wire.jsonl: No such file or directory (os error 2)",
        );
    }
    let empty = dir.join("empty.wire.jsonl");
    std::fs::write(&empty, "").unwrap();
    let empty = arg(&empty);
    for args in [
        vec!["replay", empty],
        vec!["show", empty],
        vec!["diff", empty, empty],
    ] {
        assert_bad_input(
            &args,
            &format!("{empty}: empty wire log (no entries); is it the right file?"),
        );
    }
    let binary = dir.join("binary.wire.jsonl");
    std::fs::write(
        &binary,
        // Not gzip's or Zstandard's first bytes: those are decompressed (`reel_recorder::compressed`).
        [0x08, 0x00, 0xff, 0xfe, b'\n', 0x00, 0x42],
    )
    .unwrap();
    let binary = arg(&binary);
    for args in [
        vec!["replay", binary],
        vec!["show", binary],
        vec!["diff", binary, binary],
    ] {
        assert_bad_input(
            &args,
            &format!("{binary}: not a wire log: it holds binary data, not JSON lines"),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn broken_logs_name_the_file_and_line() {
    let dir = TempDir::new("bad-logs");
    let (wire, journal) = (dir.join("s.wire.jsonl"), dir.join("s.journal.jsonl"));
    record(&wire, &journal, ToolWrites::LastCity).await;
    let recorded = lines(&wire);

    // A write cut short in the middle of the file: corruption, not a torn end.
    let mut torn = recorded.clone();
    torn[2].truncate(30);
    let path = dir.join("torn-middle.wire.jsonl");
    write_lines(&path, &torn);
    let path = arg(&path);
    let message = format!(
        "{path}: corrupt at line 3: not a valid wire log entry (EOF while parsing an object, at column 30)"
    );
    assert_bad_input(&["replay", path], &message);
    assert_bad_input(&["diff", arg(&wire), path], &message);

    // Without its setup, the log is not a session.
    let path = dir.join("no-setup.wire.jsonl");
    write_lines(&path, &recorded[1..]);
    let path = arg(&path);
    assert_bad_input(
        &["replay", path],
        &format!(
            "{path}: no setup frame: the first frame the client sent (seq 4) is not a setup; a session's wire log starts with its setup"
        ),
    );

    let mut swapped = recorded.clone();
    swapped.swap(1, 2);
    let path = dir.join("swapped.wire.jsonl");
    write_lines(&path, &swapped);
    let path = arg(&path);
    assert_bad_input(
        &["replay", path],
        &format!("{path}: out of order at line 3: sequence number 2 does not follow 3"),
    );
    // `show` streams: what it printed before the bad line stays printed.
    let (code, stdout, stderr) = reel(&["show", path]);
    assert_eq!(
        stderr,
        format!("reel: {path}: out of order at line 3: sequence number 2 does not follow 3\n")
    );
    assert_eq!(
        (code, stdout.as_str()),
        (
            2,
            concat!(
                "    1  →  +0.000s  setup                             model models/gemini-live-2.5-flash, tools: get_weather\n",
                "    3  ←  +0.040s  sessionResumptionUpdate           handle h-1, resumable\n",
            )
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_journal_of_another_session_or_a_corrupt_one_is_refused() {
    let dir = TempDir::new("bad-journal");
    let (wire, journal) = (dir.join("s.wire.jsonl"), dir.join("s.journal.jsonl"));
    record(&wire, &journal, ToolWrites::LastCity).await;

    // The day before: the same keys, another session.
    let other = dir.join("other.journal.jsonl");
    let shifted: Vec<String> = lines(&journal)
        .iter()
        .map(|line| line.replace("\"timestamp_ms\":1718000", "\"timestamp_ms\":1717913"))
        .collect();
    write_lines(&other, &shifted);
    assert_bad_input(
        &["replay", arg(&wire), "--journal", arg(&other)],
        &format!(
            "{}: journal of another session: its mutations span 2024-06-09T06:03:20.000Z – 2024-06-09T06:03:21.970Z, the wire log {} spans 2024-06-10T06:13:20.000Z – 2024-06-10T06:13:21.970Z",
            arg(&other),
            arg(&wire)
        ),
    );

    let mut corrupt = lines(&journal);
    corrupt[4] = "{\"sequence\":5,\"key\":7}".to_owned();
    let path = dir.join("corrupt.journal.jsonl");
    write_lines(&path, &corrupt);
    assert_bad_input(
        &["replay", arg(&wire), "--journal", arg(&path)],
        &format!(
            "{}: corrupt at line 5: not a valid journal entry (invalid type: integer `7`, expected a string, at column 21)",
            arg(&path)
        ),
    );
}

#[tokio::test(start_paused = true)]
async fn a_torn_last_line_is_only_a_warning() {
    let dir = TempDir::new("torn-last");
    let (wire, journal) = (dir.join("s.wire.jsonl"), dir.join("s.journal.jsonl"));
    record(&wire, &journal, ToolWrites::Nothing).await;
    let mut text = std::fs::read_to_string(&wire).unwrap();
    // Cut the last entry (the final close marker) short, as a crash mid-write would.
    text.truncate(text.len() - 20);
    std::fs::write(&wire, text).unwrap();
    let wire = arg(&wire);

    let (code, stdout, stderr) = reel(&["replay", wire]);
    assert_eq!(
        stderr,
        format!("reel: warning: {wire}: torn last line 22 skipped (a write was cut short)\n")
    );
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with(&format!(
            "  reel replay — {wire}\n\n  Wire log:  20 frames (14 inbound, 6 outbound), 1.8s recorded, 1 reconnect\n"
        )),
        "{stdout}"
    );

    let (code, stdout, stderr) = reel(&["show", wire, "--kind", "close"]);
    assert_eq!(
        stderr,
        format!("reel: warning: {wire}: torn last line 22 skipped (a write was cut short)\n")
    );
    assert_eq!(
        (code, stdout.as_str()),
        (
            0,
            "   16  ←  +1.410s  close                             no code \"go_away\", closed by the client\n"
        )
    );
}
