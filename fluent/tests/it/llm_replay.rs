//! Out-of-band model calls replay offline, end to end, through `Live::builder()`.
//!
//! A support-line app extracts the caller's mood with an LLM extractor backed by a real
//! `GeminiLlm` talking HTTP to the loopback `GeminiStandin`, and runs a two-turn session
//! against the scripted Live server, recording its wire log, its journal and its model
//! calls (`llm_cassette(Record)`). Then the stand-in is shut down and the very same app
//! replays the wire log: the model calls are answered from the cassette beside it (no
//! network: a live call would fail), and the journal — the extractor's writes and the
//! watcher they set off included — comes out equal entry by entry, with the same extracted
//! values, no divergence and no unused call. With the extractor's prompt changed, the replay
//! reports each call the cassette misses, with where its request differs, at once.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::llm::gemini::GeminiLlm;
use reel_actors::llm::{BaseLlm, CassetteMode, LlmError, LlmRequest, MatchRules, RequestMismatch};
use reel_actors::testing::ScriptedServer;
use reel_actors::testing::gemini_standin::{Answer, GeminiStandin, STANDIN_API_KEY};
use reel_actors::{Lane, LiveEvent};
use reel_fluent::{Live, LiveBuilder, LlmDrift, ReplayError, extractor_name};
use reel_recorder::cassette::{CassetteFile, DEFAULT_MAX_CASSETTE_BYTES};
use reel_recorder::journal::{StateMutation, read_journal};
use serde::Deserialize;
use serde_json::{Value, json};
use support::{T0, accepted, drain, lane, until_turn_complete};

const MODEL: &str = "gemini-2.5-flash";
const PROMPT: &str = "Extract the caller's mood and how urgent their problem is.";
const OTHER_PROMPT: &str = "Extract the caller's mood.";

/// What the extractor draws from the conversation.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
struct CallerMood {
    /// calm, worried or angry.
    mood: String,
    /// How urgent the caller's problem is, from 1 to 5.
    urgency: u8,
}

/// The two turns: what the caller said, what the model answered, what the extractor's
/// model says about it.
const TURNS: [(&str, &str, &str); 2] = [
    (
        "My internet has been down since this morning.",
        "I'm sorry. Let me check your line.",
        r#"{"mood": "worried", "urgency": 3}"#,
    ),
    (
        "I work from home and I have a call in ten minutes!",
        "I'll escalate this right away.",
        r#"{"mood": "angry", "urgency": 5}"#,
    ),
];

type Log = Arc<Mutex<Vec<String>>>;

/// A fresh folder for one test's recording.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Folder {
        let dir = std::env::temp_dir().join(format!(
            "reel-fluent-llm-replay-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }

    fn wire(&self) -> PathBuf {
        self.0.join("call.wire.jsonl")
    }

    fn journal(&self) -> PathBuf {
        self.0.join("call.journal.jsonl")
    }

    fn cassette(&self) -> PathBuf {
        self.0.join("call.cassette.json")
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The application, as one function: live and in replay alike.
fn support_line(llm: Arc<dyn BaseLlm>, prompt: &str, folder: &Folder, log: &Log) -> LiveBuilder {
    let (extracted, failed) = (Arc::clone(log), Arc::clone(log));
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .instruction("You are a broadband support line. Be brief.")
        .extract_turns::<CallerMood>(llm, prompt)
        .watch("derived:urgency")
        .crossed_above(4.0)
        .blocking()
        .then(|_old, _new, state| async move {
            let _ = state.set("app:escalated", true).await;
        })
        .on_extracted(move |name, value| {
            let log = Arc::clone(&extracted);
            async move { log.lock().unwrap().push(format!("{name}: {value}")) }
        })
        .on_extraction_error(move |name, error| {
            let log = Arc::clone(&failed);
            async move { log.lock().unwrap().push(format!("{name} failed: {error}")) }
        })
        .record_wire(folder.wire())
        .journal(folder.journal())
        .llm_cassette(CassetteMode::Record)
        .customize(|session| session.clock(Arc::new(TokioClock::anchored_at(T0))))
}

/// A stand-in answer: `text` as the model's one streamed event.
fn streamed(text: &str) -> Answer {
    Answer::sse([json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 60, "candidatesTokenCount": 9, "totalTokenCount": 69}
    })])
}

fn gemini(base_url: &str) -> Arc<dyn BaseLlm> {
    Arc::new(
        GeminiLlm::builder(MODEL)
            .api_key(STANDIN_API_KEY)
            .base_url(base_url)
            .build()
            .unwrap(),
    )
}

