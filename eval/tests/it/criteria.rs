//! The deterministic criteria on the weather session's trace: exact scores and details.

use reel_eval::{ArgsMatch, CaseOutcome, E, Order, Score, evaluate_trace};
use serde_json::json;

use super::weather_trace;

/// Runs one criterion as a one-case suite and returns (outcome, score, detail).
async fn one(criterion: impl Into<reel_eval::Criterion>) -> (CaseOutcome, Option<f64>, String) {
    let suite = E::suite("s").case(E::case("c", criterion));
    let report = evaluate_trace(&suite, "weather", &weather_trace()).await;
    let case = report.cases.into_iter().next().unwrap();
    (case.outcome, case.score, case.detail)
}

#[tokio::test]
async fn response_match_compares_the_last_answer_exactly_or_normalized() {
    assert_eq!(
        one(E::response_match("You're welcome. Have a lovely day!")).await,
        (
            CaseOutcome::Passed,
            Some(1.0),
            "the answer matches".to_owned()
        )
    );
    assert_eq!(
        one(E::response_match("you're welcome have a LOVELY day")).await,
        (
            CaseOutcome::Failed,
            Some(0.0),
            "expected \"you're welcome have a LOVELY day\", got \"You're welcome. Have a lovely day!\""
                .to_owned()
        )
    );
    assert_eq!(
        one(E::response_match("youre  welcome have a LOVELY day").normalized()).await,
        (
            CaseOutcome::Passed,
            Some(1.0),
            "the answer matches".to_owned()
        )
    );
    assert_eq!(
        one(E::response_match(
            "It's 14°C and cloudy in London right now. Anything else I can help with?"
        )
        .turn(2))
        .await
        .1,
        Some(1.0)
    );
    assert_eq!(
        one(E::response_match("x").turn(9)).await,
        (
            CaseOutcome::Failed,
            Some(0.0),
            "the recording has no turn 9 (3 turns)".to_owned()
        )
    );
}

#[tokio::test]
async fn contains_match_scores_the_share_of_pieces_found() {
    assert_eq!(
        one(E::contains_match(["14°C", "London", "sunny", "rain"])).await,
        (
            CaseOutcome::Failed,
            Some(0.5),
            "found 2 of 4; missing \"sunny\", \"rain\"".to_owned()
        )
    );
    assert_eq!(one(E::contains_match(["CLOUDY"])).await.1, Some(0.0));
    assert_eq!(
        one(E::contains_match(["CLOUDY"]).ignore_case()).await,
        (CaseOutcome::Passed, Some(1.0), "found 1 of 1".to_owned())
    );
    // Only turn 1's answer: the temperature is in turn 2.
    assert_eq!(one(E::contains_match(["14°C"]).turn(1)).await.1, Some(0.0));
}

#[tokio::test]
async fn trajectory_matches_names_and_arguments_by_the_rules_given() {
    let call = |city| E::call("get_weather").args(json!({ "city": city }));
    assert_eq!(
        one(E::trajectory([call("London")])).await,
        (
            CaseOutcome::Passed,
            Some(1.0),
            "1 of 1 expected calls matched; made: get_weather({\"city\":\"London\"})".to_owned()
        )
    );
    assert_eq!(one(E::trajectory([call("Paris")])).await.1, Some(0.0));
    // Exact arguments refuse an extra expected field; subset needs every expected field.
    let extra = E::call("get_weather").args(json!({"city": "London", "units": "C"}));
    assert_eq!(one(E::trajectory([extra.clone()])).await.1, Some(0.0));
    assert_eq!(
        one(E::trajectory([extra]).args(ArgsMatch::Subset)).await.1,
        Some(0.0)
    );
    assert_eq!(
        one(E::trajectory([E::call("get_weather").args(json!({}))]).args(ArgsMatch::Subset))
            .await
            .1,
        Some(1.0)
    );
    assert_eq!(
        one(E::trajectory([call("Paris")]).args(ArgsMatch::Ignore))
            .await
            .1,
        Some(1.0)
    );
    // Two expected, one made: in order and any order score 1/2; exact scores over the
    // longer list.
    let two = [E::call("get_forecast"), E::call("get_weather")];
    assert_eq!(one(E::trajectory(two.clone())).await.1, Some(0.5));
    assert_eq!(
        one(E::trajectory(two.clone()).order(Order::AnyOrder)).await,
        (
            CaseOutcome::Failed,
            Some(0.5),
            "1 of 2 expected calls matched; made: get_weather({\"city\":\"London\"})".to_owned()
        )
    );
    assert_eq!(
        one(E::trajectory([E::call("get_weather"), E::call("get_forecast")]).order(Order::Exact))
            .await
            .1,
        Some(0.5)
    );
    assert_eq!(
        one(E::trajectory([]).order(Order::Exact)).await.1,
        Some(0.0),
        "exact with no expected call: the call made is one too many"
    );
}

#[tokio::test]
async fn safety_finds_forbidden_patterns_in_answers_and_tool_arguments() {
    assert_eq!(
        one(E::safety(["password", "credit card"])).await,
        (
            CaseOutcome::Passed,
            Some(1.0),
            "none of 2 forbidden patterns".to_owned()
        )
    );
    assert_eq!(
        one(E::safety(["LOVELY", "london\""])).await,
        (
            CaseOutcome::Failed,
            Some(0.0),
            "forbidden: \"LOVELY\", \"london\\\"\"".to_owned()
        )
    );
}

#[tokio::test]
async fn a_custom_check_scores_and_a_panicking_one_is_an_error_never_a_pass() {
    let turns = E::custom("three turns", |trace| {
        Score::pass_fail(
            trace.turns().len() == 3,
            format!("{} turns", trace.turns().len()),
        )
    });
    assert_eq!(
        one(turns).await,
        (CaseOutcome::Passed, Some(1.0), "3 turns".to_owned())
    );
    let broken = E::custom("broken", |_| panic!("a bug in the check"));
    assert_eq!(
        one(broken).await,
        (
            CaseOutcome::Error,
            None,
            "the custom check panicked".to_owned()
        )
    );
}

#[tokio::test]
async fn thresholds_decide_and_cases_apply_only_to_the_recordings_named() {
    let suite = E::suite("s")
        .case(E::case("half", E::contains_match(["London", "Paris"])).threshold(0.5))
        .case(E::case("elsewhere", E::contains_match(["x"])).only(["other"]));
    let report = evaluate_trace(&suite, "weather", &weather_trace()).await;
    assert_eq!(report.cases.len(), 1);
    assert_eq!(report.cases[0].outcome, CaseOutcome::Passed);
    assert_eq!(report.cases[0].score, Some(0.5));
}
