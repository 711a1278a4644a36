//! 29_live_voice: the receptionist's call and call back, the bundled tapes regenerated
//! byte for byte from a scripted model (audio both ways, a repair nudge, the booking's
//! enter prompt and tool call, the resume from SQLite), the example's offline run printing
//! its bundled output (both tapes replayed CLEAN), and `cargo run` as a real process.
//!
//! After an intended change: `REEL_BLESS=1 cargo test --test it cookbook::ex29`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/29_live_voice.rs"]
mod example;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use example::cookbook::Target;
use example::{
    Activity, CALL, CALLBACK, NAME, call_turns_after, callback_name, receptionist, session,
    steering, tape,
};
use reel::demo::model_script::play_script;
use reel::fluent::RepairConfig;
use reel::persistence::{SessionPersistence, SqlitePersistence};
use reel_actors::clock::TokioClock;
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_protocol::{Base64Data, ClientMessage};
use serde_json::{Value, json};

use super::support::{as_tape, check_bundled, check_output, check_printed, scratch};

/// The call's start: 2026-11-27T09:00:00Z; the call back's, a minute later.
const START_MS: u64 = 1_795_770_000_000;
const CALLBACK_MS: u64 = START_MS + 60_000;
/// How long the scripted model "thinks" before each answer.
const THINKING: Duration = Duration::from_millis(240);

