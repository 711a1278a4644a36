//! The streaming JSONL reader: blank lines, torn last lines, corruption, missing files.

use std::path::PathBuf;

use reel_recorder::RecordError;
use reel_recorder::jsonl::{JsonlReader, JsonlWarning};
use serde::Deserialize;

#[derive(Debug, PartialEq, Deserialize)]
struct Entry {
    seq: u64,
}

fn read(text: &str) -> (Vec<Result<Entry, RecordError>>, Vec<JsonlWarning>) {
    let mut reader = JsonlReader::<Entry, _>::new(text.as_bytes(), "tape.jsonl");
    let items: Vec<_> = reader.by_ref().collect();
    (items, reader.warnings().to_vec())
}

fn entries(items: Vec<Result<Entry, RecordError>>) -> Vec<u64> {
    items.into_iter().map(|e| e.unwrap().seq).collect()
}

#[test]
fn reads_every_line_and_skips_blank_ones() {
    let (items, warnings) = read("{\"seq\":1}\n\n  \n{\"seq\":2}\r\n{\"seq\":3}\n");
    assert_eq!(entries(items), vec![1, 2, 3]);
    assert!(warnings.is_empty());
}

#[test]
fn a_complete_last_line_without_newline_is_read() {
    let (items, warnings) = read("{\"seq\":1}\n{\"seq\":2}");
    assert_eq!(entries(items), vec![1, 2]);
    assert!(warnings.is_empty());
}

#[test]
fn a_torn_last_line_is_skipped_with_one_warning() {
    let (items, warnings) = read("{\"seq\":1}\n{\"seq\":2}\n{\"se");
    assert_eq!(entries(items), vec![1, 2]);
    assert_eq!(
        warnings,
        vec![JsonlWarning {
            path: PathBuf::from("tape.jsonl"),
            line: 3,
            message: "torn last line skipped (a write was cut short): \
                      EOF while parsing a string, at column 4"
                .to_owned(),
        }]
    );
}

#[test]
fn a_torn_last_line_cut_inside_a_multibyte_character_is_skipped() {
    let mut bytes = b"{\"seq\":1}\n{\"seq\":2,\"note\":\"caf".to_vec();
    bytes.push(0xC3); // first byte of "é", the second never written
    let mut reader = JsonlReader::<Entry, _>::new(&bytes[..], "tape.jsonl");
    let seqs: Vec<u64> = reader.by_ref().map(|e| e.unwrap().seq).collect();
    assert_eq!(seqs, vec![1]);
    assert_eq!(reader.warnings().len(), 1);
    assert_eq!(reader.warnings()[0].line, 2);
}

#[test]
fn a_corrupt_middle_line_is_an_error_with_its_line_number() {
    let (items, warnings) = read("{\"seq\":1}\n\n{\"seq\":2\n{\"seq\":3}\n");
    assert_eq!(items.len(), 2, "the reader stops at the first error");
    assert_eq!(items[0].as_ref().unwrap(), &Entry { seq: 1 });
    match &items[1] {
        Err(RecordError::Corrupt {
            path,
            line,
            message,
        }) => {
            assert_eq!(path, &PathBuf::from("tape.jsonl"));
            assert_eq!(*line, 3);
            assert_eq!(message, "EOF while parsing an object, at column 8");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(warnings.is_empty());
}

#[test]
fn a_bad_last_line_that_ends_with_a_newline_is_corrupt() {
    let (items, _) = read("{\"seq\":1}\n{\"se\n");
    assert!(matches!(
        items.last(),
        Some(Err(RecordError::Corrupt { line: 2, .. }))
    ));
}

#[test]
fn a_last_line_of_the_wrong_shape_is_corrupt_not_torn() {
    let (items, warnings) = read("{\"seq\":1}\n{\"seq\":\"sk-secret\"}");
    match items.last() {
        Some(Err(RecordError::Corrupt { line, message, .. })) => {
            assert_eq!(*line, 2);
            // The parser's message never carries the line's content.
            assert_eq!(
                message,
                "invalid type: string \"…\", expected u64, at column 18"
            );
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(warnings.is_empty());
}

#[test]
fn corrupt_error_message_names_file_and_line() {
    let (items, _) = read("nope\n{\"seq\":1}\n");
    let error = items.into_iter().next().unwrap().unwrap_err();
    assert_eq!(
        error.to_string(),
        "`tape.jsonl` line 1 is not a valid entry (expected ident, at column 2); \
         the file is corrupt"
    );
}

#[test]
fn a_missing_file_is_an_io_error_naming_the_path() {
    let path = std::env::temp_dir().join("reel-recorder-test-no-such-file.jsonl");
    match JsonlReader::<Entry>::open(&path) {
        Err(RecordError::Io {
            path: named,
            source,
        }) => {
            assert_eq!(named, path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        Err(other) => panic!("expected Io, got {other:?}"),
        Ok(_) => panic!("opened a file that does not exist"),
    }
}
