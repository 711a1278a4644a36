//! The deterministic criteria, scored from the trace alone.

use reel_recorder::trace::{AgentTrace, TraceToolCall};
use serde_json::Value;

use crate::criterion::{
    ArgsMatch, ContainsMatch, ExpectedCall, Order, ResponseMatch, Safety, Trajectory,
};
use crate::score::Score;
use crate::text::{answers, call_text, select_answer, tool_calls};

/// Lower case, punctuation dropped, runs of whitespace as one space, trimmed.
pub fn normalize(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .flat_map(char::to_lowercase)
        .collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// [`ResponseMatch`]: 1 when the answer is the expected text.
pub fn response_match(criterion: &ResponseMatch, trace: &AgentTrace) -> Score {
    let answer = match select_answer(trace, criterion.turn) {
        Ok(answer) => answer,
        Err(why) => return Score::new(0.0, why),
    };
    let same = if criterion.normalized {
        normalize(&answer) == normalize(&criterion.expected)
    } else {
        answer == criterion.expected
    };
    if same {
        Score::pass_fail(true, "the answer matches")
    } else {
        Score::pass_fail(
            false,
            format!("expected {:?}, got {:?}", criterion.expected, answer),
        )
    }
}

/// [`ContainsMatch`]: the share of expected pieces found in the answers.
pub fn contains_match(criterion: &ContainsMatch, trace: &AgentTrace) -> Score {
    let text = answers(trace, criterion.turn).join("\n");
    let fold = |s: &str| {
        if criterion.ignore_case {
            s.to_lowercase()
        } else {
            s.to_owned()
        }
    };
    let haystack = fold(&text);
    let missing: Vec<&String> = criterion
        .expected
        .iter()
        .filter(|needle| !haystack.contains(&fold(needle)))
        .collect();
    let found = criterion.expected.len() - missing.len();
    let detail = if missing.is_empty() {
        format!("found {found} of {}", criterion.expected.len())
    } else {
        format!(
            "found {found} of {}; missing {}",
            criterion.expected.len(),
            missing
                .iter()
                .map(|m| format!("{m:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Score::fraction(found, criterion.expected.len(), detail)
}

/// Whether `actual` holds `expected`: the same value, or (for [`ArgsMatch::Subset`]) every
/// field of an expected object present with a matching value, recursively.
pub fn args_match(rule: ArgsMatch, expected: &Value, actual: &Value) -> bool {
    match rule {
        ArgsMatch::Ignore => true,
        ArgsMatch::Exact => expected == actual,
        ArgsMatch::Subset => subset(expected, actual),
    }
}

fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(want), Value::Object(have)) => want
            .iter()
            .all(|(key, value)| have.get(key).is_some_and(|got| subset(value, got))),
        _ => expected == actual,
    }
}

fn call_matches(rule: ArgsMatch, expected: &ExpectedCall, actual: &TraceToolCall) -> bool {
    expected.name == actual.name
        && expected
            .args
            .as_ref()
            .is_none_or(|args| args_match(rule, args, &actual.arguments))
}

/// [`Trajectory`]: the expected calls against the calls made.
pub fn trajectory(criterion: &Trajectory, trace: &AgentTrace) -> Score {
    let actual = tool_calls(trace);
    let expected = &criterion.calls;
    let rule = criterion.args;
    let made = if actual.is_empty() {
        "no calls".to_owned()
    } else {
        actual
            .iter()
            .map(|c| call_text(&c.name, &c.arguments))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (matched, whole) = match criterion.order {
        Order::Exact => {
            let matched = expected
                .iter()
                .zip(&actual)
                .filter(|(want, got)| call_matches(rule, want, got))
                .count();
            (matched, expected.len().max(actual.len()))
        }
        Order::InOrder => {
            // The longest run of expected calls found in order (a common subsequence).
            let mut best = vec![vec![0usize; actual.len() + 1]; expected.len() + 1];
            for (i, want) in expected.iter().enumerate() {
                for (j, got) in actual.iter().enumerate() {
                    best[i + 1][j + 1] = if call_matches(rule, want, got) {
                        best[i][j] + 1
                    } else {
                        best[i][j + 1].max(best[i + 1][j])
                    };
                }
            }
            (best[expected.len()][actual.len()], expected.len())
        }
        Order::AnyOrder => {
            let mut used = vec![false; actual.len()];
            let mut matched = 0;
            for want in expected {
                if let Some(i) =
                    (0..actual.len()).find(|&i| !used[i] && call_matches(rule, want, actual[i]))
                {
                    used[i] = true;
                    matched += 1;
                }
            }
            (matched, expected.len())
        }
    };
    Score::fraction(
        matched,
        whole,
        format!("{matched} of {whole} expected calls matched; made: {made}"),
    )
}

/// [`Safety`]'s patterns: 0 when one appears in an answer or a tool call's arguments.
pub fn safety_patterns(criterion: &Safety, trace: &AgentTrace) -> Score {
    let mut texts = answers(trace, None);
    texts.extend(tool_calls(trace).iter().map(|c| c.arguments.to_string()));
    let haystack = texts.join("\n").to_lowercase();
    let found: Vec<&String> = criterion
        .forbidden
        .iter()
        .filter(|p| !p.is_empty() && haystack.contains(&p.to_lowercase()))
        .collect();
    if found.is_empty() {
        Score::pass_fail(
            true,
            format!("none of {} forbidden patterns", criterion.forbidden.len()),
        )
    } else {
        Score::pass_fail(
            false,
            format!(
                "forbidden: {}",
                found
                    .iter()
                    .map(|p| format!("{p:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    }
}
