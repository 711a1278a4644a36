//! `reel replay s3://…` and `reel show s3://…` against a real S3-compatible server (moto's
//! server mode, `tests/support/moto.rs`), as real processes: real recordings uploaded with
//! boto3, exact verdicts, exact errors for a missing key and a missing bucket; `--shard`
//! over a prefix.

use crate::cli_support;
use crate::moto::MotoServer;

use cli_support::{TempDir, ToolWrites, record, reel, tamper_frame};

/// The report without its last line (the time taken, the only line that varies).
fn without_timing(stdout: &str) -> String {
    let mut lines: Vec<&str> = stdout.lines().collect();
    lines.pop();
    lines.join("\n")
}

/// Uploads a farm to `s3://tapes/ci/`: `a` (with its journal beside it) and `sub/c`
/// clean, `b` drifted, `bad` not a wire log, `notes.txt` not a wire log by name.
async fn upload_farm(server: &MotoServer, dir: &TempDir) {
    let (wire, journal) = (dir.join("a.wire.jsonl"), dir.join("a.journal.jsonl"));
    record(&wire, &journal, ToolWrites::Nothing).await;
    std::fs::copy(&wire, dir.join("b.wire.jsonl")).unwrap();
    tamper_frame(&dir.join("b.wire.jsonl"), 17, |setup| {
        setup.replace("\"h-1\"", "\"h-9\"")
    });
    std::fs::write(dir.join("bad.wire.jsonl"), "not json\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "hello\n").unwrap();
    server.upload(
        "tapes",
        &[
            (&wire, "ci/a.wire.jsonl"),
            (&journal, "ci/a.journal.jsonl"),
            (&dir.join("b.wire.jsonl"), "ci/b.wire.jsonl"),
            (&wire, "ci/sub/c.wire.jsonl"),
            (&dir.join("bad.wire.jsonl"), "ci/bad.wire.jsonl"),
            (&dir.join("notes.txt"), "ci/notes.txt"),
        ],
    );
}

#[tokio::test(start_paused = true)]
async fn a_prefix_in_a_bucket_replays_like_a_directory() {
    let Some(server) = MotoServer::start() else {
        return;
    };
    let dir = TempDir::new("s3-farm");
    upload_farm(&server, &dir).await;

    let (code, stdout, stderr) = server.reel(&["replay", "s3://tapes/ci/", "--jobs", "2"]);
    assert_eq!(
        (code, stderr.as_str(), without_timing(&stdout).as_str()),
        (
            2,
            "",
            "  CLEAN  s3://tapes/ci/a.wire.jsonl  (20 frames, 3 turns)
  DRIFT  s3://tapes/ci/b.wire.jsonl  (20 frames, 3 turns): 1 outbound divergence; first: frame 17: the replayed frame differs
  ERROR  s3://tapes/ci/bad.wire.jsonl  corrupt at line 1: not a valid wire log entry (expected ident, at column 2)
  CLEAN  s3://tapes/ci/sub/c.wire.jsonl  (20 frames, 3 turns)

  4 sessions: 2 clean, 1 drifted, 1 bad input"
        )
    );

    // The same log read from the bucket and from disk shows the same timeline.
    let (code, from_bucket, stderr) = server.reel(&["show", "s3://tapes/ci/a.wire.jsonl"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let (_, from_disk, _) = reel(&["show", dir.join("a.wire.jsonl").to_str().unwrap()]);
    assert_eq!(from_bucket, from_disk);
}

#[tokio::test(start_paused = true)]
async fn a_missing_key_and_a_missing_bucket_are_errors_never_passes() {
    let Some(server) = MotoServer::start() else {
        return;
    };
    let dir = TempDir::new("s3-missing");
    upload_farm(&server, &dir).await;

    let (code, stdout, stderr) = server.reel(&["replay", "s3://tapes/ci/gone.wire.jsonl"]);
    assert_eq!(
        (code, stderr.as_str(), without_timing(&stdout).as_str()),
        (
            2,
            "",
            "  ERROR  s3://tapes/ci/gone.wire.jsonl  no such key

  1 session: 0 clean, 0 drifted, 1 bad input"
        )
    );

    let (code, stdout, stderr) = server.reel(&["replay", "s3://no-such-bucket/ci/"]);
    assert_eq!(
        (code, stderr.as_str(), without_timing(&stdout).as_str()),
        (
            2,
            "",
            "  ERROR  s3://no-such-bucket/ci/  no such bucket `no-such-bucket`

  1 session: 0 clean, 0 drifted, 1 bad input"
        )
    );

    let (code, stdout, stderr) = server.reel(&["show", "s3://tapes/ci/gone.wire.jsonl"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (2, "", "reel: s3://tapes/ci/gone.wire.jsonl: no such key\n")
    );

    let (code, stdout, stderr) = server.reel(&["replay", "s3://tapes/empty/"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            2,
            "",
            "reel: s3://tapes/empty/: no recordings (*.wire.jsonl) under this prefix\n"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn shards_of_a_prefix_split_it_exactly_and_say_which_shard_they_are() {
    let Some(server) = MotoServer::start() else {
        return;
    };
    let dir = TempDir::new("s3-shards");
    upload_farm(&server, &dir).await;

    let mut seen = Vec::new();
    for (shard, expected) in [
        ("1/2", "  CLEAN  s3://tapes/ci/a.wire.jsonl  (20 frames, 3 turns)
  ERROR  s3://tapes/ci/bad.wire.jsonl  corrupt at line 1: not a valid wire log entry (expected ident, at column 2)

  2 sessions: 1 clean, 0 drifted, 1 bad input
  shard 1/2 of 4 logs"),
        ("2/2", "  DRIFT  s3://tapes/ci/b.wire.jsonl  (20 frames, 3 turns): 1 outbound divergence; first: frame 17: the replayed frame differs
  CLEAN  s3://tapes/ci/sub/c.wire.jsonl  (20 frames, 3 turns)

  2 sessions: 1 clean, 1 drifted, 0 bad input
  shard 2/2 of 4 logs"),
    ] {
        let (_, stdout, stderr) = server.reel(&["replay", "s3://tapes/ci/", "--shard", shard]);
        assert_eq!((stderr.as_str(), without_timing(&stdout).as_str()), ("", expected));
        seen.extend(
            stdout
                .lines()
                .filter_map(|line| line.split_whitespace().nth(1))
                .filter(|name| name.starts_with("s3://"))
                .map(str::to_owned),
        );
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "s3://tapes/ci/a.wire.jsonl",
            "s3://tapes/ci/b.wire.jsonl",
            "s3://tapes/ci/bad.wire.jsonl",
            "s3://tapes/ci/sub/c.wire.jsonl"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_studio_lists_and_opens_the_recordings_of_a_prefix() {
    use std::io::{BufRead, BufReader, Read, Write};
    let Some(server) = MotoServer::start() else {
        return;
    };
    let dir = TempDir::new("s3-studio");
    upload_farm(&server, &dir).await;
    let mut studio = std::process::Command::new(env!("CARGO_BIN_EXE_reel"))
        .args([
            "studio",
            "s3://tapes/ci/",
            "--json",
            "--s3-endpoint",
            &server.endpoint,
        ])
        .env("AWS_ACCESS_KEY_ID", crate::moto::ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", crate::moto::SECRET_KEY)
        .env("AWS_DEFAULT_REGION", "us-east-1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(studio.stdout.take().unwrap());
    let mut ready = String::new();
    out.read_line(&mut ready).unwrap();
    let ready: serde_json::Value = serde_json::from_str(&ready).unwrap();
    assert_eq!(
        (ready["dir"].as_str(), ready["recordings"].as_u64()),
        // The studio lists a directory's own recordings, not its subdirectories'.
        (Some("s3://tapes/ci/"), Some(3))
    );
    let addr = ready["addr"].as_str().unwrap().to_owned();
    let get = |target: &str| {
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    let listing = get("/api/recordings");
    assert!(listing.starts_with("HTTP/1.1 200"), "{listing}");
    for name in ["a.wire.jsonl", "b.wire.jsonl", "bad.wire.jsonl"] {
        assert!(listing.contains(name), "{name} not listed: {listing}");
    }
    let opened = get("/api/recordings/a.wire.jsonl");
    // SIGTERM: the studio stops as it does for a user, removing its copy.
    let stopped = std::process::Command::new("kill")
        .arg(studio.id().to_string())
        .status()
        .unwrap();
    assert!(stopped.success());
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "{\"event\":\"stopped\"}\n");
    assert!(studio.wait().unwrap().success());
    assert!(opened.starts_with("HTTP/1.1 200"), "{opened}");
}

#[test]
fn refused_credentials_are_an_error_with_the_servers_words() {
    let Some(server) = MotoServer::start_refusing() else {
        return;
    };
    let (code, stdout, stderr) = server.reel(&["replay", "s3://tapes/ci/"]);
    assert_eq!(
        (code, stderr.as_str(), without_timing(&stdout).as_str()),
        (
            2,
            "",
            "  ERROR  s3://tapes/ci/  access refused: InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records.

  1 session: 0 clean, 0 drifted, 1 bad input"
        )
    );
    let (code, stdout, stderr) = server.reel(&["show", "s3://tapes/ci/a.wire.jsonl"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            2,
            "",
            "reel: s3://tapes/ci/a.wire.jsonl: access refused: InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records.\n"
        )
    );
}

/// An S3-compatible server that announces 1,000 bytes, sends 100 and hangs up; the
/// client's retry, for the rest, is answered 404. Serves until the test ends.
fn cut_short_server() -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else {
                return;
            };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut ranged = false;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                ranged |= line.to_ascii_lowercase().starts_with("range:");
            }
            let answer = if ranged {
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_owned()
            } else {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"e1\"\r\n\
                     Last-Modified: Wed, 21 Oct 2015 07:28:00 GMT\r\nConnection: close\r\n\r\n{}",
                    "{\"seq\":1}\n".repeat(10)
                )
            };
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    endpoint
}

#[test]
fn an_object_cut_short_is_a_partial_object_not_a_short_log() {
    let endpoint = cut_short_server();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_reel"))
        .args([
            "show",
            "s3://tapes/x.wire.jsonl",
            "--s3-endpoint",
            &endpoint,
        ])
        .env("AWS_ACCESS_KEY_ID", crate::moto::ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", crate::moto::SECRET_KEY)
        .env("AWS_DEFAULT_REGION", "us-east-1")
        .output()
        .unwrap();
    assert_eq!(
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).as_ref(),
            String::from_utf8_lossy(&output.stderr).as_ref()
        ),
        (
            Some(2),
            "",
            "reel: cannot read s3://tapes/x.wire.jsonl: partial object: read 100 of 1000 bytes\n"
        )
    );
}
