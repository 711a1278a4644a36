//! `reel replay` over many logs: real recordings (a session reel runs against a scripted
//! server), copied into a directory tree, one of them tampered so that it drifts, one not a
//! wire log at all. Exact lines, exit codes, JUnit XML and JSON.

use crate::cli_support;

use cli_support::{TempDir, ToolWrites, arg, record, reel, tamper_frame};
use serde_json::Value;

/// A farm: `a` and `sub/c` clean, `b` drifted (its reconnect's setup as if another handle
/// had been presented), `bad` not a wire log.
async fn farm(dir: &TempDir) {
    let (wire, journal) = (dir.join("a.wire.jsonl"), dir.join("a.journal.jsonl"));
    record(&wire, &journal, ToolWrites::Nothing).await;
    std::fs::remove_file(&journal).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::copy(&wire, dir.join("b.wire.jsonl")).unwrap();
    std::fs::copy(&wire, dir.join("sub/c.wire.jsonl")).unwrap();
    tamper_frame(&dir.join("b.wire.jsonl"), 17, |setup| {
        setup.replace("\"h-1\"", "\"h-9\"")
    });
    std::fs::write(dir.join("bad.wire.jsonl"), "not json\n").unwrap();
    // Not a wire log by name: left out when the directory is expanded.
    std::fs::write(dir.join("notes.txt"), "hello\n").unwrap();
}

/// The report without its last line (the time taken, the only line that varies).
fn without_timing(stdout: &str) -> String {
    let mut lines: Vec<&str> = stdout.lines().collect();
    let timing = lines.pop().unwrap_or_default();
    assert!(
        timing.starts_with("  in ") && timing.ends_with(" sessions/s)"),
        "{timing}"
    );
    lines.join("\n")
}

/// `time="…"` attributes set to `T`.
fn without_times(xml: &str) -> String {
    let mut out = String::new();
    let mut rest = xml;
    while let Some(at) = rest.find(" time=\"") {
        out.push_str(&rest[..at]);
        out.push_str(" time=\"T\"");
        let after = &rest[at + 7..];
        rest = &after[after.find('"').unwrap() + 1..];
    }
    out.push_str(rest);
    out
}

