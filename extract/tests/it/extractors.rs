//! Extractors through a whole session: run concurrently at turn complete, committed in
//! registration order (exact journal), their triggers, their failures, and the interceptor
//! every model the session hands out goes through.

use crate::turns_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::callbacks::{AsyncCallback, CallbackMode, ControlCallbacks};
use reel_actors::llm::{BaseLlm, LlmError, LlmRequest};
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ScriptedServer;
use reel_actors::{LiveEvent, LiveSessionBuilder, SessionStartError};
use reel_extract::{
    ExtractionError, ExtractionTrigger, FnExtractor, LlmExtractor, RegexExtractor, TurnExtractor,
};
use reel_protocol::{ApiEndpoint, FunctionCall, SessionConfig};
use reel_tools::{SimpleTool, ToolContext, ToolDispatcher};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use turns_support::{LoggingInterceptor, Rig, ScriptedLlm};

type Log<T> = Arc<Mutex<Vec<T>>>;

fn entries<T: Clone>(log: &Log<T>) -> Vec<T> {
    log.lock().unwrap().clone()
}

/// Callbacks logging every extraction and extraction error.
fn logging_callbacks(log: &Log<(String, String)>) -> ControlCallbacks {
    let (ok, failed) = (Arc::clone(log), Arc::clone(log));
    ControlCallbacks {
        on_extracted: Some(AsyncCallback::new(
            CallbackMode::Blocking,
            move |(name, value): (String, Value)| {
                let ok = Arc::clone(&ok);
                async move { ok.lock().unwrap().push((name, value.to_string())) }
            },
        )),
        on_extraction_error: Some(AsyncCallback::new(
            CallbackMode::Blocking,
            move |(name, error): (String, String)| {
                let failed = Arc::clone(&failed);
                async move { failed.lock().unwrap().push((name, error)) }
            },
        )),
        ..ControlCallbacks::default()
    }
}

#[derive(Debug, Deserialize, PartialEq)]
struct Mood {
    mood: String,
    name: Option<String>,
}

