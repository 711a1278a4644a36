//! The four exporters, golden: JSON, JUnit XML, Markdown, TRX. The XML ones parse back as
//! well-formed XML, and text from a recording cannot break any of them.

use quick_xml::Reader;
use quick_xml::events::Event;
use reel_eval::export::{Format, render};
use reel_eval::{CaseOutcome, CaseResult, Cost, EvaluationReport, RecordingReport};

use super::golden;

/// An answer a hostile or unlucky recording could hold: XML and Markdown specials, a
/// table separator, a line break, an escape sequence and a NUL.
const UNTRUSTED: &str = "</failure><x a=\"1\"> & 'q' | `code` *b* [l](u)\nnext\u{1b}[31m\u{0}";

fn case(name: &str, outcome: CaseOutcome, score: Option<f64>, detail: &str) -> CaseResult {
    CaseResult {
        case: name.to_owned(),
        criterion: "contains_match".to_owned(),
        outcome,
        score,
        threshold: 1.0,
        detail: detail.to_owned(),
    }
}

fn report() -> EvaluationReport {
    EvaluationReport::new(
        "weather <smoke>",
        vec![
            RecordingReport {
                name: "weather".to_owned(),
                path: "recordings/weather.wire.jsonl".to_owned(),
                error: None,
                cases: vec![
                    case("answers", CaseOutcome::Passed, Some(1.0), "found 1 of 1"),
                    case(
                        "hostile",
                        CaseOutcome::Failed,
                        Some(0.5),
                        &format!("missing {UNTRUSTED:?} in {UNTRUSTED}"),
                    ),
                    case(
                        "judged",
                        CaseOutcome::Error,
                        None,
                        "the judge's call failed: miss",
                    ),
                ],
                cost: Some(Cost {
                    amount: 0.000243,
                    currency: "USD".to_owned(),
                    priced_answers: 3,
                    unpriced_answers: 0,
                    unpriced_models: Vec::new(),
                }),
            },
            RecordingReport {
                name: "torn".to_owned(),
                path: "recordings/torn.wire.jsonl".to_owned(),
                error: Some("`recordings/torn.wire.jsonl` line 2 is not a valid entry".to_owned()),
                cases: Vec::new(),
                cost: None,
            },
        ],
    )
}

/// Reads `xml` to its end with a strict XML reader: every element closed, every entity
/// known, every attribute quoted. Returns the text of every element named `name`.
fn well_formed(xml: &str, name: &[u8]) -> Vec<String> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut inside = false;
    let mut texts = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => return texts,
            Ok(Event::Start(e)) => {
                inside = e.name().as_ref() == name;
                if inside {
                    texts.push(String::new());
                }
            }
            Ok(Event::End(_)) => inside = false,
            Ok(Event::Text(t)) if inside => {
                let text = t.xml10_content().unwrap().into_owned();
                texts.last_mut().unwrap().push_str(&text);
            }
            Ok(Event::GeneralRef(r)) if inside => {
                let entity = String::from_utf8(r.to_vec()).unwrap();
                let c = match entity.as_str() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    other => panic!("unknown entity {other}"),
                };
                texts.last_mut().unwrap().push_str(c);
            }
            Ok(_) => {}
            Err(error) => panic!(
                "not well-formed at {}: {error}\n{xml}",
                reader.buffer_position()
            ),
        }
    }
}

#[test]
fn json_is_golden() {
    golden("report.json", &render(&report(), Format::Json));
}

#[test]
fn junit_is_golden_well_formed_and_keeps_untrusted_text_as_text() {
    let xml = render(&report(), Format::Junit);
    golden("report.junit.xml", &xml);
    let failures = well_formed(&xml, b"failure");
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].contains("</failure><x a=\"1\"> & 'q'"),
        "{failures:?}"
    );
}

#[test]
fn trx_is_golden_well_formed_and_keeps_untrusted_text_as_text() {
    let xml = render(&report(), Format::Trx);
    golden("report.trx", &xml);
    let out = well_formed(&xml, b"StdOut");
    assert_eq!(out.len(), 3);
    // The untrusted text comes back as text; the NUL and ESC are dropped.
    assert!(
        out[1].ends_with("</failure><x a=\"1\"> & 'q' | `code` *b* [l](u)\nnext[31m"),
        "{:?}",
        out[1]
    );
    assert!(!xml.contains('\u{0}') && !xml.contains('\u{1b}'));
    // The same report gives the same bytes: ids derive from names, no clock is read.
    assert_eq!(render(&report(), Format::Trx), xml);
}

#[test]
fn markdown_is_golden_and_untrusted_text_stays_in_its_cell() {
    let text = render(&report(), Format::Markdown);
    golden("report.md", &text);
    let row = text
        .lines()
        .find(|l| l.starts_with("| weather | hostile"))
        .unwrap();
    assert_eq!(row.matches(" | ").count(), 5, "{row}");
    assert!(!text.contains("<x a"));
}
