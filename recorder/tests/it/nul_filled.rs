//! A recording with a NUL-filled region (what a filesystem leaves where a power loss kept a
//! file's length but not its last writes) is an error naming the file and the first bad
//! line; a salvaging reader reads exactly the entries before it.

use crate::common;

use bytes::Bytes;
use common::TempFile;
use reel_recorder::journal::{StateMutation, open_journal};
use reel_recorder::jsonl::JsonlReader;
use reel_recorder::salvage::{Damage, Salvaged};
use reel_recorder::wire_log::{Direction, WireEntry};
use reel_recorder::{RecordError, WireLogReader, read_wire_log};

/// Entry `seq`: alternating directions, a small JSON payload naming it.
fn entry(seq: u64) -> WireEntry {
    let dir = if seq % 2 == 1 {
        Direction::Out
    } else {
        Direction::In
    };
    let payload = Bytes::from(format!(r#"{{"n":{seq}}}"#));
    WireEntry::frame(seq, dir, 1_000 + seq, payload, None, false)
}

/// Entries 1 to `count`, one line each.
fn log_lines(count: u64) -> Vec<String> {
    (1..=count)
        .map(|seq| serde_json::to_string(&entry(seq)).unwrap() + "\n")
        .collect()
}

/// The file as a power cut leaves it: the same length, every byte from `from` on zero.
fn nul_tail(text: &str, from: usize) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    bytes[from..].fill(0);
    bytes
}

#[test]
fn a_nul_filled_tail_names_the_file_and_its_first_line() {
    let file = TempFile::new("nul-tail");
    let lines = log_lines(5);
    let text = lines.concat();
    // Zeros from the middle of line 3 to the end of the file.
    let from = lines[0].len() + lines[1].len() + 10;
    file.write(nul_tail(&text, from));

    let error = read_wire_log(file.path()).unwrap_err();
    match &error {
        RecordError::NulFilled { path, line } => {
            assert_eq!((path.as_path(), *line), (file.path(), 3));
        }
        other => panic!("expected NulFilled, got {other:?}"),
    }
    assert_eq!(
        error.to_string(),
        format!(
            "`{}` line 3 is NUL-filled: the file was cut off there (a power loss leaves zeros where unwritten entries were); salvage reads the entries before it",
            file.path().display()
        )
    );

    let mut reader = WireLogReader::open(file.path()).unwrap().salvaging();
    let read: Vec<WireEntry> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(read, vec![entry(1), entry(2)]);
    assert_eq!(
        reader.salvaged(),
        Some(&Salvaged {
            path: file.path().to_path_buf(),
            entries: 2,
            line: 3,
            damage: Damage::NulFilled,
        })
    );
    // Not mistaken for a torn last line.
    assert_eq!(reader.warnings(), []);
}

#[test]
fn a_nul_region_in_the_middle_stops_there_even_with_good_lines_after_it() {
    let file = TempFile::new("nul-middle");
    let lines = log_lines(6);
    // Line 4 is lost to zeros (its newline too); lines 5 and 6 were written after.
    let mut bytes = lines[..3].concat().into_bytes();
    bytes.extend(std::iter::repeat_n(0u8, lines[3].len()));
    bytes.extend_from_slice(lines[4..].concat().as_bytes());
    file.write(&bytes);

    match read_wire_log(file.path()) {
        Err(RecordError::NulFilled { line, .. }) => assert_eq!(line, 4),
        other => panic!("expected NulFilled, got {other:?}"),
    }
    let mut reader = WireLogReader::open(file.path()).unwrap().salvaging();
    let read: Vec<WireEntry> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(read, vec![entry(1), entry(2), entry(3)]);
    assert_eq!(reader.salvaged().map(|s| (s.entries, s.line)), Some((3, 4)));
}

#[test]
fn a_file_of_zeros_is_nul_filled_at_line_1_even_when_salvaging() {
    let file = TempFile::new("all-zeros");
    file.write([0u8; 4096]);
    match read_wire_log(file.path()) {
        Err(RecordError::NulFilled { line, .. }) => assert_eq!(line, 1),
        other => panic!("expected NulFilled, got {other:?}"),
    }
    // Nothing to salvage: the damage, not "holds no entries".
    let mut reader = WireLogReader::open(file.path()).unwrap().salvaging();
    match reader.next() {
        Some(Err(RecordError::NulFilled { line, .. })) => assert_eq!(line, 1),
        other => panic!("expected NulFilled, got {other:?}"),
    }
    assert!(reader.next().is_none());
}

#[test]
fn a_nul_region_longer_than_a_line_may_be_is_still_nul_filled() {
    let text = [&b"[1]\n"[..], &[0u8; 64][..]].concat();
    let mut reader = JsonlReader::<Vec<u8>, _>::new(&text[..], "x.jsonl").with_max_line_bytes(16);
    assert_eq!(reader.next().unwrap().unwrap(), vec![1]);
    match reader.next() {
        Some(Err(RecordError::NulFilled { line, .. })) => assert_eq!(line, 2),
        other => panic!("expected NulFilled, got {other:?}"),
    }
}

#[test]
fn salvaging_stops_at_a_corrupt_line_too_and_a_torn_end_is_still_a_warning() {
    let text = "[1]\n[2]\n{\"x\" 1}\n[4]\n";
    let mut reader =
        JsonlReader::<serde_json::Value, _>::new(text.as_bytes(), "c.jsonl").salvaging();
    let read: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(read, vec![serde_json::json!([1]), serde_json::json!([2])]);
    assert_eq!(
        reader.salvaged(),
        Some(&Salvaged {
            path: "c.jsonl".into(),
            entries: 2,
            line: 3,
            damage: Damage::Corrupt {
                message: "expected `:`, at column 6".into()
            },
        })
    );

    let mut reader =
        JsonlReader::<serde_json::Value, _>::new(&b"[1]\n[2"[..], "t.jsonl").salvaging();
    let read: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(read, vec![serde_json::json!([1])]);
    assert_eq!(reader.salvaged(), None);
    assert_eq!(reader.warnings().len(), 1);
}

#[test]
fn a_journal_with_a_nul_filled_tail_salvages_the_mutations_before_it() {
    let file = TempFile::new("nul-journal");
    let line = |sequence: u64| {
        format!(
            "{{\"sequence\":{sequence},\"key\":\"app:n\",\"old\":null,\"new\":{sequence},\"origin\":\"set\",\"timestamp_ms\":1718000000000,\"delta\":false}}\n"
        )
    };
    let text: String = (1..=4).map(line).collect();
    let from = line(1).len() + 3;
    file.write(nul_tail(&text, from));

    let mut strict = open_journal(file.path()).unwrap();
    assert_eq!(strict.next().unwrap().unwrap().sequence, 1);
    match strict.next() {
        Some(Err(RecordError::NulFilled { line, .. })) => assert_eq!(line, 2),
        other => panic!("expected NulFilled, got {other:?}"),
    }

    let mut reader = open_journal(file.path()).unwrap().salvaging();
    let read: Vec<StateMutation> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(read.iter().map(|m| m.sequence).collect::<Vec<_>>(), [1]);
    assert_eq!(reader.salvaged().map(|s| (s.entries, s.line)), Some((1, 2)));
}
