//! Reading wire logs back: exact entries, torn ends, corruption, order and emptiness.

use crate::common;

use std::io::ErrorKind;

use bytes::Bytes;
use common::TempFile;
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use reel_recorder::{RecordError, WireLogReader, open_wire_log, read_wire_log};

const LINE_1: &str =
    r#"{"seq":1,"dir":"out","ts_ms":1718000000000,"payload_b64":"eyJzZXR1cCI6ey4uLn19"}"#;
const LINE_2: &str =
    r#"{"seq":2,"dir":"in","ts_ms":1718000000123,"payload_b64":"eyJzZXR1cENvbXBsZXRlIjp7fX0="}"#;
const LINE_3: &str = r#"{"seq":3,"dir":"in","ts_ms":1718000000200,"payload_b64":"","conn":2,"close":{"reason":"go_away","client":false}}"#;

fn entry_1() -> WireEntry {
    WireEntry::frame(
        1,
        Direction::Out,
        1_718_000_000_000,
        Bytes::from_static(br#"{"setup":{...}}"#),
        None,
        false,
    )
}

fn entry_2() -> WireEntry {
    WireEntry::frame(
        2,
        Direction::In,
        1_718_000_000_123,
        Bytes::from_static(br#"{"setupComplete":{}}"#),
        None,
        false,
    )
}

fn entry_3() -> WireEntry {
    WireEntry::close_mark(
        3,
        1_718_000_000_200,
        Some(2),
        CloseMark {
            code: None,
            reason: Some("go_away".to_owned()),
            client: false,
        },
    )
}

#[test]
fn a_written_log_reads_back_as_exact_entries() {
    let file = TempFile::new("read-exact");
    file.write(format!("{LINE_1}\n{LINE_2}\n\n{LINE_3}\n"));
    assert_eq!(
        read_wire_log(file.path()).unwrap(),
        vec![entry_1(), entry_2(), entry_3()]
    );
    let raw: Vec<_> = open_wire_log(file.path())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(raw, vec![entry_1(), entry_2(), entry_3()]);
}

#[test]
fn a_torn_last_line_yields_the_entries_before_it_and_one_warning() {
    let file = TempFile::new("read-torn");
    file.write(format!("{LINE_1}\n{LINE_2}\n{}", &LINE_3[..30]));
    let mut reader = WireLogReader::open(file.path()).unwrap();
    let entries: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(entries, vec![entry_1(), entry_2()]);
    assert_eq!(reader.warnings().len(), 1);
    assert_eq!(reader.warnings()[0].line, 3);
    assert_eq!(reader.warnings()[0].path, file.path());
    assert_eq!(
        read_wire_log(file.path()).unwrap(),
        vec![entry_1(), entry_2()]
    );
}

#[test]
fn a_corrupt_middle_line_is_corrupt_with_its_line_number() {
    let file = TempFile::new("read-corrupt");
    file.write(format!(
        "{LINE_1}\n{}\n{LINE_3}\n",
        r#"{"seq":2,"dir":"in","ts_ms":true,"payload_b64":""}"#
    ));
    let mut reader = WireLogReader::open(file.path()).unwrap();
    assert_eq!(reader.next().unwrap().unwrap(), entry_1());
    match reader.next() {
        Some(Err(RecordError::Corrupt {
            path,
            line,
            message,
        })) => {
            assert_eq!(path, file.path());
            assert_eq!(line, 2);
            assert_eq!(
                message,
                "invalid type: boolean `true`, expected u64, at column 32"
            );
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(reader.next().is_none(), "nothing after an error");
}

#[test]
fn bad_base64_in_a_payload_is_corrupt() {
    let file = TempFile::new("read-bad-base64");
    file.write(format!(
        "{}\n{LINE_2}\n",
        r#"{"seq":1,"dir":"in","ts_ms":1,"payload_b64":"@@@"}"#
    ));
    match read_wire_log(file.path()) {
        Err(RecordError::Corrupt { line, .. }) => assert_eq!(line, 1),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn binary_garbage_is_corrupt_at_line_1() {
    let file = TempFile::new("read-garbage");
    // A PNG header: binary, with a line break in it.
    file.write(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01");
    match read_wire_log(file.path()) {
        Err(RecordError::Corrupt { path, line, .. }) => {
            assert_eq!(path, file.path());
            assert_eq!(line, 1);
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn a_sequence_number_going_back_is_out_of_order_at_its_line() {
    let file = TempFile::new("read-out-of-order");
    file.write(format!("{LINE_2}\n\n{LINE_1}\n{LINE_3}\n"));
    let mut reader = WireLogReader::open(file.path()).unwrap();
    assert_eq!(reader.next().unwrap().unwrap(), entry_2());
    let error = reader.next().unwrap().unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "`{}` line 3: sequence number 1 does not follow 2; the wire log is out of order",
            file.path().display()
        )
    );
    match error {
        RecordError::OutOfOrder {
            path,
            line,
            seq,
            previous,
        } => {
            assert_eq!(
                (path.as_path(), line, seq, previous),
                (file.path(), 3, 1, 2)
            );
        }
        other => panic!("expected OutOfOrder, got {other:?}"),
    }
    assert!(reader.next().is_none(), "nothing after an error");
}

#[test]
fn a_repeated_sequence_number_is_out_of_order() {
    let file = TempFile::new("read-repeated");
    file.write(format!("{LINE_1}\n{LINE_2}\n{LINE_2}\n"));
    match read_wire_log(file.path()) {
        Err(RecordError::OutOfOrder {
            line,
            seq,
            previous,
            ..
        }) => assert_eq!((line, seq, previous), (3, 2, 2)),
        other => panic!("expected OutOfOrder, got {other:?}"),
    }
}

#[test]
fn gaps_in_the_sequence_are_accepted() {
    let file = TempFile::new("read-gaps");
    file.write(format!("{LINE_1}\n{LINE_3}\n"));
    assert_eq!(
        read_wire_log(file.path()).unwrap(),
        vec![entry_1(), entry_3()]
    );
}

#[test]
fn an_empty_file_is_empty() {
    let file = TempFile::new("read-empty");
    file.write(b"");
    match read_wire_log(file.path()) {
        Err(RecordError::Empty { path }) => assert_eq!(path, file.path()),
        other => panic!("expected Empty, got {other:?}"),
    }
    let error = WireLogReader::open(file.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("`{}` holds no entries", file.path().display())
    );
}

#[test]
fn a_file_of_blank_lines_or_only_a_torn_line_is_empty() {
    let file = TempFile::new("read-blank");
    file.write(b"\n  \n");
    assert!(matches!(
        read_wire_log(file.path()),
        Err(RecordError::Empty { .. })
    ));
    file.write(&LINE_1[..20]);
    let mut reader = WireLogReader::open(file.path()).unwrap();
    assert!(matches!(
        reader.next(),
        Some(Err(RecordError::Empty { .. }))
    ));
    assert_eq!(reader.warnings().len(), 1);
}

#[test]
fn a_missing_file_is_an_io_error_naming_the_path() {
    let file = TempFile::new("read-missing");
    let error = read_wire_log(file.path()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("cannot access `{}`: ", file.path().display())),
        "{error}"
    );
    match error {
        RecordError::Io { path, source } => {
            assert_eq!(path, file.path());
            assert_eq!(source.kind(), ErrorKind::NotFound);
        }
        other => panic!("expected Io, got {other:?}"),
    }
    assert!(matches!(
        open_wire_log(file.path()),
        Err(RecordError::Io { .. })
    ));
}
