//! Issue 25 §6, "files are opened once": every command that reads a recording reads it
//! once, so a pipe works as well as a file. Real processes and real FIFOs: `reel show
//! <(cat log)` through bash, a FIFO with a writer for `show`, `replay`, `export` and
//! `diff`, `-` for standard input, a FIFO inside a directory given to `reel replay`, an
//! empty directory, and the studio's list next to a link out of its directory.
//!
//! A command that hangs (the old code opened a FIFO a second time, with no writer left)
//! is killed after [`HANG`] and fails the test: the bound is a safety net, nothing waits
//! on it.

use crate::cli_support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use cli_support::{TempDir, ToolWrites, arg, record, reel};

/// How long a command may take before it is taken for hung.
const HANG: Duration = Duration::from_secs(60);

/// Runs `command` (with `stdin` fed to it, if any); its exit code, stdout and stderr. A
/// command still running after [`HANG`] is killed and the test fails.
fn run(mut command: Command, stdin: Option<Vec<u8>>) -> (i32, String, String) {
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let pid = child.id();
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match finished.recv_timeout(HANG) {
        Ok(output) => {
            let output = output.unwrap();
            (
                output.status.code().unwrap(),
                String::from_utf8(output.stdout).unwrap(),
                String::from_utf8(output.stderr).unwrap(),
            )
        }
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("{command:?} hung: still running after {HANG:?}");
        }
    }
}

/// `reel ARGS`.
fn reel_cmd(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reel"));
    command.args(args);
    command
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A FIFO at `path` with a writer that writes `source`'s bytes into it once, then closes
/// it (as `cat source > fifo` would).
fn fifo_of(path: &Path, source: &Path) {
    mkfifo(path);
    let bytes = std::fs::read(source).unwrap();
    let path = path.to_owned();
    std::thread::spawn(move || {
        let mut fifo = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        let _ = fifo.write_all(&bytes);
    });
}

/// A recorded session in `dir`: its wire log.
async fn recording(dir: &TempDir) -> std::path::PathBuf {
    let (wire, journal) = (dir.join("s.wire.jsonl"), dir.join("s.journal.jsonl"));
    record(&wire, &journal, ToolWrites::LastCity).await;
    wire
}

#[tokio::test(start_paused = true)]
async fn show_reads_a_process_substitution_a_fifo_and_standard_input_once() {
    let dir = TempDir::new("once-show");
    let wire = recording(&dir).await;
    let (code, expected, stderr) = reel(&["show", arg(&wire)]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(expected.lines().count(), 20, "{expected}");

    // `reel show <(cat log)`: bash hands reel /dev/fd/N, a pipe.
    let mut bash = Command::new("bash");
    bash.args(["-c", "\"$0\" show <(cat \"$1\")"])
        .arg(env!("CARGO_BIN_EXE_reel"))
        .arg(&wire);
    assert_eq!(run(bash, None), (0, expected.clone(), String::new()));

    let fifo = dir.join("fifo.wire.jsonl");
    fifo_of(&fifo, &wire);
    assert_eq!(
        run(reel_cmd(&["show", arg(&fifo)]), None),
        (0, expected.clone(), String::new())
    );

    let stdin = std::fs::read(&wire).unwrap();
    assert_eq!(
        run(reel_cmd(&["show", "-"]), Some(stdin.clone())),
        (0, expected, String::new())
    );

    // The self-contained page is made in several passes: standard input is copied once.
    let page = dir.join("page.html");
    let (code, stdout, stderr) = run(reel_cmd(&["show", "-", "--html", arg(&page)]), Some(stdin));
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            "",
            format!("reel show: {}: 22 entries, with the audio\n", arg(&page)).as_str()
        )
    );
}