#[tokio::test(start_paused = true)]
async fn a_directory_replays_every_log_below_it_and_reports_each() {
    let dir = TempDir::new("farm-dir");
    farm(&dir).await;
    let root = dir.join("");
    let root = root.to_str().unwrap().trim_end_matches('/');
    let junit = dir.join("report.xml");

    let (code, stdout, stderr) = reel(&["replay", root, "--jobs", "2", "--junit", arg(&junit)]);
    assert_eq!((code, stderr.as_str()), (2, ""));
    let p = |name: &str| format!("{root}/{name}");
    assert_eq!(
        without_timing(&stdout),
        format!(
            "  CLEAN  {a}  (20 frames, 3 turns)
  DRIFT  {b}  (20 frames, 3 turns): 1 outbound divergence; first: frame 17: the replayed frame differs
  ERROR  {bad}  corrupt at line 1: not a valid wire log entry (expected ident, at column 2)
  CLEAN  {c}  (20 frames, 3 turns)

  4 sessions: 2 clean, 1 drifted, 1 bad input",
            a = p("a.wire.jsonl"),
            b = p("b.wire.jsonl"),
            bad = p("bad.wire.jsonl"),
            c = p("sub/c.wire.jsonl"),
        )
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(
        without_times(&xml),
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="reel replay" tests="4" skipped="0" failures="1" errors="1" time="T">
    <testsuite name="reel replay" tests="4" skipped="0" errors="1" failures="1" time="T">
        <testcase name="{a}" classname="reel.replay" time="T"/>
        <testcase name="{b}" classname="reel.replay" time="T">
            <failure message="1 outbound divergence; first: frame 17: the replayed frame differs" type="drift">frame 17: the replayed frame differs
  setup.sessionResumption.handle: expected &quot;h-9&quot;, actual &quot;h-1&quot;</failure>
        </testcase>
        <testcase name="{bad}" classname="reel.replay" time="T">
            <error message="{bad}: corrupt at line 1: not a valid wire log entry (expected ident, at column 2)" type="bad_input"/>
        </testcase>
        <testcase name="{c}" classname="reel.replay" time="T"/>
    </testsuite>
</testsuites>
"#,
            a = p("a.wire.jsonl"),
            b = p("b.wire.jsonl"),
            bad = p("bad.wire.jsonl"),
            c = p("sub/c.wire.jsonl"),
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_glob_and_files_replay_and_the_exit_code_says_the_worst() {
    let dir = TempDir::new("farm-glob");
    farm(&dir).await;
    let pattern = format!(
        "{}/?.wire.jsonl",
        dir.join("").to_str().unwrap().trim_end_matches('/')
    );

    // The glob: a and b (bad has a longer name).
    let (code, stdout, _) = reel(&["replay", &pattern, "--jobs", "1"]);
    assert_eq!(
        code, 1,
        "a drifted session and no bad input: exit 1\n{stdout}"
    );
    assert!(without_timing(&stdout).ends_with("  2 sessions: 1 clean, 1 drifted, 0 bad input"));
    // No verdict is left beside the logs unless asked...
    assert!(!dir.join("a.replay.json").exists());
    assert!(!dir.join("b.replay.json").exists());
    // ...and asked, each log gets its own.
    let (code, _, _) = reel(&["replay", &pattern, "--jobs", "1", "--save-verdict"]);
    assert_eq!(code, 1);
    let verdict = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    assert_eq!(
        (
            verdict("a.replay.json")["verdict"].clone(),
            verdict("b.replay.json")["verdict"].clone()
        ),
        (Value::from("CLEAN"), Value::from("DRIFT"))
    );

    // Two clean files: exit 0, in the order given.
    let (a, c) = (dir.join("a.wire.jsonl"), dir.join("sub/c.wire.jsonl"));
    let (code, stdout, _) = reel(&["replay", arg(&c), arg(&a)]);
    assert_eq!(code, 0);
    let names: Vec<&str> = stdout
        .lines()
        .take(2)
        .map(|l| l.split("  ").nth(2).unwrap())
        .collect();
    assert_eq!(names, [arg(&c), arg(&a)]);

    // A glob that matches nothing is bad input, named.
    let nothing = format!(
        "{}/*.nothing",
        dir.join("").to_str().unwrap().trim_end_matches('/')
    );
    let (code, stdout, _) = reel(&["replay", arg(&a), &nothing]);
    assert_eq!(code, 2);
    assert!(
        stdout.contains(&format!("  ERROR  {nothing}  ")),
        "{stdout}"
    );
}

#[tokio::test(start_paused = true)]
async fn json_has_one_entry_per_session_and_the_totals() {
    let dir = TempDir::new("farm-json");
    farm(&dir).await;
    let (a, b) = (dir.join("a.wire.jsonl"), dir.join("b.wire.jsonl"));
    let (code, stdout, _) = reel(&["replay", arg(&a), arg(&b), "--json"]);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        report["total"],
        serde_json::json!({"sessions": 2, "clean": 1, "drifted": 1, "bad_input": 0})
    );
    let verdicts: Vec<&str> = report["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["clean", "drift"]);
    assert_eq!(
        report["sessions"][1]["drift"],
        Value::from("1 outbound divergence")
    );
}

#[test]
fn a_journal_with_several_logs_is_bad_input() {
    let (code, _, stderr) = reel(&[
        "replay",
        "x.wire.jsonl",
        "y.wire.jsonl",
        "--journal",
        "x.journal.jsonl",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(
            "--journal compares one session's journal: give one wire log with it, not 2 logs"
        ),
        "{stderr}"
    );
}

#[tokio::test(start_paused = true)]
async fn shards_of_a_directory_are_disjoint_cover_it_and_do_not_depend_on_where_it_is() {
    let dir = TempDir::new("farm-shards");
    farm(&dir).await;
    // The same recordings under another root, as another machine's checkout would hold them.
    let other = TempDir::new("farm-shards-other");
    for name in ["a", "b", "bad", "sub/c"] {
        std::fs::create_dir_all(other.join("sub")).unwrap();
        std::fs::copy(
            dir.join(&format!("{name}.wire.jsonl")),
            other.join(&format!("{name}.wire.jsonl")),
        )
        .unwrap();
    }
    let names = |root: &TempDir, shard: &str| {
        let root = root.join("");
        let root = root.to_str().unwrap().trim_end_matches('/').to_owned();
        let (_, stdout, stderr) = reel(&["replay", &root, "--shard", shard, "--json"]);
        assert_eq!(stderr, "");
        let report: Value = serde_json::from_str(&stdout).unwrap();
        let shard_field = report["shard"].clone();
        let logs: Vec<String> = report["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                s["log"]
                    .as_str()
                    .unwrap()
                    .strip_prefix(&root)
                    .unwrap()
                    .to_owned()
            })
            .collect();
        (logs, shard_field)
    };
    let mut all = Vec::new();
    for (shard, expected) in [
        ("1/3", vec!["/a.wire.jsonl", "/sub/c.wire.jsonl"]),
        ("2/3", vec!["/b.wire.jsonl"]),
        ("3/3", vec!["/bad.wire.jsonl"]),
    ] {
        let (here, field) = names(&dir, shard);
        assert_eq!(here, expected, "shard {shard}");
        assert_eq!(names(&other, shard).0, expected, "shard {shard} elsewhere");
        let (index, count) = shard.split_once('/').unwrap();
        assert_eq!(
            field,
            serde_json::json!({
                "index": index.parse::<u64>().unwrap(),
                "count": count.parse::<u64>().unwrap(),
                "of_logs": 4
            })
        );
        all.extend(here);
    }
    all.sort();
    assert_eq!(
        all,
        [
            "/a.wire.jsonl",
            "/b.wire.jsonl",
            "/bad.wire.jsonl",
            "/sub/c.wire.jsonl"
        ]
    );

    // The JUnit report names the shard too.
    let junit = dir.join("shard.xml");
    let root = dir.join("");
    let root = root.to_str().unwrap().trim_end_matches('/');
    reel(&["replay", root, "--shard", "2/3", "--junit", arg(&junit)]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testsuite name=\"reel replay (shard 2/3)\" tests=\"1\""),
        "{xml}"
    );

    for (value, why) in [
        (
            "0/3",
            "shard `0/3`: shards are numbered from 1, so i must be at least 1",
        ),
        (
            "4/3",
            "shard `4/3`: shard 4 of 3 does not exist (i must be at most 3)",
        ),
        (
            "x/y",
            "shard `x/y`: expected i/n with whole numbers, such as 1/3",
        ),
    ] {
        let (code, stdout, stderr) = reel(&["replay", "x.wire.jsonl", "--shard", value]);
        assert_eq!((code, stdout.as_str()), (2, ""));
        assert_eq!(
            stderr.lines().next().unwrap(),
            format!("error: invalid value '{value}' for '--shard <I/N>': {why}")
        );
    }
}
