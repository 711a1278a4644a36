//! The wire log file: exact lines, durability modes, and failures that never reach the caller.

use crate::common;

use std::io::ErrorKind;

use bytes::Bytes;
use common::TempFile;
use reel_recorder::wire_file::{Durability, FileWireRecorder};
use reel_recorder::wire_log::{CloseMark, Direction, Source, WireEntry, WireRecorder};
use reel_recorder::{RecordError, read_wire_log};

const SETUP_LINE: &str =
    r#"{"seq":1,"dir":"out","ts_ms":1718000000000,"payload_b64":"eyJzZXR1cCI6ey4uLn19"}"#;

fn setup_entry() -> WireEntry {
    WireEntry::frame(
        1,
        Direction::Out,
        1_718_000_000_000,
        Bytes::from_static(br#"{"setup":{...}}"#),
        None,
        false,
    )
}

fn session_entries() -> Vec<WireEntry> {
    vec![
        setup_entry(),
        WireEntry::frame(
            2,
            Direction::In,
            1_718_000_000_123,
            Bytes::from_static(br#"{"setupComplete":{}}"#),
            None,
            false,
        ),
        WireEntry {
            source: Some(Source::App),
            ..WireEntry::frame(
                3,
                Direction::Out,
                1_718_000_000_500,
                Bytes::from_static(br#"{"realtimeInput":{"text":"hi"}}"#),
                None,
                false,
            )
        },
        WireEntry::close_mark(
            4,
            1_718_000_001_000,
            None,
            CloseMark {
                code: Some(1000),
                reason: Some("go_away".to_owned()),
                client: true,
            },
        ),
        WireEntry::frame(
            5,
            Direction::In,
            1_718_000_001_200,
            Bytes::from_static(b"{}"),
            Some(2),
            true,
        ),
    ]
}

#[test]
fn a_session_is_written_as_exact_lines_and_reads_back_equal() {
    let file = TempFile::new("wire-roundtrip");
    {
        let recorder = FileWireRecorder::create(file.path()).unwrap();
        for entry in session_entries() {
            recorder.record(entry);
        }
        assert_eq!(recorder.error_count(), 0);
    } // dropped: flushed
    assert_eq!(
        file.text(),
        concat!(
            r#"{"seq":1,"dir":"out","ts_ms":1718000000000,"payload_b64":"eyJzZXR1cCI6ey4uLn19"}"#,
            "\n",
            r#"{"seq":2,"dir":"in","ts_ms":1718000000123,"payload_b64":"eyJzZXR1cENvbXBsZXRlIjp7fX0="}"#,
            "\n",
            r#"{"seq":3,"dir":"out","ts_ms":1718000000500,"payload_b64":"eyJyZWFsdGltZUlucHV0Ijp7InRleHQiOiJoaSJ9fQ==","source":"app"}"#,
            "\n",
            r#"{"seq":4,"dir":"in","ts_ms":1718000001000,"payload_b64":"","close":{"code":1000,"reason":"go_away","client":true}}"#,
            "\n",
            r#"{"seq":5,"dir":"in","ts_ms":1718000001200,"payload_b64":"e30=","conn":2,"binary":true}"#,
            "\n",
        )
    );
    assert_eq!(read_wire_log(file.path()).unwrap(), session_entries());
}

#[test]
fn buffered_is_the_default_and_holds_entries_until_flush() {
    let file = TempFile::new("wire-buffered");
    let recorder = FileWireRecorder::create(file.path()).unwrap();
    assert_eq!(recorder.durability(), Durability::Buffered);
    recorder.record(setup_entry());
    assert_eq!(
        file.text(),
        "",
        "one small entry within the second stays buffered"
    );
    recorder.flush();
    assert_eq!(file.text(), format!("{SETUP_LINE}\n"));
    assert_eq!(recorder.error_count(), 0);
}

#[test]
fn buffered_writes_once_the_buffer_passes_the_threshold() {
    let file = TempFile::new("wire-threshold");
    let recorder = FileWireRecorder::create(file.path()).unwrap();
    let big = Bytes::from(vec![b'x'; reel_recorder::wire_file::WRITE_THRESHOLD_BYTES]);
    recorder.record(WireEntry::frame(1, Direction::In, 7, big, None, false));
    let text = file.text();
    assert!(text.starts_with(r#"{"seq":1,"dir":"in","ts_ms":7,"payload_b64":"eHh4"#));
    assert!(text.ends_with("\"}\n"));
}

#[test]
fn flush_each_entry_writes_before_record_returns() {
    let file = TempFile::new("wire-flush-each");
    let recorder = FileWireRecorder::create(file.path())
        .unwrap()
        .with_durability(Durability::FlushEachEntry);
    recorder.record(setup_entry());
    assert_eq!(file.text(), format!("{SETUP_LINE}\n"));
    assert_eq!(recorder.error_count(), 0);
}

#[test]
fn fsync_each_entry_writes_and_syncs_before_record_returns() {
    let file = TempFile::new("wire-fsync-each");
    let recorder = FileWireRecorder::create(file.path())
        .unwrap()
        .with_durability(Durability::FsyncEachEntry);
    assert_eq!(recorder.durability(), Durability::FsyncEachEntry);
    recorder.record(setup_entry());
    assert_eq!(file.text(), format!("{SETUP_LINE}\n"));
    recorder.flush();
    assert_eq!(recorder.error_count(), 0);
}

#[test]
fn a_full_disk_is_counted_not_returned_and_every_entry_tries_again() {
    let recorder = FileWireRecorder::create("/dev/full")
        .unwrap()
        .with_durability(Durability::FlushEachEntry);
    recorder.record(setup_entry());
    assert_eq!(recorder.error_count(), 1);
    recorder.record(WireEntry::frame(
        2,
        Direction::In,
        1,
        &b"{}"[..],
        None,
        false,
    ));
    assert_eq!(
        recorder.error_count(),
        2,
        "the next entry tries the disk again"
    );
    recorder.flush();
    assert_eq!(recorder.error_count(), 3);
}

#[test]
fn a_buffered_recorder_on_a_full_disk_fails_only_when_it_writes() {
    let recorder = FileWireRecorder::create("/dev/full").unwrap();
    recorder.record(setup_entry());
    assert_eq!(recorder.error_count(), 0);
    recorder.flush();
    assert_eq!(recorder.error_count(), 1);
    drop(recorder); // flushes again, fails again, does not panic
}

#[test]
fn the_error_count_is_visible_through_the_trait_object() {
    let recorder: std::sync::Arc<dyn WireRecorder> = std::sync::Arc::new(
        FileWireRecorder::create("/dev/full")
            .unwrap()
            .with_durability(Durability::FlushEachEntry),
    );
    recorder.record(setup_entry());
    assert_eq!(recorder.error_count(), 1);
}

#[test]
fn create_in_a_missing_directory_is_an_io_error_naming_the_path() {
    let path = std::env::temp_dir()
        .join(format!("reel-recorder-{}-no-such-dir", std::process::id()))
        .join("session.wire.jsonl");
    match FileWireRecorder::create(&path) {
        Err(RecordError::Io {
            path: named,
            source,
        }) => {
            assert_eq!(named, path);
            assert_eq!(source.kind(), ErrorKind::NotFound);
        }
        other => panic!("expected Io, got {other:?}"),
    }
}

#[test]
fn debug_names_the_path_and_durability_but_no_entries() {
    let file = TempFile::new("wire-debug");
    let recorder = FileWireRecorder::create(file.path()).unwrap();
    recorder.record(setup_entry());
    assert_eq!(
        format!("{recorder:?}"),
        format!(
            "FileWireRecorder {{ path: {:?}, durability: Buffered, errors: 0, .. }}",
            file.path()
        )
    );
}
