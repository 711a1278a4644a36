//! Suite files: the JSON format of `reel eval`, and its errors, each with the JSON path.

use reel_eval::{ArgsMatch, Criterion, EvalError, Order, Suite};

fn parse(text: &str) -> Result<Suite, EvalError> {
    Suite::from_json(text, "s.suite.json")
}

#[test]
fn a_suite_file_names_every_criterion_kind() {
    let suite = parse(
        r#"{
          "name": "weather",
          "judge": {"cassette": "judge.cassette.json", "model": "gemini-2.5-flash"},
          "prices": {"currency": "USD", "models": {"gemini-live-2.5-flash-preview": {"promptPerMillion": 0.5, "completionPerMillion": 2}}},
          "cases": [
            {"name": "r", "criterion": {"kind": "response_match", "expected": "Hi", "normalized": true, "turn": 1}},
            {"name": "c", "criterion": {"kind": "contains_match", "expected": ["14°C"], "ignoreCase": true}, "threshold": 0.5},
            {"name": "t", "criterion": {"kind": "trajectory", "calls": [{"name": "get_weather", "args": {"city": "London"}}], "order": "any_order", "args": "subset"}, "recordings": ["weather"]},
            {"name": "s", "criterion": {"kind": "safety", "forbidden": ["password"], "judge": true}},
            {"name": "m", "criterion": {"kind": "semantic_match", "expected": "14 degrees"}},
            {"name": "h", "criterion": {"kind": "hallucination"}},
            {"name": "p", "criterion": {"kind": "persona", "persona": "a butler"}}
          ]
        }"#,
    )
    .unwrap();
    let kinds: Vec<&str> = suite.cases().iter().map(|c| c.criterion.kind()).collect();
    assert_eq!(
        kinds,
        [
            "response_match",
            "contains_match",
            "trajectory",
            "safety",
            "semantic_match",
            "hallucination",
            "persona"
        ]
    );
    let Criterion::Trajectory(t) = &suite.cases()[2].criterion else {
        panic!("not a trajectory")
    };
    assert_eq!((t.order, t.args), (Order::AnyOrder, ArgsMatch::Subset));
    assert_eq!(suite.cases()[1].threshold, 0.5);
    assert_eq!(suite.judge_spec().unwrap().model, "gemini-2.5-flash");
}

#[test]
fn a_wrong_suite_file_says_what_and_where() {
    let errors = [
        (
            r#"{"name": "s", "cases": [{"name": "a", "criterion": {"kind": "contains_match", "expected": "x"}}]}"#,
            "s.suite.json: not a suite: invalid type: string \"x\", expected a sequence (at `cases[0].criterion.expected`)",
        ),
        (
            r#"{"name": "s", "cases": [{"name": "a", "criterion": {"kind": "custom"}}]}"#,
            "s.suite.json: not a suite: unknown variant `custom`, expected one of `response_match`, `contains_match`, `trajectory`, `safety`, `semantic_match`, `hallucination`, `persona` (at `cases[0].criterion.kind`)",
        ),
        (
            r#"{"name": "s", "cases": [{"name": "a", "criterion": {"kind": "hallucination"}}]}"#,
            "suite \"s\", case \"a\": `hallucination` is model-judged and the suite has no judge",
        ),
        (
            r#"{"name": "s", "cases": [{"name": "a", "criterion": {"kind": "safety"}, "threshold": 2}]}"#,
            "suite \"s\", case \"a\": threshold 2 is outside [0, 1]",
        ),
        (
            r#"{"name": "s", "cases": [{"name": "a", "criterion": {"kind": "safety"}}, {"name": "a", "criterion": {"kind": "safety"}}]}"#,
            "suite \"s\", case \"a\": another case has this name",
        ),
        (
            r#"{"name": "s", "cases": [], "extra": 1}"#,
            "s.suite.json: not a suite: unknown field `extra`, expected one of `name`, `judge`, `prices`, `cases` (at `extra`)",
        ),
    ];
    for (text, expected) in errors {
        assert_eq!(parse(text).unwrap_err().to_string(), expected, "{text}");
    }
}