#[tokio::test(start_paused = true)]
async fn replay_export_and_diff_read_a_fifo_once() {
    let dir = TempDir::new("once-others");
    let wire = recording(&dir).await;
    let journal = dir.join("s.journal.jsonl");

    // replay: the same report as from the file, the path aside; with the journal piped too
    // (it drifts: the app's tool wrote state that an offline replay does not write, which
    // makes the journal comparison part of the report).
    let (code, expected, stderr) = reel(&["replay", arg(&wire), "--journal", arg(&journal)]);
    assert_eq!((code, stderr.as_str()), (1, ""), "{expected}");
    assert!(
        expected.contains("app:last_city: recorded \"London\", missing on replay"),
        "{expected}"
    );
    let fifo = dir.join("replay.wire.jsonl");
    let journal_fifo = dir.join("replay.journal.jsonl");
    fifo_of(&fifo, &wire);
    fifo_of(&journal_fifo, &journal);
    let (code, stdout, stderr) = run(
        reel_cmd(&["replay", arg(&fifo), "--journal", arg(&journal_fifo)]),
        None,
    );
    assert_eq!(
        (
            code,
            stdout
                .replace(arg(&fifo), arg(&wire))
                .replace(arg(&journal_fifo), arg(&journal)),
            stderr
        ),
        (1, expected, String::new())
    );
    // A pipe has no place beside it for the verdict note.
    assert!(!dir.join("replay.wire.jsonl.replay.json").exists());

    // export: the same trace.
    let (code, expected, stderr) = reel(&["export", arg(&wire), "--name", "s"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let fifo = dir.join("export.wire.jsonl");
    fifo_of(&fifo, &wire);
    assert_eq!(
        run(reel_cmd(&["export", arg(&fifo), "--name", "s"]), None),
        (0, expected.clone(), String::new())
    );
    assert_eq!(
        run(
            reel_cmd(&["export", "-", "--name", "s"]),
            Some(std::fs::read(&wire).unwrap())
        ),
        (0, expected, String::new())
    );

    // diff: a FIFO against the file it was fed from is the same log.
    let (code, expected, stderr) = reel(&["diff", arg(&wire), arg(&wire)]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let fifo = dir.join("diff.wire.jsonl");
    fifo_of(&fifo, &wire);
    let (code, stdout, stderr) = run(reel_cmd(&["diff", arg(&fifo), arg(&wire)]), None);
    assert_eq!(
        (code, stdout.replace(arg(&fifo), arg(&wire)), stderr),
        (0, expected, String::new())
    );

    // Standard input can be read once.
    assert_eq!(
        run(reel_cmd(&["diff", "-", "-"]), Some(Vec::new())),
        (
            2,
            String::new(),
            "reel: `-` (standard input) is given 2 times: standard input can be read once, name the other inputs as files\n"
                .to_owned()
        )
    );
}

#[tokio::test(start_paused = true)]
async fn replay_of_a_directory_skips_a_fifo_in_it_and_refuses_an_empty_one() {
    let dir = TempDir::new("once-dir");
    let farm = dir.join("farm");
    std::fs::create_dir_all(&farm).unwrap();
    let (wire, journal) = (farm.join("a.wire.jsonl"), dir.join("a.journal.jsonl"));
    record(&wire, &journal, ToolWrites::Nothing).await;
    // A FIFO no one writes to: opening it would wait for ever.
    let fifo = farm.join("b.wire.jsonl");
    mkfifo(&fifo);

    let (code, stdout, stderr) = run(reel_cmd(&["replay", arg(&farm), "--jobs", "1"]), None);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        (code, stderr, &lines[..lines.len() - 1]),
        (
            0,
            format!(
                "reel: warning: {}: not a regular file (a FIFO, a socket, a device or a dangling link), skipped\n",
                arg(&fifo)
            ),
            &[
                format!("  CLEAN  {}  (20 frames, 3 turns)", arg(&wire)).as_str(),
                "",
                "  1 session: 1 clean, 0 drifted, 0 bad input",
            ][..]
        )
    );

    // Zero recordings is bad input, not a passing suite.
    let empty = dir.join("empty");
    std::fs::create_dir_all(empty.join("sub")).unwrap();
    std::fs::write(empty.join("notes.txt"), "not a recording\n").unwrap();
    assert_eq!(
        run(reel_cmd(&["replay", arg(&empty)]), None),
        (
            2,
            String::new(),
            format!(
                "reel: {}: no wire logs (`*.wire.jsonl`) in this directory or below: nothing to replay\n",
                arg(&empty)
            )
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studio_list_refuses_a_link_out_of_its_directory_as_the_call_url_does() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let dir = TempDir::new("once-studio");
    let studio_dir = dir.join("studio");
    std::fs::create_dir_all(&studio_dir).unwrap();
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tapes/weather.wire.jsonl");
    std::fs::copy(&bundled, studio_dir.join("weather.wire.jsonl")).unwrap();
    // A recording outside the directory, linked in; a link inside it, to its own file; a FIFO.
    let outside = dir.join("secret.wire.jsonl");
    std::fs::copy(&bundled, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, studio_dir.join("leak.wire.jsonl")).unwrap();
    std::os::unix::fs::symlink(
        studio_dir.join("weather.wire.jsonl"),
        studio_dir.join("alias.wire.jsonl"),
    )
    .unwrap();
    mkfifo(&studio_dir.join("pipe.wire.jsonl"));

    let studio = reel::studio::RunningStudio::start("127.0.0.1:0", &studio_dir)
        .await
        .unwrap();
    let addr = studio.local_addr();
    let get = |target: String| async move {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        tcp.write_all(format!("GET {target} HTTP/1.1\r\nhost: {addr}\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut answer = Vec::new();
        tcp.read_to_end(&mut answer).await.unwrap();
        let end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let status: u16 = std::str::from_utf8(&answer[9..12])
            .unwrap()
            .parse()
            .unwrap();
        (status, answer[end + 4..].to_vec())
    };
    let (status, body) = get("/api/recordings".to_owned()).await;
    let list: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let names: Vec<&str> = list["recordings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        (status, names),
        (200, vec!["alias.wire.jsonl", "weather.wire.jsonl"])
    );
    let (status, _) = get("/api/recordings/leak.wire.jsonl".to_owned()).await;
    assert_eq!(status, 404);
    let (status, _) = get("/api/recordings/alias.wire.jsonl".to_owned()).await;
    assert_eq!(status, 200);
    studio.stop().await;
}