/// What the live session left besides its files.
struct Recorded {
    control: Vec<LiveEvent>,
    extracted: Option<CallerMood>,
    log: Vec<String>,
    /// The stand-in's address, now closed.
    base_url: String,
}

/// The user text the extractor's request carries after `turns` turns.
fn conversation(turns: usize) -> String {
    let shown: Vec<String> = TURNS[..turns]
        .iter()
        .enumerate()
        .map(|(i, (user, model, _))| format!("[Turn {}]\nUser: {user}\nModel: {model}", i + 1))
        .collect();
    format!(
        "Conversation (oldest turn first):\n\n{}\n\nAnswer with one JSON object.",
        shown.join("\n\n")
    )
}

/// The schema the extractor asks for: `CallerMood`'s, in the form the Gemini API takes
/// (doc comments as descriptions).
fn schema() -> Value {
    json!({
        "type": "object",
        "description": "What the extractor draws from the conversation.",
        "properties": {
            "mood": {"type": "string", "description": "calm, worried or angry."},
            "urgency": {"type": "integer", "description": "How urgent the caller's problem is, from 1 to 5.",
                        "minimum": 0, "maximum": 255}
        },
        "required": ["mood", "urgency"]
    })
}

/// Records the session live: the extractor's model is a real `GeminiLlm` on the stand-in,
/// which is shut down before this returns.
async fn record(folder: &Folder) -> Recorded {
    let standin = GeminiStandin::bind().await;
    for (_, _, answer) in TURNS {
        standin.push(streamed(answer));
    }
    let base_url = standin.base_url();
    let log = Log::default();
    let mut server = ScriptedServer::bind().await;
    let builder = support_line(gemini(&base_url), PROMPT, folder, &log);
    let mut events = builder.subscribe();
    let mut sync = builder.subscribe();
    let (handle, mut conn, setup) = accepted(builder, &mut server, Duration::from_millis(40)).await;
    // The extractor turned transcription on: the transcript is what it reads.
    assert_eq!(
        setup.json().unwrap(),
        json!({"setup": {
            "model": "models/gemini-live-2.5-flash-preview",
            "generationConfig": {"responseModalities": ["TEXT"]},
            "systemInstruction": {"parts": [{"text": "You are a broadband support line. Be brief."}]},
            "inputAudioTranscription": {},
            "outputAudioTranscription": {}
        }})
    );
    // The cassette is started afresh when the session starts.
    assert_eq!(
        CassetteFile::read(folder.cassette(), DEFAULT_MAX_CASSETTE_BYTES).unwrap(),
        CassetteFile::new()
    );

    for (user, model, _) in TURNS {
        tokio::time::advance(Duration::from_millis(700)).await;
        conn.send_json(
            &json!({"serverContent": {"inputTranscription": {"text": user, "finished": true}}}),
        )
        .await;
        tokio::time::advance(Duration::from_millis(300)).await;
        conn.send_json(&json!({"serverContent": {"outputTranscription": {"text": model}}}))
            .await;
        conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
            .await;
        until_turn_complete(&mut sync).await;
    }
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed, "{end:?}");

    // The extractor asked the stand-in twice, streaming, with its prompt, the window and
    // CallerMood's schema.
    let requests = standin.requests();
    assert_eq!(requests.len(), 2);
    for (turns, request) in (1..=2).zip(&requests) {
        assert_eq!(
            request.path,
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
        );
        assert_eq!(request.query.as_deref(), Some("alt=sse"));
        assert_eq!(
            request.body,
            json!({
                "contents": [{"role": "user", "parts": [{"text": conversation(turns)}]}],
                "systemInstruction": {"parts": [{"text": PROMPT}]},
                "generationConfig": {"temperature": 0.0, "responseMimeType": "application/json",
                                     "responseSchema": schema()}
            })
        );
    }
    drop(standin);

    let log = log.lock().unwrap().clone();
    Recorded {
        control: lane(&drain(&mut events).await, Lane::Control),
        extracted: handle.extracted(&extractor_name::<CallerMood>()),
        log,
        base_url,
    }
}

