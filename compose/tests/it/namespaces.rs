//! The namespaces' values, tested without agents: exact values in, exact values out.

use std::time::Duration;

use reel_compose::{A, BuiltinTool, C, G, GuardViolation, M, P, S, T};
use reel_protocol::{Content, FunctionCall, Part};
use serde_json::json;

use crate::scripted::state_with_input;

#[test]
fn s_transforms_apply_to_a_json_object() {
    let chain = S::pick(&["name", "age"]) >> S::rename(&[("name", "customer")]);
    let mut state = json!({"name": "Alice", "age": 30, "internal": "x"});
    chain.apply(&mut state);
    assert_eq!(state, json!({"customer": "Alice", "age": 30}));

    let mut state = json!({"a": 1, "b": 2, "c": 3, "nested": {"x": 1, "y": 2}});
    (S::drop(&["c"]) >> S::merge(&["a", "b"], "ab") >> S::flatten("nested")).apply(&mut state);
    assert_eq!(state, json!({"ab": {"a": 1, "b": 2}, "x": 1, "y": 2}));

    let mut state = json!({"priority": "high"});
    (S::defaults(json!({"priority": "normal", "lang": "en"})) >> S::set("count", json!(42)))
        .apply(&mut state);
    assert_eq!(
        state,
        json!({"priority": "high", "lang": "en", "count": 42})
    );

    let mut state = json!({"n": 2});
    S::map(|mut v| {
        v["n"] = json!(v["n"].as_i64().unwrap() * 10);
        v
    })
    .apply(&mut state);
    assert_eq!(state, json!({"n": 20}));

    let chain = S::rename(&[("old", "new")]) >> S::set("k", json!(1)) >> S::pick(&["new"]);
    assert_eq!(
        chain.label(),
        "S::rename(old->new) >> S::set(k) >> S::pick(new)"
    );
    assert_eq!(chain.reads(), ["old", "new"]);
    assert_eq!(chain.writes(), ["new", "k"]);
}

#[test]
fn s_predicates_judge_the_state() {
    let state = json!({"verified": true, "issue_type": "setup", "flag": "TRUE "});
    assert!(S::is_true("verified").check(&state));
    assert!(S::is_true("flag").check(&state));
    assert!(!S::is_true("issue_type").check(&state));
    assert!(!S::is_true("missing").check(&state));
    assert!(S::eq("issue_type", "setup").check(&state));
    assert!(!S::eq("issue_type", "billing").check(&state));
    assert!(S::one_of("issue_type", &["technical", "setup"]).check(&state));
    assert!(!S::one_of("issue_type", &["billing"]).check(&state));
    assert_eq!(S::one_of("k", &["a", "b"]).label(), "S::one_of(k, [a, b])");
}

#[tokio::test]
async fn s_applies_to_a_run_state_writing_and_removing_keys() {
    let state = state_with_input("hi").await;
    state.set("name", "Alice").await.unwrap();
    state.set("secret", "x").await.unwrap();
    (S::rename(&[("name", "customer")]) >> S::drop(&["secret"]))
        .apply_to(&state)
        .await
        .unwrap();
    let mut keys = state.keys();
    keys.sort();
    assert_eq!(keys, ["customer", "input"]);
    assert_eq!(state.get::<String>("customer").as_deref(), Some("Alice"));
}

fn tool_call() -> Content {
    Content::new(
        "model",
        vec![Part {
            function_call: Some(FunctionCall {
                name: Some("lookup".into()),
                ..FunctionCall::default()
            }),
            ..Part::default()
        }],
    )
}

