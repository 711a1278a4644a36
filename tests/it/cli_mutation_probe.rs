//! A black-box probe of the built `reel` binary: seeded mutations of the bundled recordings
//! (`assets/tapes/`) through `reel replay`, `show` (text, `--json`, `--html`), `export`
//! (trace, OTLP, WAV), `diff` and `decode`, each run as a real process in a directory of its
//! own, under a time limit and an output limit. Every run must end by itself with exit 0, 1
//! (`replay` and `diff` only: drift, difference) or 2 — and on 2, one line on stderr naming
//! the file that was bad — without a panic, within [`TIME_LIMIT`], having written at most
//! [`OUTPUT_LIMIT`] bytes (the output is watched while the process runs; a run past either
//! limit is killed).
//!
//! A seed names a run exactly (the tape, the command, the mutations): a seed that fails
//! prints a one-line reproducer, `REEL_PROBE_SEED=N cargo test --test it cli_mutation_probe::`,
//! which re-runs that seed alone, keeps its files and prints where they are.
//!
//! The mutations: lines deleted, duplicated, swapped; bytes replaced, inserted, deleted; the
//! file cut short; an entry's fields given hostile values (wrong types, extreme numbers);
//! timestamps moved (by a little, by hours, to `u64::MAX`); a frame's JSON changed at a
//! random node (hostile strings, extreme numbers, deep nesting, wrong types, keys removed or
//! renamed, arrays repeated); a frame's bytes broken (cut, invalid UTF-8, binary); audio
//! frames inserted (so the WAV export and the page's audio have something to render). The
//! runs go in parallel, one worker per core.

#[path = "../../actors/tests/sim/rng.rs"]
mod rng;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reel_protocol::Base64Data;
use rng::Rng;
use serde_json::{Value, json};

/// How many seeds a full run probes: 120 for each of the nine commands.
const SEEDS: u64 = 1_080;

/// The longest one run may take: a bound on hangs on a loaded machine, not a speed test.
const TIME_LIMIT: Duration = Duration::from_secs(20);

/// The most one run may write (standard output and error and every file it creates): room
/// for a page or a WAV of a call of several minutes, far below a disk filled.
const OUTPUT_LIMIT: u64 = 128 << 20;

/// The bundled recordings.
const TAPES: [&str; 3] = ["weather", "phases", "proxy"];

/// What one seed runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Run {
    Replay,
    Show,
    ShowJson,
    ShowHtml,
    ExportTrace,
    ExportOtlp,
    ExportWav,
    Diff,
    Decode,
}

/// Seed `n` runs `RUNS[n % 9]`: every command gets the same share of the seeds.
const RUNS: [Run; 9] = [
    Run::Replay,
    Run::Show,
    Run::ShowJson,
    Run::ShowHtml,
    Run::ExportTrace,
    Run::ExportOtlp,
    Run::ExportWav,
    Run::Diff,
    Run::Decode,
];

impl Run {
    /// The exit codes the command may end with.
    fn allowed(self) -> &'static [i32] {
        match self {
            Run::Replay | Run::Diff => &[0, 1, 2],
            _ => &[0, 2],
        }
    }
}

/// Hostile strings a mutation puts into a recording.
const STRINGS: [&str; 8] = [
    "",
    "\u{1b}]0;pwned\u{7}\u{1b}[2J",
    "<!--<script>window.__pwned=1</script>",
    "\"><img src=x onerror=alert(1)>",
    "\u{202e}\u{0}\u{fffd}\u{2028}",
    "models/",
    "../../../../etc/passwd",
    "%s%n%x{}{{}}\\",
];

/// Hostile numbers.
fn number(rng: &mut Rng) -> Value {
    let numbers = [
        json!(0),
        json!(-1),
        json!(1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1e308),
        json!(-1e308),
        json!(0.5),
        json!(4_294_967_296u64),
    ];
    numbers[rng.range(0, numbers.len() as u64) as usize].clone()
}

