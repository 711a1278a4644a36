//! A wire log or journal with a NUL-filled region (what a power loss leaves) is bad input
//! naming the file and its first bad line, not "binary data"; with `--salvage`, `replay`,
//! `show`, `diff` and `export` read exactly the entries before it.

use crate::cli_support;

use std::path::Path;

use cli_support::{TempDir, ToolWrites, arg, lines, record, reel, write_lines};

/// Writes `lines[..keep]`, then what a power cut leaves of the rest: the first 15 bytes of
/// the next line, then zeros up to the original length.
fn cut_by_power_loss(path: &Path, lines: &[String], keep: usize) {
    let mut bytes: Vec<u8> = lines[..keep]
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    bytes.extend_from_slice(&lines[keep].as_bytes()[..15]);
    let full: usize = lines.iter().map(|l| l.len() + 1).sum();
    bytes.resize(full, 0);
    std::fs::write(path, bytes).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_nul_filled_log_names_its_first_bad_line_and_salvage_reads_the_entries_before_it() {
    let dir = TempDir::new("salvage");
    let (wire, journal) = (dir.join("s.wire.jsonl"), dir.join("s.journal.jsonl"));
    record(&wire, &journal, ToolWrites::Nothing).await;
    let recorded = lines(&wire);
    assert_eq!(recorded.len(), 22);

    // Lines 1–10 survive, line 11 is where the zeros start.
    let damaged = dir.join("damaged.wire.jsonl");
    cut_by_power_loss(&damaged, &recorded, 10);
    let clean = dir.join("first10.wire.jsonl");
    write_lines(&clean, &recorded[..10]);
    let (damaged, clean) = (arg(&damaged), arg(&clean));
    let bad = format!(
        "reel: {damaged}: line 11 is NUL-filled: the wire log was cut off there (a power loss leaves zeros where unwritten entries were); --salvage reads the entries before it\n"
    );
    let salvaged = format!(
        "reel: warning: {damaged}: salvaged 10 entries; line 11 and after are not read (it is NUL-filled)\n"
    );

    // Without --salvage: bad input, naming the line (show has streamed rows before it).
    let (_, first10, _) = reel(&["show", clean]);
    assert_eq!(first10.lines().count(), 10);
    let (code, shown, stderr) = reel(&["show", damaged]);
    assert_eq!((code, stderr), (2, bad.clone()));
    assert!(first10.starts_with(&shown), "{shown}");
    for args in [vec!["replay", damaged], vec!["diff", clean, damaged]] {
        assert_eq!(reel(&args), (2, String::new(), bad.clone()), "{args:?}");
    }
    let (code, _, stderr) = reel(&["export", damaged]);
    assert_eq!((code, stderr), (2, bad.clone()));

    // With --salvage: exactly what the first 10 lines alone give, and a warning.
    assert_eq!(
        reel(&["show", damaged, "--salvage"]),
        (0, first10, salvaged.clone())
    );
    let (code, stdout, stderr) = reel(&["diff", clean, damaged, "--salvage"]);
    assert_eq!((code, stderr), (0, salvaged.clone()), "{stdout}");
    let (_, trace, _) = reel(&["export", clean, "--name", "s"]);
    assert_eq!(
        reel(&["export", damaged, "--name", "s", "--salvage"]),
        (0, trace, salvaged.clone())
    );
    let (code, stdout, stderr) = reel(&["replay", clean]);
    let (salvaged_code, salvaged_stdout, salvaged_stderr) = reel(&["replay", damaged, "--salvage"]);
    assert_eq!(salvaged_stderr, salvaged);
    assert_eq!(stderr, "");
    assert_eq!(
        (salvaged_code, salvaged_stdout.replace(damaged, clean)),
        (code, stdout)
    );
}

#[tokio::test(start_paused = true)]
async fn a_nul_filled_journal_names_its_first_bad_line_and_salvage_compares_the_entries_before_it()
{
    let dir = TempDir::new("salvage-journal");
    let (wire, journal) = (dir.join("s.wire.jsonl"), dir.join("s.journal.jsonl"));
    record(&wire, &journal, ToolWrites::LastCity).await;
    let recorded = lines(&journal);
    let damaged = dir.join("damaged.journal.jsonl");
    cut_by_power_loss(&damaged, &recorded, 2);
    assert_eq!(
        reel(&["replay", arg(&wire), "--journal", arg(&damaged)]),
        (
            2,
            String::new(),
            format!(
                "reel: {}: line 3 is NUL-filled: the journal was cut off there (a power loss leaves zeros where unwritten entries were); --salvage reads the entries before it\n",
                arg(&damaged)
            )
        )
    );
    // Salvaged, the journal is its first two mutations: the replay wrote more, so it drifts
    // (exit 1) exactly as it does against a journal of those two lines alone.
    let clean = dir.join("first2.journal.jsonl");
    write_lines(&clean, &recorded[..2]);
    let (code, stdout, stderr) = reel(&["replay", arg(&wire), "--journal", arg(&clean)]);
    assert_eq!((code, stderr.as_str()), (1, ""));
    assert_eq!(
        reel(&[
            "replay",
            arg(&wire),
            "--journal",
            arg(&damaged),
            "--salvage"
        ]),
        (
            1,
            stdout.replace(arg(&clean), arg(&damaged)),
            format!(
                "reel: warning: {}: salvaged 2 entries; line 3 and after are not read (it is NUL-filled)\n",
                arg(&damaged)
            )
        )
    );
}