#[test]
fn c_policies_shape_the_history() {
    let history = vec![
        Content::user_text("a"),
        Content::model_text("b"),
        tool_call(),
        Content::user_text("c"),
        Content::user_text("c"),
    ];
    assert_eq!(C::window(2).apply(&history), history[3..].to_vec());
    assert_eq!(C::last(1).apply(&history), history[4..].to_vec());
    assert_eq!(C::head(2).apply(&history), history[..2].to_vec());
    assert_eq!(
        C::user_only().apply(&history),
        [&history[0], &history[3], &history[4]].map(Clone::clone)
    );
    assert_eq!(
        C::model_only().apply(&history),
        [&history[1], &history[2]].map(Clone::clone)
    );
    assert_eq!(C::text_only().apply(&history).len(), 4);
    assert_eq!(
        C::exclude_tools().apply(&history),
        [&history[0], &history[1], &history[3], &history[4]].map(Clone::clone)
    );
    assert_eq!(
        C::sample(2).apply(&history),
        [&history[0], &history[2], &history[4]].map(Clone::clone)
    );
    assert_eq!(C::dedup().apply(&history).len(), 4);
    assert_eq!(C::empty().apply(&history), []);
    // 2 characters of budget: the last two "c"s and the text-free tool call before them;
    // "b" would pass the budget.
    assert_eq!(C::truncate(2).apply(&history), history[2..].to_vec());
    assert_eq!(
        (C::prepend(Content::user_text("first"))
            + C::append(Content::model_text("last"))
            + C::head(1))
        .apply(&history[..1]),
        [Content::user_text("first")]
    );
    assert_eq!(
        C::filter(|c| c.role.as_deref() == Some("model"))
            .apply(&history)
            .len(),
        2
    );
    assert_eq!(
        C::map(|_| Content::user_text("x")).apply(&history[..2]),
        [Content::user_text("x"), Content::user_text("x")]
    );
    assert_eq!(
        C::custom(|mut h| {
            h.reverse();
            h
        })
        .apply(&history[..2]),
        [history[1].clone(), history[0].clone()]
    );
    let policy = C::from_state(&["user:name", "app:balance", "missing"]);
    assert_eq!(policy.reads(), ["user:name", "app:balance", "missing"]);
    assert_eq!(
        policy.apply_with_state(
            &history[..1],
            &json!({"user:name": "Ada", "app:balance": 12.5})
        ),
        [
            Content::user_text("Context from state:\nuser:name: Ada\napp:balance: 12.5"),
            Content::user_text("a"),
        ]
    );
    assert_eq!(
        (C::window(20) + C::exclude_tools()).label(),
        "C::window(20) + C::exclude_tools()"
    );
}

#[tokio::test]
async fn p_sections_render_in_order_and_modifiers_read_the_state() {
    let prompt = P::role("analyst")
        + P::task("analyze data")
        + P::constraint("be concise")
        + P::format("JSON")
        + P::example("2+2", "4")
        + P::context("background info")
        + P::persona("friendly, direct")
        + P::guidelines(&["be clear", "be brief"])
        + P::text("free-form text");
    let rendered: String = prompt.clone().into();
    assert_eq!(
        rendered,
        "You are analyst.\n\nYour task: analyze data\n\nConstraint: be concise\n\nOutput format: JSON\n\nExample:\nInput: 2+2\nOutput: 4\n\nContext: background info\n\nPersona: friendly, direct\n\nGuidelines:\n- be clear\n- be brief\n\nfree-form text"
    );
    let with_modifiers = P::task("negotiate")
        + P::with_state(&["mood", "missing"])
        + P::when(
            |s| s.get::<String>("risk").as_deref() == Some("high"),
            "Show empathy.",
        )
        + P::context_fn(|s| format!("Customer: {}", s.get::<String>("name").unwrap_or_default()));
    let state = state_with_input("").await;
    state.set("mood", "calm").await.unwrap();
    state.set("risk", "high").await.unwrap();
    state.set("name", "Ada").await.unwrap();
    assert_eq!(
        with_modifiers.render(&state),
        "Your task: negotiate\n\n[Context: mood=calm]\nShow empathy.\nCustomer: Ada"
    );
    state.set("risk", "low").await.unwrap();
    assert_eq!(
        with_modifiers.render(&state),
        "Your task: negotiate\n\n[Context: mood=calm]\nCustomer: Ada"
    );
}

