//! The mutation journal: the exact documented line, file sink round trip, failing writers.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reel_recorder::RecordError;
use reel_recorder::journal::{
    FileJournalSink, JournalSink, MemoryJournalSink, StateMutation, open_journal, read_journal,
};
use serde_json::{Value, json};

/// A file under the system temp dir, unique to this test, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("reel-recorder-{}-{name}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        TempFile(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.0).unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn mutation(sequence: u64, key: &str, old: Value, new: Value, origin: &str) -> StateMutation {
    StateMutation {
        sequence,
        key: key.to_owned(),
        old,
        new,
        origin: origin.to_owned(),
        timestamp_ms: 1_718_000_000_000 + sequence,
        delta: false,
    }
}

const SEED_LINE: &str = r#"{"sequence":7,"key":"app:last_city","old":null,"new":"London","origin":"set","timestamp_ms":1718000000456,"delta":false}"#;

fn seed_mutation() -> StateMutation {
    StateMutation {
        sequence: 7,
        key: "app:last_city".to_owned(),
        old: Value::Null,
        new: json!("London"),
        origin: "set".to_owned(),
        timestamp_ms: 1_718_000_000_456,
        delta: false,
    }
}

#[test]
fn a_mutation_serializes_exactly_as_seed_000() {
    assert_eq!(serde_json::to_string(&seed_mutation()).unwrap(), SEED_LINE);
}

#[test]
fn seed_000_line_deserializes_to_the_mutation() {
    let parsed: StateMutation = serde_json::from_str(SEED_LINE).unwrap();
    assert_eq!(parsed, seed_mutation());
}

#[test]
fn file_sink_writes_exact_lines_and_reads_back_equal() {
    let file = TempFile::new("roundtrip");
    let written = vec![
        seed_mutation(),
        mutation(8, "user:name", Value::Null, json!({"first": "Ada"}), "set"),
        mutation(9, "temp:n", json!(1), json!(2), "modify"),
        mutation(10, "temp:n", json!(2), Value::Null, "remove"),
    ];
    {
        let sink = FileJournalSink::create(file.path()).unwrap();
        for m in &written {
            sink.record(m);
        }
        assert_eq!(sink.error_count(), 0);
    } // dropped: flushed
    assert_eq!(
        file.text(),
        concat!(
            r#"{"sequence":7,"key":"app:last_city","old":null,"new":"London","origin":"set","timestamp_ms":1718000000456,"delta":false}"#,
            "\n",
            r#"{"sequence":8,"key":"user:name","old":null,"new":{"first":"Ada"},"origin":"set","timestamp_ms":1718000000008,"delta":false}"#,
            "\n",
            r#"{"sequence":9,"key":"temp:n","old":1,"new":2,"origin":"modify","timestamp_ms":1718000000009,"delta":false}"#,
            "\n",
            r#"{"sequence":10,"key":"temp:n","old":2,"new":null,"origin":"remove","timestamp_ms":1718000000010,"delta":false}"#,
            "\n",
        )
    );
    assert_eq!(read_journal(file.path()).unwrap(), written);
}

#[test]
fn file_sink_buffers_until_flush() {
    let file = TempFile::new("buffers");
    let sink = FileJournalSink::create(file.path()).unwrap();
    sink.record(&seed_mutation());
    assert_eq!(
        file.text(),
        "",
        "one record within the second stays buffered"
    );
    sink.flush();
    assert_eq!(file.text(), format!("{SEED_LINE}\n"));
}

#[test]
fn file_sink_flushes_when_the_interval_has_passed() {
    let file = TempFile::new("interval");
    let sink = FileJournalSink::create(file.path())
        .unwrap()
        .with_flush_interval(Duration::ZERO);
    sink.record(&seed_mutation());
    assert_eq!(file.text(), format!("{SEED_LINE}\n"));
}

