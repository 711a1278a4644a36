//! What every command's output has in common: the verdicts coloured on a terminal and
//! plain otherwise. Real processes on the bundled tape.

use std::process::Command;

/// The bundled weather tape, which replays CLEAN.
const TAPE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/tapes/weather.wire.jsonl"
);

/// `reel replay TAPE`'s last line with these variables set (and the others that decide
/// colour removed).
fn last_line_with(env: &[(&str, &str)]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reel"));
    command
        .args(["replay", TAPE])
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout.lines().last().unwrap().to_owned()
}

#[test]
fn the_verdict_is_coloured_on_a_terminal_and_plain_in_a_pipe_or_with_no_color() {
    const PLAIN: &str = "  CLEAN — every runtime frame as recorded; no journal given to compare.";
    // Standard output is a pipe here: plain.
    assert_eq!(last_line_with(&[]), PLAIN);
    // As a terminal would get it (CLICOLOR_FORCE stands for the terminal): green, bold.
    assert_eq!(
        last_line_with(&[("CLICOLOR_FORCE", "1")]),
        "  \u{1b}[1;32mCLEAN\u{1b}[0m — every runtime frame as recorded; no journal given to compare."
    );
    // NO_COLOR wins; an empty NO_COLOR is no request; CLICOLOR_FORCE=0 forces nothing.
    assert_eq!(
        last_line_with(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
        PLAIN
    );
    assert_eq!(
        last_line_with(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")]),
        last_line_with(&[("CLICOLOR_FORCE", "1")])
    );
    assert_eq!(last_line_with(&[("CLICOLOR_FORCE", "0")]), PLAIN);
}

/// `reel ARGS` with colour off: exit code, standard output, standard error.
fn reel(args: &[&str]) -> (i32, String, String) {
    crate::cli_support::reel(args)
}

#[test]
fn every_command_writes_its_file_with_o_or_output_and_keeps_the_old_spellings() {
    let dir = crate::cli_support::TempDir::new("consistency-output");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();

    // reel demo: -o DIR, --output DIR, and the old --out DIR.
    for (flag, name) in [("-o", "d1"), ("--output", "d2"), ("--out", "d3")] {
        let (code, _, stderr) = reel(&["demo", "--speed", "0", flag, &path(name)]);
        assert_eq!((code, stderr.as_str()), (0, ""), "demo {flag}");
        let written: Vec<String> = std::fs::read_dir(dir.join(name))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|file| file.ends_with(".wire.jsonl"))
            .collect();
        assert_eq!(written.len(), 1, "demo {flag}: {written:?}");
    }

    // reel show: -o OUT.html, --output, and the old --html.
    for (flag, name) in [
        ("-o", "a.html"),
        ("--output", "b.html"),
        ("--html", "c.html"),
    ] {
        let (code, _, stderr) = reel(&["show", TAPE, flag, &path(name)]);
        assert_eq!(code, 0, "show {flag}: {stderr}");
        let page = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(page.starts_with("<!doctype html>"), "show {flag}");
    }

    // reel export -o, with --json: what was written.
    let (code, stdout, stderr) = reel(&["export", TAPE, "-o", &path("t.json"), "--json"]);
    let bytes = std::fs::metadata(dir.join("t.json")).unwrap().len();
    assert_eq!((code, stderr.as_str()), (0, ""), "export --json: {stdout}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap(),
        serde_json::json!({"output": path("t.json"), "format": "trace", "bytes": bytes})
    );
    // --json reports a file written; without -o the trace itself is the output.
    let (code, _, stderr) = reel(&["export", TAPE, "--json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--output <OUT>"), "{stderr}");
}

#[test]
fn the_studio_says_where_it_listens_as_json_lines_with_json() {
    use std::io::{BufRead, BufReader};
    let dir = crate::cli_support::TempDir::new("consistency-studio");
    std::fs::copy(TAPE, dir.join("weather.wire.jsonl")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["studio", dir.join("").to_str().unwrap(), "--json"])
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let mut ready: serde_json::Value = serde_json::from_str(&line).unwrap();
    let addr = ready["addr"].as_str().unwrap().to_owned();
    let token = ready["token"].as_str().unwrap().to_owned();
    assert!(
        addr.starts_with("127.0.0.1:") && token.len() >= 16,
        "{ready}"
    );
    ready["addr"] = "ADDR".into();
    ready["url"] = ready["url"].as_str().unwrap().replace(&addr, "ADDR").into();
    ready["token"] = "TOKEN".into();
    assert_eq!(
        ready,
        serde_json::json!({
            "event": "ready", "url": "http://ADDR/", "addr": "ADDR", "token": "TOKEN",
            "token_for_everything": false, "dir": dir.join("").to_str().unwrap(),
            "recordings": 1,
        })
    );
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert_eq!(rest, "{\"event\":\"stopped\"}\n");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_recording_has_one_frame_count_in_replay_the_farm_and_the_studio() {
    let dir = crate::cli_support::TempDir::new("consistency-frames");
    let copy = dir.join("weather.wire.jsonl");
    std::fs::copy(TAPE, &copy).unwrap();
    let copy = copy.to_str().unwrap();
    // The single report.
    let (_, stdout, _) = reel(&["replay", copy, "--json"]);
    let single: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // The farm (a directory), as JSON and as text.
    let root = dir.join("");
    let root = root.to_str().unwrap().trim_end_matches('/');
    let (_, stdout, _) = reel(&["replay", root, "--json"]);
    let farm: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let (_, text, _) = reel(&["replay", root]);
    // The studio's list.
    let listed = reel::studio::catalog::list(dir.join("").as_path()).unwrap();
    let reel::studio::catalog::Listed::Recording(info) = &listed[0] else {
        panic!("{listed:?}")
    };
    assert_eq!(
        (
            single["wire_log"]["frames"].as_u64(),
            farm["sessions"][0]["frames"].as_u64(),
            info.frames,
        ),
        (Some(22), Some(22), 22)
    );
    assert_eq!(
        text.lines().next().unwrap(),
        format!("  CLEAN  {copy}  (22 frames, 3 turns)")
    );
}

#[test]
fn after_the_demo_the_commands_the_readme_suggests_end_clean() {
    let readme = include_str!("../../README.md");
    // The `sh` block after the demo's: the next commands a new user runs.
    let suggested: Vec<String> = crate::markdown::blocks(readme)
        .into_iter()
        .find(|block| block.lang() == "sh" && block.text.starts_with("reel replay recordings/"))
        .expect("the README suggests what to run after `reel demo`")
        .text
        .lines()
        .map(|line| line.split('#').next().unwrap().trim().to_owned())
        .collect();
    assert_eq!(
        suggested,
        [
            "reel replay recordings/ --save-verdict",
            "reel studio recordings/"
        ]
    );
    let dir = crate::cli_support::TempDir::new("consistency-after-demo");
    let recordings = dir.join("recordings");
    let recordings = recordings.to_str().unwrap();
    let (code, _, _) = reel(&["demo", "--speed", "0", "-o", recordings]);
    assert_eq!(code, 0);
    // The replay, as suggested (with the demo's directory): CLEAN, exit 0.
    let args: Vec<&str> = suggested[0]
        .split_whitespace()
        .skip(1)
        .map(|arg| {
            if arg == "recordings/" {
                recordings
            } else {
                arg
            }
        })
        .collect();
    let (code, stdout, stderr) = reel(&args);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert!(
        stdout.contains("  1 session: 1 clean, 0 drifted, 0 bad input\n"),
        "{stdout}"
    );
    // The studio's list marks the recording CLEAN, not red.
    let listed = reel::studio::catalog::list(std::path::Path::new(recordings)).unwrap();
    let reel::studio::catalog::Listed::Recording(info) = &listed[0] else {
        panic!("{listed:?}")
    };
    assert_eq!(
        info.last_replay.as_ref().map(|note| note.verdict.as_str()),
        Some("CLEAN")
    );
}