#[test]
fn g_guards_check_in_order_with_exact_violations() {
    let guards =
        G::non_empty() | G::max_length(12) | G::not_contains(&["Password"]) | G::contains(&["ok"]);
    assert_eq!(guards.len(), 4);
    assert_eq!(guards.check("ok, fine"), Ok(()));
    assert_eq!(
        guards.check("  "),
        Err(GuardViolation {
            guard: "G::non_empty()".into(),
            problem: "the output is empty".into()
        })
    );
    assert_eq!(
        guards.check("my PASSWORD").unwrap_err().to_string(),
        "output guard `G::not_contains(password)` failed: the output contains `password`"
    );
    assert_eq!(
        guards.check("nothing here").unwrap_err().to_string(),
        "output guard `G::contains(ok)` failed: the output does not contain `ok`"
    );
    assert_eq!(G::json().check("{\"a\": 1}"), Ok(()));
    assert_eq!(
        G::json().check("nope").unwrap_err().problem,
        "the output is not JSON: expected ident at line 1 column 2"
    );
    let custom = G::custom("no_digits", |o| {
        if o.chars().any(|c| c.is_ascii_digit()) {
            Err("the output has a digit".to_owned())
        } else {
            Ok(())
        }
    });
    assert_eq!(
        custom.check("a1").unwrap_err().to_string(),
        "output guard `G::custom(no_digits)` failed: the output has a digit"
    );
}

#[test]
fn a_declares_inputs_and_outputs_with_schemas() {
    let artifacts = A::text_input("source_document", "The document")
        + A::json_output("report", "Results")
            .schema(json!({"type": "object", "required": ["score"]}))
        + A::json_output("risk", "Risk scores")
        + A::input("photo", "image/png", "A photo")
        + A::text_output("summary", "A summary")
        + A::json_input("order", "The order");
    let names =
        |list: &[reel_compose::Artifact]| list.iter().map(|a| a.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(artifacts.all_inputs()),
        ["source_document", "photo", "order"]
    );
    assert_eq!(
        names(artifacts.all_outputs()),
        ["report", "risk", "summary"]
    );
    assert_eq!(
        artifacts.all_outputs()[0].schema,
        Some(json!({"type": "object", "required": ["score"]}))
    );
    assert_eq!(artifacts.all_outputs()[0].mime, "application/json");
    assert_eq!(artifacts.all_inputs()[0].mime, "text/plain");
}

#[tokio::test]
async fn t_composes_function_and_builtin_tools_and_policies() {
    let tools = T::simple("get_weather", "Get weather", |args| async move {
        Ok(json!({"temp": 22, "city": args["city"]}))
    }) | T::google_search()
        | T::code_execution()
        | T::url_context();
    assert_eq!(tools.len(), 4);
    assert_eq!(tools.names(), ["get_weather"]);
    assert_eq!(
        tools.builtins(),
        [
            BuiltinTool::GoogleSearch,
            BuiltinTool::CodeExecution,
            BuiltinTool::UrlContext
        ]
    );
    assert_eq!(
        tools.declarations(),
        [
            json!({"googleSearch": {}}),
            json!({"codeExecution": {}}),
            json!({"urlContext": {}})
        ]
    );

    let limited = T::timeout(
        T::cached(T::simple("get_rate", "A rate", |_| async {
            Ok(json!({"rate": 1.17}))
        })),
        Duration::from_secs(2),
    ) | T::confirm(
        T::simple("send_email", "Send", |_| async {
            Ok(json!({"sent": true}))
        }),
        "Send this email?",
    );
    assert_eq!(limited.names(), ["get_rate", "send_email"]);
    let dispatcher = limited.dispatcher().unwrap();
    assert_eq!(dispatcher.timeout("get_rate"), Duration::from_secs(2));
    assert_eq!(
        dispatcher.timeout("send_email"),
        dispatcher.default_timeout()
    );
    let confirm = limited.functions()[1].clone();
    assert_eq!(
        format!("{:?}", confirm.confirmation()),
        "Some(\"Send this email?\")"
    );
    // A second tool of the same name is the dispatcher's typed error.
    let twice = T::simple("x", "x", |_| async { Ok(json!(1)) })
        | T::simple("x", "x", |_| async { Ok(json!(2)) });
    assert!(twice.dispatcher().is_err());

    let middleware = M::log() | M::retry(3) | M::fallback_model("gemini-2.5-flash");
    assert_eq!(
        middleware.labels(),
        [
            "M::log()",
            "M::retry(3, 0ns)",
            "M::fallback_model(gemini-2.5-flash)"
        ]
    );
}
