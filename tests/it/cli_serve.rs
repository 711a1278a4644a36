//! `reel serve`: bad arguments exit 2 with a clear message; a running server prints its
//! URLs, replays a tape to a client, prints a mismatch's JSON-path diff on stderr, and stops
//! cleanly on Ctrl-C (SIGINT).

use crate::serve_support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use reel_actors::transport::{Connector, LinkEvent, LinkFrame, LinkOptions, WebSocketConnector};
use reel_protocol::ApiEndpoint;
use serve_support::{ANSWER, HELLO, SETUP, SETUP_COMPLETE, write_tape};

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

fn temp_dir(name: &str) -> PathBuf {
    serve_support::temp_dir("cli-serve", name)
}

#[test]
fn bad_arguments_exit_2_with_a_clear_message() {
    let dir = temp_dir("bad-args");
    let tape = dir.join("t.wire.jsonl");
    write_tape(&tape);
    let tape = tape.to_str().unwrap();
    let no_dir = dir.join("none");
    let no_dir = no_dir.to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["serve"],
            "reel serve: nothing to serve: give tapes to replay (--tape FILE, --tapes DIR) or an --upstream to record through\n",
        ),
        (
            &["serve", "--tape", tape, "--speed", "0"],
            "reel serve: --speed must be a positive number (1 = recorded pace), not 0\n",
        ),
        (
            &["serve", "--mode", "record"],
            "reel serve: record mode needs --upstream URL to record through\n",
        ),
        (
            &[
                "serve", "--tape", tape, "--match", "strict", "--rules", tape,
            ],
            "reel serve: --rules is for --match loose, not strict\n",
        ),
        (
            &["serve", "--upstream", "https://example.com"],
            "reel serve: the upstream https://example.com is not a ws:// or wss:// URL\n",
        ),
        (
            &["serve", "--tapes", no_dir],
            &format!("reel serve: cannot list the tape directory {no_dir}: "),
        ),
        (
            &["serve", "--tape", tape, "--tls-cert", tape],
            "error: the following required arguments were not provided:\n  --tls-key <FILE>\n",
        ),
    ];
    for (args, expected) in cases {
        let (code, stdout, stderr) = reel(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stdout, "", "{args:?}");
        assert!(stderr.starts_with(expected), "{args:?}: {stderr}");
    }
    let (code, _, stderr) = reel(&[
        "serve",
        "--tape",
        dir.join("missing.wire.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("reel serve: cannot access `"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_running_server_replays_reports_and_stops_on_ctrl_c() {
    let dir = temp_dir("running");
    let tape = dir.join("hello.wire.jsonl");
    write_tape(&tape);
    let mut child = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["serve", "--tape", tape.to_str().unwrap(), "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Standard error, line by line, as the server prints it.
    let (lines, stderr_lines) = std::sync::mpsc::channel::<String>();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        for line in stderr.lines() {
            let _ = lines.send(line.unwrap());
        }
    });
    let mut printed = Vec::new();
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "{printed:?}");
        let done = line.starts_with("Ctrl-C");
        printed.push(line.trim_end().to_owned());
        if done {
            break;
        }
    }
    assert_eq!(
        printed[0],
        "reel serve: replay mode, 1 tape; strict matching; frames sent at once"
    );
    let base = printed[1].strip_prefix("listening on ").unwrap().to_owned();
    assert!(base.starts_with("ws://127.0.0.1:"), "{base}");
    let live =
        format!("{base}/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent");
    assert_eq!(printed[2], format!("  Google AI: {live}"));

    let request = ApiEndpoint::google_ai("AIzaSECRET")
        .with_base_url(&base)
        .connect_request();
    let connect = || WebSocketConnector::new().connect(&request, &LinkOptions::default());
    let frame = |text: &str| Some(LinkEvent::Frame(LinkFrame::text(text)));

    let (mut sender, mut receiver) = connect().await.unwrap();
    sender.send(LinkFrame::text(SETUP)).await.unwrap();
    assert_eq!(receiver.recv().await, frame(SETUP_COMPLETE));
    sender.send(LinkFrame::text(HELLO)).await.unwrap();
    assert_eq!(receiver.recv().await, frame(ANSWER));
    sender.close(1000, String::new()).await.unwrap();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Closed {
            code: Some(1000),
            reason: None
        })
    );

    let (mut sender, mut receiver) = connect().await.unwrap();
    sender.send(LinkFrame::text(SETUP)).await.unwrap();
    assert_eq!(receiver.recv().await, frame(SETUP_COMPLETE));
    sender
        .send(LinkFrame::text(HELLO.replace("Hello", "Bye")))
        .await
        .unwrap();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Closed {
            code: Some(4001),
            reason: Some(
                "reel: frame 2 does not match the tape at clientContent.turns[0].parts[0].text"
                    .into()
            ),
        })
    );
    drop((sender, receiver));

    // The server has reported both connections (the mismatch with its diff)...
    let tape_name = tape.display().to_string();
    let reports: Vec<String> = (0..3).map(|_| stderr_lines.recv().unwrap()).collect();
    assert_eq!(
        reports,
        [
            format!(
                "reel serve: connection 1: replayed {tape_name} (connection 1): 2 client frames matched; the client closed 1000"
            ),
            format!(
                "reel serve: connection 2: client frame 2 does not match {tape_name} (connection 1, seq 3)"
            ),
            "  clientContent.turns[0].parts[0].text: expected \"Hello\", received \"Bye\""
                .to_owned(),
        ]
    );
    assert!(!reports.concat().contains("SECRET"));

    // ...and stops on Ctrl-C, sent to the child this test started.
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(child.wait().unwrap().code(), Some(0));
    reader.join().unwrap();
    let rest: Vec<String> = stderr_lines.try_iter().collect();
    assert_eq!(
        rest,
        [
            "reel serve: stopping; finishing open sessions",
            "reel serve: stopped"
        ]
    );
}