/// The extractor's and its watcher's writes: the journal without the `session:` keys.
fn app_writes(journal: &[StateMutation]) -> Vec<(String, Value)> {
    journal
        .iter()
        .filter(|m| !m.key.starts_with("session:"))
        .map(|m| (m.key.clone(), m.new.clone()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn an_llm_extractor_session_replays_offline_from_its_cassette_with_an_equal_journal() {
    let folder = Folder::new("equal");
    let live = record(&folder).await;
    assert_eq!(
        folder.names(),
        [
            "call.cassette.json",
            "call.journal.jsonl",
            "call.wire.jsonl"
        ]
    );
    let journal = read_journal(folder.journal()).unwrap();
    assert_eq!(
        app_writes(&journal),
        [
            (
                "CallerMood".to_owned(),
                json!({"mood": "worried", "urgency": 3})
            ),
            ("derived:mood".to_owned(), json!("worried")),
            ("derived:urgency".to_owned(), json!(3)),
            (
                "CallerMood".to_owned(),
                json!({"mood": "angry", "urgency": 5})
            ),
            ("derived:mood".to_owned(), json!("angry")),
            ("derived:urgency".to_owned(), json!(5)),
            ("app:escalated".to_owned(), json!(true)),
        ]
    );
    assert_eq!(
        live.extracted,
        Some(CallerMood {
            mood: "angry".into(),
            urgency: 5
        })
    );
    assert_eq!(
        live.log,
        [
            r#"CallerMood: {"mood":"worried","urgency":3}"#,
            r#"CallerMood: {"mood":"angry","urgency":5}"#
        ]
    );
    // Both calls are on the cassette: each request exactly as the extractor made it, each
    // answer as the stand-in streamed it.
    let cassette = CassetteFile::read(folder.cassette(), DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    let calls: Vec<(Value, String)> = cassette
        .interactions
        .iter()
        .map(|i| {
            let answer = i.response.iter().map(|c| c.text.as_str()).collect();
            (Value::Object(i.request.clone()), answer)
        })
        .collect();
    let recorded_request = |turns: usize| {
        json!({
            "model": MODEL,
            "systemInstruction": PROMPT,
            "contents": [{"role": "user", "parts": [{"text": conversation(turns)}]}],
            "generationConfig": {"temperature": 0.0, "responseMimeType": "application/json",
                                 "responseSchema": schema()}
        })
    };
    assert_eq!(
        calls,
        [
            (recorded_request(1), TURNS[0].2.to_owned()),
            (recorded_request(2), TURNS[1].2.to_owned())
        ]
    );

    // The stand-in is gone: a live call fails.
    let model = gemini(&live.base_url);
    let refused = model.generate(LlmRequest::new(MODEL).user("hi")).await;
    assert!(
        matches!(refused, Err(LlmError::Transport { .. })),
        "{refused:?}"
    );

    // The same app, against the recording, with that model: answered from the cassette.
    let log = Log::default();
    let replay = support_line(model, PROMPT, &folder, &log)
        .replay(folder.wire())
        .await
        .unwrap();
    assert_eq!(
        replay.cassette().map(|c| (c.path().to_owned(), c.mode())),
        Some((folder.cassette(), CassetteMode::Replay))
    );
    let outcome = tokio::time::timeout(Duration::from_secs(60), replay.finish())
        .await
        .expect("the replay ends");
    assert_eq!(outcome.divergences, vec![], "no divergence");
    assert_eq!(
        outcome.llm_drift,
        vec![],
        "every recorded call made, none missed"
    );
    assert!(outcome.is_clean());
    assert_eq!(outcome.journal, journal, "journal, entry by entry");
    assert_eq!(outcome.lane(Lane::Control), live.control, "control lane");
    assert_eq!(
        outcome.extracted::<CallerMood>(&extractor_name::<CallerMood>()),
        live.extracted
    );
    assert_eq!(*log.lock().unwrap(), live.log, "on_extracted saw the same");
    // Replaying read the recording and wrote nothing next to it.
    assert_eq!(
        CassetteFile::read(folder.cassette(), DEFAULT_MAX_CASSETTE_BYTES).unwrap(),
        cassette
    );
    assert_eq!(read_journal(folder.journal()).unwrap(), journal);
}

#[tokio::test(start_paused = true)]
async fn a_changed_prompt_is_reported_as_cassette_misses_naming_the_difference() {
    let folder = Folder::new("changed-prompt");
    let live = record(&folder).await;
    let recorded = read_journal(folder.journal()).unwrap();

    let log = Log::default();
    let replay = support_line(gemini(&live.base_url), OTHER_PROMPT, &folder, &log)
        .replay(folder.wire())
        .await
        .unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(60), replay.finish())
        .await
        .expect("a miss fails the call at once: the replay ends");

    let cassette = folder.cassette();
    let miss = |turns: usize| LlmDrift::Miss {
        cassette: cassette.clone(),
        model: MODEL.into(),
        prompt: Some(conversation(turns).chars().take(80).collect::<String>() + "…"),
        nearest: Some((
            0,
            RequestMismatch {
                path: "systemInstruction".into(),
                recorded: Some(json!(PROMPT)),
                actual: Some(json!(OTHER_PROMPT)),
            },
        )),
    };
    let unused = |interaction: usize, turns: usize| LlmDrift::Unused {
        cassette: cassette.clone(),
        interaction,
        model: MODEL.into(),
        prompt: Some(conversation(turns).chars().take(80).collect::<String>() + "…"),
    };
    assert_eq!(
        outcome.llm_drift,
        [miss(1), miss(2), unused(0, 1), unused(1, 2)]
    );
    assert!(!outcome.is_clean());
    let first = outcome.llm_drift[0].to_string();
    assert_eq!(
        first,
        format!(
            "the replay called gemini-2.5-flash (\"Conversation (oldest turn first):\\n\\n[Turn 1]\\n\
             User: My internet has been down sinc…\"), and `{}` has no \
             recorded answer: the nearest recorded request (interaction 0) differs at \
             `systemInstruction`: recorded \"{PROMPT}\", got \"{OTHER_PROMPT}\"",
            cassette.display()
        )
    );

    // The extractor failed at each turn with the cassette's word for it; nothing was
    // extracted, so nothing was escalated.
    let failures = log.lock().unwrap().clone();
    assert_eq!(failures.len(), 2, "{failures:?}");
    let expected_failure = format!(
        "CallerMood failed: extractor `CallerMood`: the model call failed: the cassette `{}` \
         has no recorded answer for a request to gemini-2.5-flash",
        cassette.display()
    );
    for failure in &failures {
        assert!(failure.starts_with(&expected_failure), "{failure}");
        assert!(
            failure.ends_with(&format!(
                "the nearest recorded request (interaction 0) differs at `systemInstruction`: \
                 recorded \"{PROMPT}\", got \"{OTHER_PROMPT}\""
            )),
            "{failure}"
        );
    }
    assert_eq!(app_writes(&outcome.journal), []);
    assert_ne!(outcome.journal, recorded);
    assert_eq!(outcome.extracted::<CallerMood>("CallerMood"), None);
}

#[tokio::test(start_paused = true)]
async fn a_chain_that_keeps_a_cassette_beside_its_wire_log_needs_one_to_replay() {
    let folder = Folder::new("no-cassette");
    // A recording without its cassette: the wire log of a session, copied alone.
    let live = record(&folder).await;
    let alone = folder.0.join("alone.wire.jsonl");
    std::fs::copy(folder.wire(), &alone).unwrap();

    let log = Log::default();
    let refused = support_line(gemini(&live.base_url), PROMPT, &folder, &log)
        .replay(&alone)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ReplayError::NoCassette { expected: Some(path) }
            if *path == folder.0.join("alone.cassette.json")),
        "{refused:?}"
    );
    assert_eq!(
        refused.to_string(),
        format!(
            "the chain records its model calls with `.llm_cassette(..)`, but there is no \
             cassette at `{}`; replay the wire log the cassette was recorded beside, or name \
             it with `.llm_cassette_at(path, mode)`",
            folder.0.join("alone.cassette.json").display()
        )
    );
    assert!(!Path::new(&folder.0.join("alone.cassette.json")).exists());
}

#[tokio::test(start_paused = true)]
async fn match_rules_in_the_chain_let_a_replay_ignore_what_they_name() {
    let folder = Folder::new("rules");
    let live = record(&folder).await;
    let recorded = read_journal(folder.journal()).unwrap();

    let rules: MatchRules =
        serde_json::from_value(json!({"ignore": ["systemInstruction"]})).unwrap();
    let log = Log::default();
    let outcome = support_line(gemini(&live.base_url), OTHER_PROMPT, &folder, &log)
        .llm_cassette_rules(rules)
        .replay(folder.wire())
        .await
        .unwrap()
        .finish()
        .await;
    assert!(
        outcome.is_clean(),
        "{:?} {:?}",
        outcome.divergences,
        outcome.llm_drift
    );
    assert_eq!(outcome.journal, recorded);
    assert_eq!(*log.lock().unwrap(), live.log);
}