/// A hostile value of any JSON type.
fn hostile(rng: &mut Rng) -> Value {
    match rng.range(0, 10) {
        0..=2 => json!(rng.pick(&STRINGS)),
        3 => json!("a".repeat(rng.range(1_000, 200_000) as usize)),
        4..=5 => number(rng),
        6 => Value::Null,
        7 => json!(rng.chance(50)),
        8 => json!([]),
        _ => {
            // Nested deeper than a parser's recursion limit, or just under it.
            let depth = rng.pick(&[20u64, 100, 127, 129, 300]);
            let mut value = json!(1);
            for _ in 0..depth {
                value = json!([value]);
            }
            value
        }
    }
}

/// One step into a JSON value.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every node of `value` (the root included), as paths.
fn nodes(value: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(path.clone());
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                path.push(Step::Key(key.clone()));
                nodes(child, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                path.push(Step::Index(index));
                nodes(child, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn node_mut<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut here = value;
    for step in path {
        here = match step {
            Step::Key(key) => here.get_mut(key.as_str())?,
            Step::Index(index) => here.get_mut(*index)?,
        };
    }
    Some(here)
}

/// Changes `value` at a random node; says what it did.
fn mutate_value(rng: &mut Rng, value: &mut Value) -> String {
    let mut all = Vec::new();
    nodes(value, &mut Vec::new(), &mut all);
    let path = all[rng.range(0, all.len() as u64) as usize].clone();
    let shown = format!("{path:?}");
    match rng.range(0, 5) {
        0 | 1 => {
            let new = hostile(rng);
            if let Some(node) = node_mut(value, &path) {
                *node = new;
            }
            format!("value at {shown} replaced")
        }
        2 => {
            // Removed from its parent.
            let Some((last, parent)) = path.split_last() else {
                *value = Value::Null;
                return "root replaced by null".to_owned();
            };
            match (node_mut(value, parent), last) {
                (Some(Value::Object(map)), Step::Key(key)) => {
                    map.remove(key);
                }
                (Some(Value::Array(items)), Step::Index(index)) => {
                    items.remove(*index);
                }
                _ => {}
            }
            format!("node {shown} removed")
        }
        3 => {
            // Renamed: the same value under a hostile key.
            let Some((Step::Key(key), parent)) = path.split_last() else {
                return "nothing renamed".to_owned();
            };
            let new_key = rng.pick(&STRINGS).to_owned();
            if let Some(Value::Object(map)) = node_mut(value, parent)
                && let Some(child) = map.remove(key)
            {
                map.insert(new_key, child);
            }
            format!("key {shown} renamed")
        }
        _ => {
            // Repeated: an array of many copies.
            let times = rng.pick(&[2u64, 50, 2_000]) as usize;
            if let Some(node) = node_mut(value, &path) {
                *node = Value::Array(vec![node.clone(); times]);
            }
            format!("node {shown} repeated {times} times")
        }
    }
}

/// Bytes changed in `line`; says what.
fn mutate_bytes(rng: &mut Rng, line: &mut Vec<u8>) -> String {
    let special = [
        0u8, 0xff, 0xc3, b'"', b'{', b'}', b'\n', b'\\', b'9', b'-', b' ',
    ];
    let at = rng.range(0, line.len() as u64 + 1) as usize;
    match rng.range(0, 3) {
        0 if !line.is_empty() => {
            let at = at.min(line.len() - 1);
            line[at] = if rng.chance(50) {
                rng.pick(&special)
            } else {
                rng.next_u64() as u8
            };
            format!("byte {at} replaced")
        }
        1 => {
            let junk: Vec<u8> = (0..rng.range(1, 16)).map(|_| rng.pick(&special)).collect();
            line.splice(at..at, junk);
            format!("bytes inserted at {at}")
        }
        _ => {
            let end = (at + rng.range(1, 64) as usize).min(line.len());
            line.drain(at..end);
            format!("bytes {at}..{end} deleted")
        }
    }
}

/// A frame's payload as JSON, changed by `change`, written back (base64) into the entry.
fn change_payload(entry: &mut Value, change: impl FnOnce(&mut Vec<u8>)) -> bool {
    let Some(payload) = entry
        .get("payload_b64")
        .and_then(Value::as_str)
        .and_then(|text| Base64Data::decode(text).ok())
    else {
        return false;
    };
    let mut bytes = payload.0.to_vec();
    change(&mut bytes);
    entry["payload_b64"] = json!(Base64Data(bytes.into()).encode());
    true
}

/// An audio frame: the model's (24 kHz, inbound) or the user's (16 kHz, outbound), of `len`
/// bytes (odd lengths too).
fn audio_frame(rng: &mut Rng) -> (&'static str, Vec<u8>) {
    let len = rng.pick(&[0u64, 1, 481, 4_800, 48_000]) as usize;
    let pcm: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
    let data = Base64Data(pcm.into()).encode();
    if rng.chance(50) {
        (
            "in",
            json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": data}}]}}})
                .to_string()
                .into_bytes(),
        )
    } else {
        (
            "out",
            json!({"realtimeInput": {"audio": {"mimeType": "audio/pcm;rate=16000", "data": data}}})
                .to_string()
                .into_bytes(),
        )
    }
}

/// A time a mutation moves an entry to, from `ts`.
fn moved_ts(rng: &mut Rng, ts: u64) -> Value {
    match rng.range(0, 6) {
        0 => json!(ts.saturating_add(rng.range(1, 1_000))),
        1 => json!(ts.saturating_sub(rng.range(1, 1_000))),
        2 => json!(ts.saturating_add(10u64.pow(rng.range(4, 8) as u32))),
        3 => json!(ts.saturating_add(10u64.pow(rng.range(8, 13) as u32))),
        4 => json!(u64::MAX),
        _ => json!(0),
    }
}

/// Line-level changes any list of lines takes (wire log or frames): true when one applied.
fn mutate_lines(rng: &mut Rng, lines: &mut Vec<Vec<u8>>, what: &mut Vec<String>) -> bool {
    if lines.is_empty() {
        return false;
    }
    let i = rng.range(0, lines.len() as u64) as usize;
    match rng.range(0, 4) {
        0 => {
            lines.remove(i);
            what.push(format!("line {} deleted", i + 1));
        }
        1 => {
            let copy = lines[i].clone();
            lines.insert(i, copy);
            what.push(format!("line {} duplicated", i + 1));
        }
        2 => {
            let j = rng.range(0, lines.len() as u64) as usize;
            lines.swap(i, j);
            what.push(format!("lines {} and {} swapped", i + 1, j + 1));
        }
        _ => {
            let change = mutate_bytes(rng, &mut lines[i]);
            what.push(format!("line {}: {change}", i + 1));
        }
    }
    true
}

/// A wire log (`text`) mutated 1 to 3 times: its bytes and what was done.
fn mutate_log(rng: &mut Rng, text: &str) -> (Vec<u8>, Vec<String>) {
    let mut lines: Vec<Vec<u8>> = text.lines().map(|l| l.as_bytes().to_vec()).collect();
    let mut what = Vec::new();
    let mut cut = false;
    for _ in 0..rng.range(1, 4) {
        let i = rng.range(0, lines.len().max(1) as u64) as usize;
        let entry: Option<Value> = lines
            .get(i)
            .and_then(|line| serde_json::from_slice(line).ok());
        let op = rng.range(0, 100);
        match (op, entry) {
            (0..=39, _) | (_, None) => {
                if !mutate_lines(rng, &mut lines, &mut what) {
                    what.push("nothing to change".to_owned());
                }
            }
            (40..=44, Some(_)) => cut = true,
            (45..=56, Some(mut entry)) => {
                let field = rng.pick(&[
                    "seq",
                    "dir",
                    "ts_ms",
                    "conn",
                    "binary",
                    "source",
                    "close",
                    "payload_b64",
                    "extra",
                ]);
                let value = hostile(rng);
                if rng.chance(20) {
                    if let Some(map) = entry.as_object_mut() {
                        map.remove(field);
                    }
                    what.push(format!("line {}: {field} removed", i + 1));
                } else {
                    entry[field] = value;
                    what.push(format!("line {}: {field} set to a hostile value", i + 1));
                }
                lines[i] = entry.to_string().into_bytes();
            }
            (57..=66, Some(_)) => {
                // A timestamp moved; with `jump`, every later entry with it (a clock jump).
                let jump = rng.chance(50);
                let mut shift: Option<Value> = None;
                for line in lines
                    .iter_mut()
                    .skip(i)
                    .take(if jump { usize::MAX } else { 1 })
                {
                    let Ok(mut entry) = serde_json::from_slice::<Value>(line) else {
                        continue;
                    };
                    let ts = entry["ts_ms"].as_u64().unwrap_or(0);
                    let new = shift.get_or_insert_with(|| moved_ts(rng, ts)).clone();
                    entry["ts_ms"] = new;
                    *line = entry.to_string().into_bytes();
                }
                what.push(format!(
                    "line {}{}: ts_ms moved to {}",
                    i + 1,
                    if jump { " and after" } else { "" },
                    shift.unwrap_or(Value::Null)
                ));
            }
            (67..=86, Some(mut entry)) => {
                let mut change = String::from("not JSON");
                change_payload(&mut entry, |bytes| {
                    if let Ok(mut value) = serde_json::from_slice::<Value>(bytes) {
                        change = mutate_value(rng, &mut value);
                        *bytes = value.to_string().into_bytes();
                    }
                });
                what.push(format!("line {}: payload {change}", i + 1));
                lines[i] = entry.to_string().into_bytes();
            }
            (87..=92, Some(mut entry)) => {
                let mut change = String::new();
                change_payload(&mut entry, |bytes| {
                    change = match rng.range(0, 3) {
                        0 => {
                            bytes.truncate(rng.range(0, bytes.len() as u64 + 1) as usize);
                            "payload cut".to_owned()
                        }
                        1 => {
                            bytes.extend_from_slice(&[0xff, 0xfe, 0xc3]);
                            "payload made invalid UTF-8".to_owned()
                        }
                        _ => format!("payload {}", mutate_bytes(rng, bytes)),
                    }
                });
                what.push(format!("line {}: {change}", i + 1));
                lines[i] = entry.to_string().into_bytes();
            }
            (_, Some(entry)) => {
                // Audio frames after entry i, numbered on from it; the later entries
                // renumbered after them, so the log stays in order.
                let count = rng.range(1, 5);
                let seq = entry["seq"].as_u64().unwrap_or(0);
                let ts = entry["ts_ms"].as_u64().unwrap_or(0);
                let mut inserted = Vec::new();
                let mut times = Vec::new();
                for k in 0..count {
                    let (dir, payload) = audio_frame(rng);
                    let at = if rng.chance(25) {
                        moved_ts(rng, ts)
                    } else {
                        json!(ts.saturating_add(k * 100))
                    };
                    times.push(at.to_string());
                    inserted.push(
                        json!({"seq": seq + 1 + k, "dir": dir, "ts_ms": at,
                               "payload_b64": Base64Data(payload.into()).encode()})
                        .to_string()
                        .into_bytes(),
                    );
                }
                for line in lines.iter_mut().skip(i + 1) {
                    if let Ok(mut later) = serde_json::from_slice::<Value>(line)
                        && let Some(n) = later["seq"].as_u64()
                    {
                        later["seq"] = json!(n + count);
                        *line = later.to_string().into_bytes();
                    }
                }
                lines.splice(i + 1..i + 1, inserted);
                what.push(format!(
                    "{count} audio frames inserted after line {} (ts_ms {})",
                    i + 1,
                    times.join(", ")
                ));
            }
        }
    }
    let mut bytes: Vec<u8> = lines
        .iter()
        .flat_map(|line| line.iter().copied().chain([b'\n']))
        .collect();
    if cut {
        let at = rng.range(0, bytes.len() as u64 + 1) as usize;
        bytes.truncate(at);
        what.push(format!("file cut at byte {at}"));
    }
    (bytes, what)
}

/// The frames of one direction of a wire log, one JSON text per line (what `reel decode`
/// reads), mutated 1 to 3 times.
fn mutate_frames(rng: &mut Rng, text: &str, dir: &str) -> (Vec<u8>, Vec<String>) {
    let mut lines: Vec<Vec<u8>> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|entry| entry["dir"] == dir && entry.get("close").is_none())
        .filter_map(|entry| Base64Data::decode(entry["payload_b64"].as_str()?).ok())
        .map(|payload| payload.0.to_vec())
        .collect();
    let mut what = Vec::new();
    for _ in 0..rng.range(1, 4) {
        let i = rng.range(0, lines.len().max(1) as u64) as usize;
        let frame = lines
            .get(i)
            .and_then(|line| serde_json::from_slice::<Value>(line).ok());
        match (rng.range(0, 10), frame) {
            (0..=3, _) | (_, None) => {
                if !mutate_lines(rng, &mut lines, &mut what) {
                    lines.push(b"{}".to_vec());
                    what.push("a frame {} added".to_owned());
                }
            }
            (4, Some(_)) => {
                let line = match rng.range(0, 4) {
                    0 => Vec::new(),
                    1 => b"null".to_vec(),
                    2 => hostile(rng).to_string().into_bytes(),
                    _ => vec![0u8; 64],
                };
                lines.insert(i, line);
                what.push(format!("a hostile line inserted at {}", i + 1));
            }
            (_, Some(mut value)) => {
                let change = mutate_value(rng, &mut value);
                lines[i] = value.to_string().into_bytes();
                what.push(format!("frame {}: {change}", i + 1));
            }
        }
    }
    let bytes = lines
        .iter()
        .flat_map(|line| line.iter().copied().chain([b'\n']))
        .collect();
    (bytes, what)
}

/// One seed's run, ready to start.
struct Case {
    run: Run,
    tape: &'static str,
    what: Vec<String>,
    args: Vec<String>,
    /// The mutated input: the file an error must name.
    input: PathBuf,
    dir: PathBuf,
}

/// Seed `seed`'s case, its files written under `root`.
fn case(seed: u64, root: &Path) -> Case {
    let mut rng = Rng::new(seed);
    let run = RUNS[(seed % RUNS.len() as u64) as usize];
    let tape = rng.pick(&TAPES);
    let dir = root.join(format!("seed-{seed}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let original_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/tapes")
        .join(format!("{tape}.wire.jsonl"));
    let original = std::fs::read_to_string(&original_path).unwrap();
    let text = |path: &Path| path.to_str().unwrap().to_owned();
    let (input, what, args) = if run == Run::Decode {
        let client = rng.chance(50);
        let (bytes, what) = mutate_frames(&mut rng, &original, if client { "out" } else { "in" });
        let input = dir.join(format!("{tape}.frames.jsonl"));
        std::fs::write(&input, bytes).unwrap();
        let mut args = vec!["decode".to_owned(), text(&input)];
        if client {
            args.push("--client".to_owned());
        }
        (input, what, args)
    } else {
        let (bytes, what) = mutate_log(&mut rng, &original);
        let input = dir.join(format!("{tape}.wire.jsonl"));
        std::fs::write(&input, bytes).unwrap();
        let log = text(&input);
        let out = |name: &str| text(&dir.join(name));
        let args: Vec<String> = match run {
            Run::Replay => vec!["replay".into(), log],
            Run::Show => vec!["show".into(), log],
            Run::ShowJson => vec!["show".into(), log, "--json".into()],
            Run::ShowHtml => vec!["show".into(), log, "--html".into(), out("page.html")],
            Run::ExportTrace => vec!["export".into(), log, "-o".into(), out("out.trace.json")],
            Run::ExportOtlp => vec![
                "export".into(),
                log,
                "--format".into(),
                "otlp".into(),
                "-o".into(),
                out("out.otlp.json"),
            ],
            Run::ExportWav => vec![
                "export".into(),
                log,
                "--format".into(),
                "wav".into(),
                "-o".into(),
                out("out.wav"),
            ],
            Run::Diff => {
                let copy = dir.join("original.wire.jsonl");
                std::fs::write(&copy, &original).unwrap();
                if rng.chance(50) {
                    vec!["diff".into(), text(&copy), log]
                } else {
                    vec!["diff".into(), log, text(&copy)]
                }
            }
            Run::Decode => unreachable!("decode is handled above"),
        };
        (input, what, args)
    };
    Case {
        run,
        tape,
        what,
        args,
        input,
        dir,
    }
}

/// The bytes in the files of `dir`.
fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok()?.metadata().ok())
                .map(|meta| meta.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Runs `case`: its exit code, or what went wrong.
fn run(case: &Case) -> Result<i32, String> {
    let stdout = case.dir.join("stdout");
    let stderr = case.dir.join("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(&case.args)
        .current_dir(&case.dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .map_err(|error| format!("cannot start reel: {error}"))?;
    let started = Instant::now();
    // Watched while it runs: a hang or a runaway output is stopped at its limit, not when
    // the disk is full.
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        let written = dir_size(&case.dir);
        let over = if started.elapsed() > TIME_LIMIT {
            Some(format!("still running after {TIME_LIMIT:?}"))
        } else if written > OUTPUT_LIMIT {
            Some(format!(
                "wrote {written} bytes, over the limit of {OUTPUT_LIMIT}"
            ))
        } else {
            None
        };
        if let Some(over) = over {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{over}: killed"));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let written = dir_size(&case.dir);
    if written > OUTPUT_LIMIT {
        return Err(format!(
            "wrote {written} bytes, over the limit of {OUTPUT_LIMIT}"
        ));
    }
    let error = std::fs::read(&stderr).map_err(|e| e.to_string())?;
    let error = String::from_utf8_lossy(&error);
    // What a failure quotes: the first lines, not a backtrace.
    let excerpt: String = error.lines().take(4).collect::<Vec<_>>().join(" | ");
    let Some(code) = status.code() else {
        return Err(format!("ended by a signal ({status}); stderr: {excerpt}"));
    };
    if error.contains("panicked") {
        return Err(format!("panicked (exit {code}): {excerpt}"));
    }
    if !case.run.allowed().contains(&code) {
        return Err(format!("exit {code}; stderr: {excerpt}"));
    }
    let input = case.input.to_str().unwrap();
    if code == 2 && !error.lines().any(|line| line.contains(input)) {
        return Err(format!(
            "exit 2 without an error naming {input}; stderr: {excerpt}"
        ));
    }
    Ok(code)
}

/// The one-line reproducer of `seed`.
fn reproducer(seed: u64) -> String {
    format!("REEL_PROBE_SEED={seed} cargo test --test it cli_mutation_probe:: -- --nocapture")
}

#[test]
fn mutated_recordings_end_in_bounded_time_and_output_with_an_error_naming_the_file() {
    let root = std::env::temp_dir().join(format!("reel-probe-{}", std::process::id()));
    let only: Option<u64> = std::env::var("REEL_PROBE_SEED")
        .ok()
        .map(|seed| seed.parse().expect("REEL_PROBE_SEED is a number"));
    let seeds: Vec<u64> = match only {
        Some(seed) => vec![seed],
        None => (0..SEEDS).collect(),
    };
    let next = AtomicU64::new(0);
    let failures = Mutex::new(Vec::new());
    let codes: Mutex<BTreeMap<(Run, i32), u64>> = Mutex::new(BTreeMap::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some(&seed) = seeds.get(index) else {
                        return;
                    };
                    let case = case(seed, &root);
                    let outcome = run(&case);
                    if only.is_some() {
                        eprintln!(
                            "seed {seed}: {:?} of {}: {}\n  reel {}\n  files in {}\n  {outcome:?}",
                            case.run,
                            case.tape,
                            case.what.join("; "),
                            case.args.join(" "),
                            case.dir.display()
                        );
                    } else {
                        let _ = std::fs::remove_dir_all(&case.dir);
                    }
                    match outcome {
                        Ok(code) => {
                            *codes.lock().unwrap().entry((case.run, code)).or_default() += 1;
                        }
                        Err(problem) => {
                            let line = format!(
                                "seed {seed} ({:?} of {}: {}): {}; reproduce: {}",
                                case.run,
                                case.tape,
                                case.what.join("; "),
                                problem.trim_end(),
                                reproducer(seed)
                            );
                            eprintln!("{line}");
                            failures.lock().unwrap().push(line);
                        }
                    }
                }
            });
        }
    });
    if only.is_none() {
        let _ = std::fs::remove_dir_all(&root);
    }
    let codes = codes.into_inner().unwrap();
    eprintln!(
        "{} runs in {:.1} s on {workers} workers; exit codes by command: {codes:?}",
        seeds.len(),
        started.elapsed().as_secs_f64()
    );
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} seeds failed:\n{}",
        failures.len(),
        seeds.len(),
        failures.join("\n")
    );
    if only.is_none() {
        // The mutations reach both sides: every command read some mutated files and
        // refused others.
        for command in RUNS {
            for code in [0, 2] {
                assert!(
                    codes.contains_key(&(command, code)),
                    "no {command:?} run ended with exit {code}: {codes:?}"
                );
            }
        }
    }
}