#[tokio::test(start_paused = true)]
async fn extractors_run_together_and_commit_in_registration_order() {
    let mut server = ScriptedServer::bind().await;
    // Registered first, answers after 2 s; the regex one answers at once.
    let mood_model = ScriptedLlm::slow(
        [Ok(r#"{"mood": "calm", "name": null}"#.to_owned())],
        Duration::from_secs(2),
    );
    let intent_model = ScriptedLlm::slow(
        [Ok("```json\n{\"intent\": \"pay\"}\n```".to_owned())],
        Duration::from_secs(2),
    );
    let schema = json!({"type": "object", "properties": {
        "mood": {"type": "string"}, "name": {"type": "string"}}});
    let mood = LlmExtractor::new("Mood", mood_model.clone(), "Extract the caller's mood.", 3)
        .with_schema(schema.clone());
    let amounts = RegexExtractor::new("fields", 10, |text, existing| {
        let mut found = Vec::new();
        if !existing.contains_key("dollar_amount")
            && let Some(word) = text.split_whitespace().find(|w| w.starts_with('$'))
        {
            found.push(("dollar_amount".to_owned(), json!(word)));
        }
        found
    });
    let intent = LlmExtractor::new("Intent", intent_model.clone(), "Extract the intent.", 1);
    let log: Log<(String, String)> = Arc::default();
    let callbacks = logging_callbacks(&log);
    let mut rig = Rig::start(&mut server, |b| {
        b.extractor(Arc::new(mood))
            .extractor(Arc::new(amounts))
            .extractor(Arc::new(intent))
            .control_callbacks(callbacks)
    })
    .await;

    rig.user("I owe $120 and I am calm.").await;
    rig.model("Thank you.").await;
    let at = rig.turn().await;
    // Both models waited 2 s, at the same time; the lane waited for them.
    assert_eq!(rig.now() - at, 2000);

    // Registration order, whatever finished first; stamped with the turn's event time.
    assert_eq!(
        rig.writes(),
        [
            (
                "Mood".into(),
                Value::Null,
                json!({"mood": "calm", "name": null}),
                at
            ),
            ("derived:mood".into(), Value::Null, json!("calm"), at),
            (
                "fields".into(),
                Value::Null,
                json!({"dollar_amount": "$120"}),
                at
            ),
            (
                "derived:dollar_amount".into(),
                Value::Null,
                json!("$120"),
                at
            ),
            ("Intent".into(), Value::Null, json!({"intent": "pay"}), at),
            ("derived:intent".into(), Value::Null, json!("pay"), at),
        ]
    );
    assert_eq!(
        rig.control(&["extraction", "extraction_error", "turn_complete"]),
        [
            LiveEvent::Extraction {
                name: "Mood".into(),
                value: json!({"mood": "calm", "name": null})
            },
            LiveEvent::Extraction {
                name: "fields".into(),
                value: json!({"dollar_amount": "$120"})
            },
            LiveEvent::Extraction {
                name: "Intent".into(),
                value: json!({"intent": "pay"})
            },
            LiveEvent::Session(reel_protocol::SessionEvent::TurnComplete {
                reason: None,
                waiting_for_input: false
            }),
        ]
    );
    assert_eq!(
        entries(&log),
        [
            ("Mood".into(), r#"{"mood":"calm","name":null}"#.into()),
            ("fields".into(), r#"{"dollar_amount":"$120"}"#.into()),
            ("Intent".into(), r#"{"intent":"pay"}"#.into()),
        ]
    );
    // Typed reads, and the derived fallback for the flattened fields.
    assert_eq!(
        rig.handle.extracted::<Mood>("Mood"),
        Some(Mood {
            mood: "calm".into(),
            name: None
        })
    );
    assert_eq!(
        rig.handle.state().get::<String>("mood").as_deref(),
        Some("calm")
    );

    // The request the model got: the prompt, the window as text, JSON with the schema.
    let requests: Vec<Value> = mood_model
        .requests()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(
        requests,
        [json!({
            "model": "scripted-flash",
            "systemInstruction": "Extract the caller's mood.",
            "contents": [{"role": "user", "parts": [{"text":
                "Conversation (oldest turn first):\n\n[Turn 1]\nUser: I owe $120 and I am calm.\n\
                 Model: Thank you.\n\nAnswer with one JSON object."}]}],
            "generationConfig": {
                "temperature": 0.0,
                "responseMimeType": "application/json",
                "responseSchema": schema
            }
        })]
    );
    assert_eq!(intent_model.requests().len(), 1);
}

/// An extractor that logs where it ran, the turn, the turns of its window and, for the
/// last turn of the window, its tool calls and whether they were answered.
fn probe(
    name: &'static str,
    window: usize,
    trigger: ExtractionTrigger,
    log: &Log<String>,
) -> Arc<dyn TurnExtractor> {
    let log = Arc::clone(log);
    Arc::new(
        FnExtractor::new(name, window, move |turns, ctx| {
            let numbers: Vec<u32> = turns.iter().map(|t| t.turn_number).collect();
            let tools: Vec<String> = turns
                .last()
                .map(|t| {
                    t.tool_calls
                        .iter()
                        .map(|c| {
                            format!(
                                "{}={}",
                                c.name,
                                c.response.as_ref().map_or("?".into(), Value::to_string)
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            log.lock().unwrap().push(format!(
                "{name} {:?} turn {} window {numbers:?} phase {:?} tools {tools:?}",
                ctx.point, ctx.turn_number, ctx.phase
            ));
            Ok(json!({format!("{name}_turn"): ctx.turn_number}))
        })
        .with_trigger(trigger),
    )
}

#[tokio::test(start_paused = true)]
async fn each_trigger_runs_where_it_says() {
    let mut server = ScriptedServer::bind().await;
    let log: Log<String> = Arc::default();
    let mut tools = ToolDispatcher::new();
    tools
        .register(SimpleTool::new(
            "ping",
            "Pings.",
            None,
            |_a, _c| async move { Ok(json!({"pong": true})) },
        ))
        .unwrap();
    let phases = PhaseMachine::builder("greeting")
        .phase(Phase::new("greeting").transition_with(
            "main",
            |s| s.get::<u32>("session:turn_count") >= Some(2),
            "two turns done",
        ))
        .phase(Phase::new("main"))
        .build()
        .unwrap();
    let extractors = [
        probe("every", 2, ExtractionTrigger::EveryTurn, &log),
        probe("other", 5, ExtractionTrigger::Interval(2), &log),
        probe("tool", 2, ExtractionTrigger::AfterToolCall, &log),
        probe("phase", 1, ExtractionTrigger::OnPhaseChange, &log),
    ];
    let mut rig = Rig::start(&mut server, |b| {
        extractors
            .into_iter()
            .fold(b.dispatcher(tools).phases(phases), |b, e| b.extractor(e))
    })
    .await;

    rig.exchange("one", "1").await;
    rig.user("two").await;
    rig.conn
        .send_json(
            &json!({"toolCall": {"functionCalls": [{"id": "p1", "name": "ping", "args": {}}]}}),
        )
        .await;
    rig.conn.recv_json().await;
    rig.model("2").await;
    rig.turn().await;
    rig.exchange("three", "3").await;
    rig.exchange("four", "4").await;

    let greeting = "phase Some(\"greeting\")";
    let main = "phase Some(\"main\")";
    assert_eq!(
        entries(&log),
        [
            format!("every TurnComplete turn 1 window [1] {greeting} tools []"),
            format!(
                "tool AfterToolCall turn 2 window [1, 2] {greeting} tools [\"ping={{\\\"pong\\\":true}}\"]"
            ),
            format!(
                "every TurnComplete turn 2 window [1, 2] {greeting} tools [\"ping={{\\\"pong\\\":true}}\"]"
            ),
            format!(
                "other TurnComplete turn 2 window [1, 2] {greeting} tools [\"ping={{\\\"pong\\\":true}}\"]"
            ),
            format!("every TurnComplete turn 3 window [2, 3] {greeting} tools []"),
            format!("phase PhaseChange turn 3 window [3] {main} tools []"),
            format!("every TurnComplete turn 4 window [3, 4] {main} tools []"),
            format!("other TurnComplete turn 4 window [1, 2, 3, 4] {main} tools []"),
        ]
    );
    // Interval(2) wrote on turns 2 and 4 only.
    let other: Vec<Value> = rig
        .writes()
        .into_iter()
        .filter(|(key, ..)| key == "other")
        .map(|(_, _, new, _)| new)
        .collect();
    assert_eq!(other, [json!({"other_turn": 2}), json!({"other_turn": 4})]);
}

#[tokio::test(start_paused = true)]
async fn a_failed_extraction_writes_nothing_and_is_reported() {
    let mut server = ScriptedServer::bind().await;
    let unauthorized = LlmError::Http {
        status: 401,
        url: "https://models.example/v1beta/models/scripted-flash:generate".into(),
        message: "API key not valid".into(),
    };
    let slow = ScriptedLlm::slow([Ok("{}".to_owned())], Duration::from_secs(60));
    let extractors: Vec<Arc<dyn TurnExtractor>> = vec![
        Arc::new(LlmExtractor::new(
            "Broken",
            ScriptedLlm::new([Err(unauthorized)]),
            "p",
            1,
        )),
        Arc::new(LlmExtractor::new(
            "Garbled",
            ScriptedLlm::new([Ok("not json at all".into())]),
            "p",
            1,
        )),
        Arc::new(FnExtractor::new("Refuses", 1, |_, _| {
            Err(ExtractionError::failed("Refuses", "no data in that turn"))
        })),
        Arc::new(FnExtractor::new("Panics", 1, |_, _| {
            panic!("extractor failed on purpose")
        })),
        Arc::new(LlmExtractor::new("Slow", slow, "p", 1)),
        Arc::new(LlmExtractor::new("Skipped", ScriptedLlm::new([]), "p", 1).with_min_words(10)),
        Arc::new(FnExtractor::new("Fine", 1, |_, _| Ok(json!({"ok": true})))),
    ];
    let log: Log<(String, String)> = Arc::default();
    let callbacks = logging_callbacks(&log);
    let mut rig = Rig::start(&mut server, |b| {
        extractors
            .into_iter()
            .fold(b.control_callbacks(callbacks), |b, e| b.extractor(e))
            .extraction_timeout(Duration::from_secs(5))
    })
    .await;
    let at = rig.exchange("Too short.", "Sorry?").await;
    assert_eq!(
        rig.now() - at,
        5000,
        "the slow one was waited for up to the timeout"
    );

    let errors = [
        (
            "Broken",
            "extractor `Broken`: the model call failed: the model API answered 401 for \
             https://models.example/v1beta/models/scripted-flash:generate: API key not valid",
        ),
        (
            "Garbled",
            "extractor `Garbled`: the model's answer is not JSON (expected ident at line 1 \
             column 2); it begins \"not json at all\"",
        ),
        (
            "Refuses",
            "extractor `Refuses` failed: no data in that turn",
        ),
        (
            "Panics",
            "extractor `Panics` panicked: extractor failed on purpose",
        ),
        ("Slow", "extractor `Slow` did not finish within 5s"),
    ];
    let mut expected: Vec<LiveEvent> = errors
        .iter()
        .map(|(name, error)| LiveEvent::ExtractionError {
            name: (*name).into(),
            error: (*error).into(),
        })
        .collect();
    expected.push(LiveEvent::Extraction {
        name: "Fine".into(),
        value: json!({"ok": true}),
    });
    assert_eq!(rig.control(&["extraction", "extraction_error"]), expected);
    let mut logged: Vec<(String, String)> = errors
        .iter()
        .map(|(name, error)| ((*name).into(), (*error).into()))
        .collect();
    logged.push(("Fine".into(), r#"{"ok":true}"#.into()));
    assert_eq!(entries(&log), logged);
    // Only the extractor that succeeded wrote anything.
    assert_eq!(
        rig.writes(),
        [
            ("Fine".into(), Value::Null, json!({"ok": true}), at),
            ("derived:ok".into(), Value::Null, json!(true), at),
        ]
    );
    assert_eq!(
        rig.handle.telemetry().restarts,
        0,
        "a panicking extractor is caught"
    );
}

#[tokio::test(start_paused = true)]
async fn every_model_the_session_hands_out_goes_through_its_interceptor() {
    let mut server = ScriptedServer::bind().await;
    let interceptor = Arc::new(LoggingInterceptor::default());
    let extractor_model = ScriptedLlm::model(
        "extractor-model",
        [
            Ok(r#"{"topic": "weather"}"#.into()),
            Ok(r#"{"topic": "rain"}"#.into()),
        ],
        Duration::ZERO,
    );
    let tool_model: Arc<dyn BaseLlm> =
        ScriptedLlm::model("tool-model", [Ok("a summary".into())], Duration::ZERO);
    let app_model: Arc<dyn BaseLlm> =
        ScriptedLlm::model("app-model", [Ok("an answer".into())], Duration::ZERO);
    let mut tools = ToolDispatcher::new();
    let model = Arc::clone(&tool_model);
    tools
        .register(SimpleTool::new(
            "summarize",
            "Summarizes.",
            None,
            move |args, ctx| {
                let model = ctx.llm(Arc::clone(&model));
                async move {
                    let request = LlmRequest::new(model.model_id()).user(args["text"].to_string());
                    let answer = model.generate(request).await.map_err(|e| ctx.fail(e))?;
                    Ok(json!({"summary": answer.text}))
                }
            },
        ))
        .unwrap();
    let extractor = LlmExtractor::new("Topic", extractor_model.clone(), "Extract the topic.", 1);
    let seam = Arc::clone(&interceptor);
    let mut rig = Rig::start(&mut server, |b| {
        b.dispatcher(tools)
            .extractor(Arc::new(extractor))
            .llm_interceptor(seam)
    })
    .await;
    assert_eq!(
        *interceptor.wrapped.lock().unwrap(),
        ["extractor-model"],
        "the extractor's model is wrapped once, at start"
    );

    rig.user("Summarize the forecast.").await;
    rig.conn
        .send_json(&json!({"toolCall": {"functionCalls": [
            {"id": "s1", "name": "summarize", "args": {"text": "sun then rain"}}
        ]}}))
        .await;
    assert_eq!(
        rig.conn.recv_json().await["toolResponse"]["functionResponses"][0]["response"],
        json!({"summary": "a summary"})
    );
    rig.model("Sun, then rain.").await;
    rig.turn().await;
    rig.exchange("And tomorrow?", "Rain.").await;
    let answer = rig
        .handle
        .llm(Arc::clone(&app_model))
        .generate(LlmRequest::new("app-model").user("What did we say?"))
        .await
        .unwrap();
    assert_eq!(answer.text, "an answer");

    assert_eq!(
        *interceptor.wrapped.lock().unwrap(),
        ["extractor-model", "tool-model", "app-model"]
    );
    let window = |turn: &str| {
        format!("Conversation (oldest turn first):\n\n{turn}\n\nAnswer with one JSON object.")
    };
    assert_eq!(
        interceptor.calls(),
        [
            ("tool-model".into(), "\"sun then rain\"".into()),
            (
                "extractor-model".into(),
                window(
                    "[Turn 1]\nUser: Summarize the forecast.\n\
                     Tool summarize {\"text\":\"sun then rain\"} -> {\"summary\":\"a summary\"}\n\
                     Model: Sun, then rain."
                )
            ),
            (
                "extractor-model".into(),
                window("[Turn 2]\nUser: And tomorrow?\nModel: Rain.")
            ),
            ("app-model".into(), "What did we say?".into()),
        ]
    );
    assert_eq!(
        rig.handle.extracted::<Value>("Topic"),
        Some(json!({"topic": "rain"}))
    );
}

#[tokio::test(start_paused = true)]
async fn without_an_interceptor_models_pass_through_unchanged() {
    let mut server = ScriptedServer::bind().await;
    let rig = Rig::start(&mut server, |b| b).await;
    let model: Arc<dyn BaseLlm> = ScriptedLlm::new([]);
    assert!(Arc::ptr_eq(&rig.handle.llm(Arc::clone(&model)), &model));
    let call: FunctionCall = serde_json::from_value(json!({"id": "c", "name": "t"})).unwrap();
    let ctx = ToolContext::for_call(
        &call,
        rig.handle.state().with_delta(),
        CancellationToken::new(),
    );
    assert!(Arc::ptr_eq(&ctx.llm(Arc::clone(&model)), &model));
}

#[tokio::test]
async fn extractor_names_must_be_unique_and_not_empty() {
    let builder = |names: &[&str]| {
        names.iter().fold(
            LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline()),
            |b, name| b.extractor(Arc::new(FnExtractor::new(*name, 1, |_, _| Ok(Value::Null)))),
        )
    };
    let refused = builder(&["a", "b", "a"]).spawn().await.unwrap_err();
    assert!(matches!(&refused, SessionStartError::DuplicateExtractor { name } if name == "a"));
    assert_eq!(
        refused.to_string(),
        "two extractors are named `a`; each needs its own name (it is its state key)"
    );
    let refused = builder(&["a", ""]).spawn().await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "extractor number 2 (from 1) has an empty name; name it (its name is its state key)"
    );
}

#[tokio::test(start_paused = true)]
async fn a_regex_extractor_keeps_what_it_found_and_adds_to_it() {
    let mut server = ScriptedServer::bind().await;
    let fields = RegexExtractor::new("fields", 1, |text, existing| {
        let mut found = std::collections::HashMap::new();
        for word in text.split_whitespace() {
            if word.starts_with('$') && !existing.contains_key("amount") {
                found.insert("amount".to_owned(), json!(word));
            }
            if word.starts_with('+') {
                found.insert("phone".to_owned(), json!(word));
            }
        }
        found
    });
    let mut rig = Rig::start(&mut server, |b| b.extractor(Arc::new(fields))).await;
    let first = rig.exchange("I owe $120", "Noted.").await;
    let second = rig.exchange("Not $300! Call +4412345", "Noted.").await;
    assert_eq!(
        rig.writes(),
        [
            (
                "fields".into(),
                Value::Null,
                json!({"amount": "$120"}),
                first
            ),
            ("derived:amount".into(), Value::Null, json!("$120"), first),
            (
                "fields".into(),
                json!({"amount": "$120"}),
                json!({"amount": "$120", "phone": "+4412345"}),
                second
            ),
            (
                "derived:phone".into(),
                Value::Null,
                json!("+4412345"),
                second
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn calls_the_application_answers_itself_also_trigger_after_tool_call_extractors() {
    let mut server = ScriptedServer::bind().await;
    let log: Log<String> = Arc::default();
    let callbacks = ControlCallbacks {
        on_tool_call: Some(Arc::new(|calls: Vec<FunctionCall>, _state| {
            let responses = calls
                .iter()
                .map(|call| {
                    reel_protocol::FunctionResponse::new(
                        call.id.clone().unwrap_or_default(),
                        call.name.clone().unwrap_or_default(),
                        json!({"answered": "by the app"}),
                    )
                })
                .collect();
            Box::pin(async move { Some(responses) })
        })),
        ..ControlCallbacks::default()
    };
    let tool = probe("tool", 1, ExtractionTrigger::AfterToolCall, &log);
    let mut rig = Rig::start(&mut server, |b| {
        b.control_callbacks(callbacks).extractor(tool)
    })
    .await;
    rig.conn
        .send_json(
            &json!({"toolCall": {"functionCalls": [{"id": "m1", "name": "lookup", "args": {}}]}}),
        )
        .await;
    rig.conn.recv_json().await;
    rig.settle().await;
    assert_eq!(
        entries(&log),
        [
            "tool AfterToolCall turn 1 window [1] phase None tools [\"lookup={\\\"answered\\\":\\\"by the app\\\"}\"]"
        ]
    );
}
