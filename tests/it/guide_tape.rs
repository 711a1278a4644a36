//! The bundled tape `assets/tapes/guide.wire.jsonl` is what reel records when the
//! getting-started guide's assistant (`docs/getting-started.md`, section 3) holds the
//! guide's conversation (section 4) with the scripted model: regenerated here and compared
//! byte for byte, so it never drifts from the guide. After an intended change to the
//! guide's assistant: copy its `src/lib.rs` block into `tests/support/guide_assistant.rs`,
//! then `REEL_BLESS=1 cargo test --test it guide_tape::`.

use crate::bundled_tape;
use crate::markdown::{GUIDE, block_for_file};

#[path = "../support/guide_assistant.rs"]
mod guide_assistant;
#[path = "../support/guide_model.rs"]
mod guide_model;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveEvent};
use reel_protocol::SessionEvent;
use reel_recorder::wire_log::{MemoryWireRecorder, WireRecorder};

/// The bundled tape, as committed.
const GUIDE_TAPE: &str = include_str!("../../assets/tapes/guide.wire.jsonl");

/// The tape's start time: 2025-06-01T10:00:00Z.
const START_MS: u64 = 1_748_772_000_000;

/// What the guide's `main` says: the greeting, then one line per finished model turn.
const GREETING: &str = "Hello!";
const USER_TURNS: [&str; 2] = ["What's the weather in London?", "Thanks, that's all."];

#[test]
fn the_tape_is_made_with_the_guides_own_assistant_and_conversation() {
    let copy = include_str!("../support/guide_assistant.rs");
    assert_eq!(
        block_for_file(GUIDE, "src/lib.rs"),
        copy,
        "tests/support/guide_assistant.rs is not the guide's src/lib.rs: copy the block from \
         docs/getting-started.md, then re-bless the tape with REEL_BLESS=1"
    );
    let main = block_for_file(GUIDE, "src/main.rs");
    for line in [
        format!("        .greeting({GREETING:?});"),
        format!(
            "const USER_TURNS: [&str; 2] = [{:?}, {:?}];",
            USER_TURNS[0], USER_TURNS[1]
        ),
    ] {
        assert!(
            main.lines().any(|l| l == line),
            "the guide's src/main.rs no longer has `{line}`: play its conversation here"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_bundled_guide_tape_is_what_reel_records_today() {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let session = guide_assistant::assistant()
        .greeting(GREETING)
        .record_wire_to(recorder.clone() as Arc<dyn WireRecorder>)
        .customize(|session| session.clock(Arc::new(TokioClock::anchored_at(START_MS))));
    let mut events = session.subscribe();
    let endpoint = server.endpoint().without_credential();
    let model = async {
        let mut conn = server.accept().await;
        guide_model::play(&mut conn).await;
    };
    // The user's side, as the guide's `main` plays it.
    let user = async {
        let handle = session.connect(endpoint).await.unwrap();
        let mut turns = USER_TURNS.iter();
        let mut answers = Vec::new();
        while let Some(envelope) = events.recv().await {
            match (envelope.lane, &envelope.event) {
                (Lane::Fast, LiveEvent::Session(SessionEvent::TextComplete(text))) => {
                    answers.push(text.clone());
                }
                (Lane::Control, event) if event.kind() == "turn_complete" => match turns.next() {
                    Some(text) => handle.send_text(*text).unwrap(),
                    None => break,
                },
                _ => {}
            }
        }
        tokio::time::advance(Duration::from_millis(300)).await;
        (answers, handle.disconnect().await)
    };
    let ((), (answers, end)) = tokio::join!(model, user);
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    assert_eq!(
        answers,
        [
            "Hi! I'm your weather assistant. Which city would you like the weather for?",
            "It's 14°C and cloudy in London right now.",
            "You're welcome. Goodbye!",
        ]
    );

    bundled_tape::check_or_bless("guide.wire.jsonl", &recorder.entries(), GUIDE_TAPE);
}