#[test]
fn a_torn_journal_is_read_up_to_the_tear_with_one_warning() {
    let file = TempFile::new("torn");
    std::fs::write(
        file.path(),
        format!("{SEED_LINE}\n{}", &SEED_LINE[..40]).as_bytes(),
    )
    .unwrap();
    let mut reader = open_journal(file.path()).unwrap();
    let entries: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(entries, vec![seed_mutation()]);
    assert_eq!(reader.warnings().len(), 1);
    assert_eq!(reader.warnings()[0].line, 2);
    assert_eq!(reader.warnings()[0].path, file.path());
    assert_eq!(read_journal(file.path()).unwrap(), vec![seed_mutation()]);
}

#[test]
fn a_corrupt_journal_line_is_reported_with_file_and_line() {
    let file = TempFile::new("corrupt");
    std::fs::write(
        file.path(),
        format!("{SEED_LINE}\n{{\"sequence\":8}}\n{SEED_LINE}\n"),
    )
    .unwrap();
    match read_journal(file.path()) {
        Err(RecordError::Corrupt {
            path,
            line,
            message,
        }) => {
            assert_eq!(path, file.path());
            assert_eq!(line, 2);
            assert_eq!(message, "missing field `key`, at column 14");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn reading_a_missing_journal_is_an_io_error_naming_the_path() {
    let file = TempFile::new("missing");
    match read_journal(file.path()) {
        Err(error @ RecordError::Io { .. }) => {
            let RecordError::Io { path, source } = &error else {
                unreachable!()
            };
            assert_eq!(path, file.path());
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            assert!(
                error
                    .to_string()
                    .contains(&file.path().display().to_string())
            );
        }
        other => panic!("expected Io, got {other:?}"),
    }
}

#[test]
fn creating_a_sink_at_an_unwritable_path_fails_with_io() {
    let path = std::env::temp_dir()
        .join("reel-recorder-no-such-dir")
        .join("journal.jsonl");
    match FileJournalSink::create(&path) {
        Err(RecordError::Io { path: named, .. }) => assert_eq!(named, path),
        other => panic!("expected Io, got {other:?}"),
    }
}

/// A writer that fails once `broken` is set, as a full disk would.
struct BreakableWriter {
    broken: Arc<AtomicBool>,
    written: Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Write for BreakableWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("disk full"));
        }
        self.written.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_sink_whose_writer_fails_counts_errors_and_never_panics() {
    let broken = Arc::new(AtomicBool::new(false));
    let written = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = FileJournalSink::from_writer(
        BreakableWriter {
            broken: broken.clone(),
            written: written.clone(),
        },
        "test.journal.jsonl",
    )
    .with_flush_interval(Duration::ZERO);

    sink.record(&seed_mutation());
    assert_eq!(sink.error_count(), 0);
    assert_eq!(
        *written.lock().unwrap(),
        format!("{SEED_LINE}\n").into_bytes()
    );

    broken.store(true, Ordering::SeqCst);
    sink.record(&mutation(8, "a", Value::Null, json!(1), "set"));
    assert_eq!(sink.error_count(), 1, "the flush after the record failed");
    sink.record(&mutation(9, "a", json!(1), json!(2), "set"));
    sink.flush();
    assert_eq!(
        sink.error_count(),
        3,
        "two flushes after records, one explicit"
    );
    assert_eq!(
        *written.lock().unwrap(),
        format!("{SEED_LINE}\n").into_bytes()
    );
}

#[test]
fn a_sink_on_a_full_device_never_panics() {
    // /dev/full accepts the open and fails every write with "no space left on device".
    if !Path::new("/dev/full").exists() {
        return;
    }
    let sink = FileJournalSink::create("/dev/full").unwrap();
    sink.record(&seed_mutation());
    sink.flush();
    assert_eq!(sink.error_count(), 1);
    drop(sink); // the flush on drop fails quietly too
}

#[test]
fn memory_sink_collects_entries_in_order() {
    let sink = MemoryJournalSink::new();
    sink.record(&seed_mutation());
    sink.record(&mutation(8, "a", Value::Null, json!(1), "set"));
    sink.flush();
    assert_eq!(
        sink.entries(),
        vec![
            seed_mutation(),
            mutation(8, "a", Value::Null, json!(1), "set")
        ]
    );
    assert_eq!(sink.flush_count(), 1);
}
