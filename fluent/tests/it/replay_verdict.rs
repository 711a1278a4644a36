//! `ReplayOutcome::is_clean` means what `reel replay` and `reel demo` mean by CLEAN: no
//! outbound divergence, and the journal recorded with the wire log written again entry by
//! entry. A faithful replay is clean; a tool answering differently (a different frame, a
//! different value written) is not, and the verdict says why.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_fluent::{Live, LiveBuilder};
use reel_recorder::journal::read_journal;
use reel_replayer::journal_match::EntryMismatch;
use reel_replayer::{DivergenceKind, Drift, PathDiff};
use reel_tools::TypedTool;
use serde_json::json;
use support::{T0, TempFolder, accepted, text, turn_complete, until_turn_complete};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CityArgs {
    /// The city.
    city: String,
}

/// A weather assistant whose tool reports `temp_c` and writes it to `app:temp_c`.
fn assistant(temp_c: i64) -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .tool(TypedTool::new(
            "get_weather",
            "The current weather in a city.",
            move |args: CityArgs, ctx| async move {
                ctx.state
                    .set("app:temp_c", temp_c)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"city": args.city, "temp_c": temp_c}))
            },
        ))
        .customize(|session| session.clock(Arc::new(TokioClock::anchored_at(T0))))
}

/// Records one turn with a tool call: the caller asks about London, the tool answers.
async fn record(builder: LiveBuilder) {
    let mut server = ScriptedServer::bind().await;
    let mut events = builder.subscribe();
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::from_millis(40)).await;
    tokio::time::advance(Duration::from_millis(300)).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "call-1", "name": "get_weather", "args": {"city": "London"}}
    ]}}))
    .await;
    conn.recv_json().await; // the tool response
    tokio::time::advance(Duration::from_millis(200)).await;
    conn.send_json(&text("It is 22C in London.")).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test(start_paused = true)]
async fn a_faithful_replay_is_clean_and_a_tool_answering_differently_is_not() {
    let folder = TempFolder::new("replay-verdict");
    let wire = folder.join("weather.wire.jsonl");
    let journal = folder.join("weather.journal.jsonl");
    record(assistant(22).record_wire(&wire).journal(&journal)).await;
    let recorded = read_journal(&journal).unwrap();
    assert_eq!(recorded.len(), 23);

    // The same assistant: CLEAN, the journal beside the wire log compared entry by entry.
    let outcome = assistant(22).replay(&wire).await.unwrap().finish().await;
    assert_eq!(outcome.recorded_journal.as_deref(), Some(&recorded[..]));
    assert!(outcome.is_clean(), "{}", outcome.verdict());
    assert_eq!(outcome.verdict().journal_entries(), Some(23));
    assert_eq!(
        outcome.verdict().to_string(),
        "CLEAN — the replay reproduced the session exactly."
    );

    // The tool now says 23: its response frame diverges, and it writes 23.
    let outcome = assistant(23).replay(&wire).await.unwrap().finish().await;
    assert!(!outcome.is_clean());
    assert_eq!(outcome.divergences.len(), 1);
    assert_eq!(
        outcome.divergences[0].kind,
        DivergenceKind::Differs {
            diffs: vec![PathDiff {
                path: "toolResponse.functionResponses[0].response.temp_c".into(),
                expected: Some(json!(22)),
                actual: Some(json!(23)),
            }]
        }
    );
    // The journals differ in exactly one entry, the tool's write.
    let differing: Vec<usize> = recorded
        .iter()
        .zip(&outcome.journal)
        .enumerate()
        .filter(|(_, (r, p))| r != p)
        .map(|(index, _)| index + 1)
        .collect();
    assert_eq!(differing, [12]);
    assert_eq!(outcome.journal.len(), 23);
    let compared = outcome.journal_match().unwrap();
    let first: EntryMismatch = compared.first_difference.unwrap();
    assert_eq!(
        first.to_string(),
        "entry 12 differs in new: recorded app:temp_c = 22 (set at 1718000000340, delta), \
         replay app:temp_c = 23 (set at 1718000000340, delta)"
    );
    assert_eq!((first.entry, first.fields), (12, vec!["new"]));
    assert_eq!(
        outcome.verdict().drift(),
        [
            Drift::Outbound { divergences: 1 },
            Drift::Journal {
                from_entry: 12,
                recorded: 23,
                replayed: 23
            },
            Drift::FinalState { keys: 1 },
        ]
    );
    assert_eq!(
        outcome.verdict().to_string(),
        "DRIFT — the replay parted from the recording: 1 outbound divergence, the journal \
         from entry 12 on, 1 key's final value."
    );
}

#[tokio::test(start_paused = true)]
async fn the_journal_is_the_chains_own_or_the_one_beside_the_log_or_none() {
    let folder = TempFolder::new("replay-verdict-own");
    let wire = folder.join("call.wire.jsonl");
    let state = folder.join("call-state.jsonl");
    let recording = || assistant(22).record_wire(&wire).journal(&state);
    record(recording()).await;

    // The chain that recorded replays its own wire log: its journal file is the recorded one.
    let outcome = recording().replay(&wire).await.unwrap().finish().await;
    assert_eq!(outcome.recorded_journal.map(|j| j.len()), Some(23));

    // Another chain finds no `call.journal.jsonl` beside the log: judged on frames alone.
    let outcome = assistant(22).replay(&wire).await.unwrap().finish().await;
    assert_eq!(outcome.recorded_journal, None);
    assert!(outcome.is_clean());
    assert_eq!(
        outcome.verdict().to_string(),
        "CLEAN — every runtime frame as recorded; no journal given to compare."
    );
    // ...unless it is given one.
    let mut tampered = read_journal(&state).unwrap();
    tampered[3].timestamp_ms += 1;
    let outcome = outcome.with_recorded_journal(tampered);
    assert_eq!(
        outcome
            .journal_match()
            .unwrap()
            .first_difference
            .map(|first| (first.entry, first.fields)),
        Some((4, vec!["timestamp_ms"]))
    );
    assert!(!outcome.is_clean());
}