/// The model's voice for one answer: two chunks of 40 ms of 24 kHz PCM16LE (a sawtooth).
fn model_voice(turn: usize) -> Vec<Value> {
    (0..2)
        .map(|chunk| {
            let pcm: Vec<u8> = (0..960usize)
                .flat_map(|n| {
                    let at = (chunk * 960 + n) % (30 + turn * 4);
                    ((at as i32 * 400 - 6_000) as i16).to_le_bytes()
                })
                .collect();
            let data = Base64Data(pcm.into()).encode();
            json!({"serverContent": {"modelTurn": {"role": "model", "parts": [
                {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": data}}
            ]}}})
        })
        .collect()
}

/// One spoken answer: what the model heard the caller say (if anything), its voice, its
/// transcript, and the end of its turn.
fn spoken(turn: usize, heard: Option<&str>, said: &str) -> Vec<Value> {
    let mut frames = Vec::new();
    if let Some(heard) = heard {
        frames.push(json!({"serverContent": {"inputTranscription": {"text": heard}}}));
    }
    frames.extend(model_voice(turn));
    frames.push(json!({"serverContent": {"outputTranscription": {"text": said}}}));
    frames.push(json!({"serverContent": {"generationComplete": true}}));
    frames.push(json!({"serverContent": {"turnComplete": true}}));
    frames
}

/// The text of a `clientContent` frame's turns, when it asks for an answer.
fn prompt(message: &ClientMessage) -> Option<String> {
    let content = message.client_content.as_ref()?;
    if content.turn_complete != Some(true) {
        return None;
    }
    Some(
        content
            .turns
            .iter()
            .flatten()
            .flat_map(|turn| turn.parts())
            .filter_map(|part| part.text.clone())
            .collect(),
    )
}

/// What the model answers in the call, to `message`; `heard` counts the caller's
/// utterances so far.
fn call_answer(message: &ClientMessage, heard: &Mutex<usize>) -> Vec<Value> {
    if message.setup.is_some() {
        return vec![json!({"setupComplete": {}})];
    }
    if message.tool_response.is_some() {
        return spoken(
            4,
            None,
            "You're booked for a cleaning on Thursday. Your reference is RD-THU-807.",
        );
    }
    if let Some(prompt) = prompt(message) {
        if prompt.contains("I still need to collect") {
            return spoken(2, None, "Which weekday would you like to come in?");
        }
        if prompt.contains("I'll book that visit") {
            return vec![json!({"toolCall": {"functionCalls": [{
                "id": "visit-1", "name": "book_visit",
                "args": {"service": "cleaning", "day": "Thursday"}
            }]}})];
        }
        return Vec::new();
    }
    let ended = message
        .realtime_input
        .as_ref()
        .is_some_and(|input| input.activity_end.is_some());
    if !ended {
        return Vec::new();
    }
    let mut heard = heard.lock().unwrap();
    let index = *heard;
    *heard += 1;
    let said = match index {
        0 => "Hello, this is Robin at Reel Dental. A cleaning, lovely. Which day suits you?",
        1 => "No rush. We have openings every weekday.",
        2 => "Thursday it is.",
        _ => "Thank you for calling Reel Dental. Goodbye!",
    };
    spoken(index * 2, Some(CALL[index.min(CALL.len() - 1)]), said)
}

/// What the model answers in the call back.
fn callback_answer(message: &ClientMessage) -> Vec<Value> {
    if message.setup.is_some() {
        return vec![json!({"setupComplete": {}})];
    }
    let ended = message
        .realtime_input
        .as_ref()
        .is_some_and(|input| input.activity_end.is_some());
    if !ended {
        return Vec::new();
    }
    spoken(
        7,
        Some(CALLBACK[0]),
        "Your cleaning is on Thursday, reference RD-THU-807. See you then!",
    )
}

async fn play_call(conn: &mut ServerConn) {
    let heard = Mutex::new(0);
    play_script(conn, THINKING, |message| call_answer(message, &heard)).await;
}

#[tokio::test(start_paused = true)]
async fn the_bundled_tapes_are_what_reel_records_today() {
    let dir = scratch("ex29", "recorded");
    let sessions: Arc<dyn SessionPersistence> =
        Arc::new(SqlitePersistence::open(dir.join("sessions.sqlite3")).unwrap());
    let mut server = ScriptedServer::bind().await;
    let endpoint = server.endpoint().without_credential();
    let activity = Activity::default();
    let model = async {
        play_call(&mut server.accept().await).await;
        play_script(&mut server.accept().await, THINKING, callback_answer).await;
    };
    let callback_wire = dir.join(tape(&callback_name()));
    let caller = async {
        let agent = receptionist(sessions.clone(), &activity)
            .customize(|s| s.clock(Arc::new(TokioClock::anchored_at(START_MS))));
        let call = session(
            agent,
            endpoint.clone(),
            &CALL,
            true,
            &call_turns_after,
            None,
        )
        .await
        .unwrap();
        let agent = receptionist(sessions.clone(), &activity)
            .customize(|s| s.clock(Arc::new(TokioClock::anchored_at(CALLBACK_MS))));
        let callback = session(
            agent,
            endpoint,
            &CALLBACK,
            true,
            &|_| 0,
            Some(&callback_wire),
        )
        .await
        .unwrap();
        (call, callback)
    };
    let ((), ((call, call_entries), (callback, callback_entries))) = tokio::join!(model, caller);

    assert_eq!(
        call.lines,
        [
            "caller (heard)  | Hi, I'd like to book a cleaning, please.",
            "robin (spoken)  | Hello, this is Robin at Reel Dental. A cleaning, lovely. Which day suits you?",
            r#"extracted       | visit: {"service":"cleaning"}"#,
            "phase           | greeting → scheduling (the caller named the service)",
            "caller (heard)  | Hmm, I'm not sure yet.",
            "robin (spoken)  | No rush. We have openings every weekday.",
            // The repair nudge's answer: the day is still missing.
            "robin (spoken)  | Which weekday would you like to come in?",
            "caller (heard)  | Thursday works for me.",
            "robin (spoken)  | Thursday it is.",
            r#"extracted       | visit: {"service":"cleaning","day":"Thursday"}"#,
            "phase           | scheduling → booking (the caller named the day)",
            r#"tool call       | book_visit({"service":"cleaning","day":"Thursday"})"#,
            r#"tool result     | book_visit → {"reference":"RD-THU-807","service":"cleaning","day":"Thursday"}"#,
            "robin (spoken)  | You're booked for a cleaning on Thursday. Your reference is RD-THU-807.",
            "phase           | booking → farewell (the visit is booked)",
            "caller (heard)  | Great, thank you. Bye!",
            "robin (spoken)  | Thank you for calling Reel Dental. Goodbye!",
        ]
    );
    assert_eq!(
        steering(&call_entries),
        [
            "instruction     | Ask which weekday suits the caller.",
            "context (model) | The caller wants a cleaning.",
            "context (model, answer now) | I still need to collect: derived:day.",
            "context (model) | I still need to collect: derived:day.",
            "instruction     | Book the visit with book_visit, then read the reference back.",
            "context (model, answer now) | I'll book that visit for you now.",
            "instruction     | Answer any last question, thank the caller and say goodbye.",
        ]
    );
    assert_eq!(
        activity.lines(),
        [
            "on_enter booking: a cleaning on Thursday",
            "watch app:reference → SMS reminder for RD-THU-807",
            "on_resumed: phase farewell, 6 turns, reference RD-THU-807",
        ]
    );
    assert_eq!(
        callback.lines,
        [
            "resumed         | in farewell after 6 turns",
            "caller (heard)  | Hi again, what was my reference?",
            "robin (spoken)  | Your cleaning is on Thursday, reference RD-THU-807. See you then!",
            // The extractor reads the restored transcript too: the same visit.
            r#"extracted       | visit: {"service":"cleaning","day":"Thursday"}"#,
        ]
    );
    check_bundled(&tape(NAME), &as_tape(&call_entries));
    check_bundled(&tape(&callback_name()), &as_tape(&callback_entries));
    let resume = std::fs::read_to_string(dir.join(format!("{}.resume.json", callback_name())))
        .expect("the call back resumed, so its recording has a resume file");
    check_bundled(&format!("{}.resume.json", callback_name()), &resume);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_runs_offline_from_its_bundled_tapes() {
    let printed = example::run(Target::Bundled).await.unwrap();
    check_output(NAME, &printed);
}

#[tokio::test(start_paused = true)]
async fn a_receptionist_that_nudges_later_drifts_from_the_bundled_call() {
    let dir = scratch("ex29", "drift");
    let sessions: Arc<dyn SessionPersistence> =
        Arc::new(SqlitePersistence::open(dir.join("sessions.sqlite3")).unwrap());
    let outcome = receptionist(sessions, &Activity::default())
        .repair(RepairConfig::new(2, 4))
        .replay(example::live::bundled(&tape(NAME)))
        .await
        .unwrap()
        .finish()
        .await;
    let verdict = example::live::verdict(&outcome);
    // The first nudge (frame 25) is never sent; the second, one turn later, is sent as the
    // first nudge is: asking for an answer.
    assert_eq!(
        verdict,
        "DRIFT — the replay parted from the recording: 2 outbound divergences.\n    \
         frame 25: the recording has an outbound frame the replay never produced\n    \
         frame 32: the replayed frame differs\n  \
         clientContent.turnComplete: expected false, actual true"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
