//! The control lane's commit points through a whole session, seen by the `reel-reactive`
//! crate's reactor: watchers fired by tool commits and turn completes, computed values
//! written in dependency order at both, temporal patterns on event time, the order of the
//! turn pipeline, and the reactor's progress kept across a restart of the lane.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::callbacks::{AsyncCallback, CallbackMode, ControlCallbacks};
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::reactor::StateReactor;
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::{EventStream, Lane, LiveEvent, LiveHandle, LiveSessionBuilder};
use reel_protocol::{SessionConfig, SessionEvent};
use reel_reactive::{ReactiveConfig, TemporalRegistry, WatchBuilder, Watcher};
use reel_recorder::journal::{JournalSink, MemoryJournalSink};
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::{Value, json};
use support::{T0, settle, start};
use tokio::time::Instant;

/// What the rules saw, in order.
type Log<T> = Arc<Mutex<Vec<T>>>;

fn entries<T: Clone>(log: &Log<T>) -> Vec<T> {
    log.lock().unwrap().clone()
}

/// The session's reactor: `config`, checked.
fn reactor(config: ReactiveConfig) -> Box<dyn StateReactor> {
    Box::new(config.build().unwrap())
}

/// A tool that writes `args.writes` (`[[key, value], …]`) in order, as one commit.
fn set_tool() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(SimpleTool::new(
            "set",
            "Writes state.",
            None,
            |args, ctx| async move {
                for write in args["writes"].as_array().cloned().unwrap_or_default() {
                    let key = write[0].as_str().unwrap_or_default().to_owned();
                    ctx.state.set(&key, &write[1]).map_err(|e| ctx.fail(e))?;
                }
                Ok(json!({"ok": true}))
            },
        ))
        .unwrap();
    dispatcher
}

/// A blocking watcher that logs `(label, old, new)`.
fn logged(
    builder: WatchBuilder,
    label: &'static str,
    log: &Log<(&'static str, Value, Value)>,
) -> Watcher {
    let log = Arc::clone(log);
    builder.blocking().then(move |old, new, _state| {
        let log = Arc::clone(&log);
        async move { log.lock().unwrap().push((label, old, new)) }
    })
}

/// A session against a scripted server, driven frame by frame.
struct Rig {
    handle: LiveHandle,
    conn: ServerConn,
    events: EventStream,
    origin: Instant,
    calls: u32,
}

impl Rig {
    async fn start(
        server: &mut ScriptedServer,
        build: impl FnOnce(LiveSessionBuilder) -> LiveSessionBuilder,
    ) -> Rig {
        // The session clock reads T0 at this instant (see `support::start`).
        let origin = Instant::now();
        let (handle, conn, _setup, mut events) = start(
            server,
            |b| build(b.dispatcher(set_tool())),
            SessionConfig::default(),
        )
        .await;
        settle(&mut events).await;
        Rig {
            handle,
            conn,
            events,
            origin,
            calls: 0,
        }
    }

    /// Session time now: the time the next frame is stamped with.
    fn now(&self) -> u64 {
        T0 + u64::try_from(self.origin.elapsed().as_millis()).unwrap()
    }

    /// Calls the `set` tool and waits for its response (its writes are committed by then;
    /// blocking rules on them run before the lane handles the next frame).
    async fn write(&mut self, writes: Value) {
        self.calls += 1;
        let id = format!("w{}", self.calls);
        self.conn
            .send_json(&json!({"toolCall": {"functionCalls": [
                {"id": id, "name": "set", "args": {"writes": writes}}
            ]}}))
            .await;
        assert_eq!(
            self.conn.recv_json().await,
            json!({"toolResponse": {"functionResponses": [
                {"id": id, "name": "set", "response": {"ok": true}}
            ]}})
        );
    }

    /// Ends the model's turn and waits until the turn pipeline is done.
    async fn turn(&mut self) {
        self.conn
            .send_json(&json!({"serverContent": {"turnComplete": true}}))
            .await;
        self.until(|e| matches!(e, SessionEvent::TurnComplete { .. }))
            .await;
    }

    /// A frame with nothing but usage: an event for the control lane, at this time.
    async fn tick(&mut self) {
        self.conn
            .send_json(&json!({"usageMetadata": {"totalTokenCount": 1}}))
            .await;
        self.until(|e| matches!(e, SessionEvent::Usage(_))).await;
    }

    /// The user barges in.
    async fn interrupt(&mut self) {
        self.conn
            .send_json(&json!({"serverContent": {"interrupted": true}}))
            .await;
        self.until(|e| matches!(e, SessionEvent::Interrupted)).await;
    }

    /// Waits for the control lane to publish an event matching `pred`. Time does not move
    /// meanwhile (nothing waits on a timer), so frames keep the times they were sent at.
    async fn until(&mut self, pred: impl Fn(&SessionEvent) -> bool) {
        while let Some(envelope) = self.events.recv().await {
            if envelope.lane == Lane::Control
                && matches!(&envelope.event, LiveEvent::Session(e) if pred(e))
            {
                return;
            }
        }
        panic!("the session ended");
    }

    async fn advance(&self, ms: u64) {
        tokio::time::advance(Duration::from_millis(ms)).await;
    }

    async fn settle(&mut self) {
        settle(&mut self.events).await;
    }
}

#[tokio::test(start_paused = true)]
async fn watchers_fire_exactly_on_tool_commits_and_turn_completes() {
    let log: Log<(&str, Value, Value)> = Arc::default();
    let reactive = ReactiveConfig::new()
        .watch(logged(
            Watcher::on("app:score").crossed_above(10.0),
            "above",
            &log,
        ))
        .watch(logged(
            Watcher::on("app:score").crossed_below(10.0),
            "below",
            &log,
        ))
        .watch(logged(Watcher::on("turn:flag").became_true(), "true", &log))
        .watch(logged(
            Watcher::on("turn:flag").became_false(),
            "false",
            &log,
        ))
        .watch(logged(Watcher::on("app:tier"), "changed", &log))
        .watch(logged(
            Watcher::on("app:tier").changed_to("gold"),
            "gold",
            &log,
        ));
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| b.reactor(reactor(reactive))).await;
    assert_eq!(entries(&log), Vec::new());

    // Absent → 5 crosses below 10: an absent key is on neither side, its first value lands
    // below (issue 29); any change of the tier is a change.
    rig.write(json!([["app:score", 5], ["app:tier", "silver"]]))
        .await;
    rig.settle().await;
    assert_eq!(
        entries(&log),
        [
            ("below", Value::Null, json!(5)),
            ("changed", Value::Null, json!("silver"))
        ]
    );

    rig.write(json!([["app:score", 12], ["turn:flag", true]]))
        .await;
    // Several writes of one key in one commit: the first old (12) and the last new (9).
    rig.write(json!([
        ["app:score", 8],
        ["app:score", 15],
        ["app:score", 9],
        ["app:tier", "gold"]
    ]))
    .await;
    rig.settle().await;
    assert_eq!(
        entries(&log)[2..],
        [
            ("above", json!(5), json!(12)),
            ("true", Value::Null, json!(true)),
            ("below", json!(12), json!(9)),
            ("changed", json!("silver"), json!("gold")),
            ("gold", json!("silver"), json!("gold")),
        ]
    );

    // Turn complete clears `turn:flag` (true → absent).
    rig.turn().await;
    assert_eq!(entries(&log)[7..], [("false", json!(true), Value::Null)]);

    // Changed and changed back within one commit: no change.
    rig.write(json!([["app:tier", "silver"], ["app:tier", "gold"]]))
        .await;
    // 9 → 10 reaches the threshold: a crossing.
    rig.write(json!([["app:score", 10]])).await;
    rig.turn().await;
    rig.settle().await;
    assert_eq!(entries(&log)[8..], [("above", json!(9), json!(10))]);

    // Removed: a removal crosses nothing. Back at 20: a first value again, above.
    rig.write(json!([["app:score", null]])).await;
    rig.write(json!([["app:score", 20]])).await;
    rig.settle().await;
    assert_eq!(entries(&log)[9..], [("above", Value::Null, json!(20))]);
}

/// Issue 29: computed values are recalculated at every commit point the watchers use — at a
/// tool commit too, not only at turn complete — and before the watchers, so a watcher of a
/// `derived:` key fires in the same cycle as the tool write it derives from.
#[tokio::test(start_paused = true)]
async fn computed_values_are_recalculated_when_a_tool_commits_before_the_watchers_look() {
    let log: Log<(&str, Value, Value)> = Arc::default();
    let reactive = ReactiveConfig::new()
        .computed("doubled", &["app:n"], |s| {
            Some(json!(s.get::<i64>("app:n")? * 2))
        })
        .watch(logged(Watcher::on("derived:doubled"), "doubled", &log));
    let sink = Arc::new(MemoryJournalSink::new());
    let journal: Arc<dyn JournalSink> = sink.clone();
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| {
        b.reactor(reactor(reactive)).journal_sink(journal)
    })
    .await;

    rig.write(json!([["app:n", 2]])).await;
    rig.settle().await;
    // No turn has completed: the tool's commit alone recalculated the value.
    assert_eq!(rig.handle.state().get::<i64>("derived:doubled"), Some(4));
    assert_eq!(entries(&log), [("doubled", Value::Null, json!(4))]);
    rig.write(json!([["app:n", 5]])).await;
    rig.settle().await;
    assert_eq!(entries(&log)[1..], [("doubled", json!(4), json!(10))]);
    // A turn complete with nothing new writes nothing and fires nothing.
    rig.turn().await;
    rig.settle().await;
    assert_eq!(entries(&log).len(), 2);
    // In the journal, each value right after the write it derives from.
    let keys: Vec<(String, Value)> = sink
        .entries()
        .iter()
        .filter(|m| m.key.starts_with("app:") || m.key.starts_with("derived:"))
        .map(|m| (m.key.clone(), m.new.clone()))
        .collect();
    assert_eq!(
        keys,
        [
            ("app:n".to_owned(), json!(2)),
            ("derived:doubled".to_owned(), json!(4)),
            ("app:n".to_owned(), json!(5)),
            ("derived:doubled".to_owned(), json!(10)),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_concurrent_watcher_does_not_hold_the_lane_up() {
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let log: Log<String> = Arc::default();
    let action_log = Arc::clone(&log);
    let reactive = ReactiveConfig::new().watch(Watcher::on("app:go").became_true().then(
        move |_old, _new, state| {
            let released = released.lock().unwrap().take();
            let log = Arc::clone(&action_log);
            async move {
                if let Some(released) = released {
                    released.await.unwrap();
                }
                let value = state.get::<i64>("app:later").unwrap_or_default();
                log.lock()
                    .unwrap()
                    .push(format!("done, app:later = {value}"));
            }
        },
    ));
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| b.reactor(reactor(reactive))).await;
    rig.write(json!([["app:go", true]])).await;
    // The action waits; the lane answers the next call all the same.
    rig.write(json!([["app:later", 7]])).await;
    rig.settle().await;
    assert_eq!(entries(&log), Vec::<String>::new());
    release.send(()).unwrap();
    rig.settle().await;
    assert_eq!(entries(&log), ["done, app:later = 7"]);
}

#[tokio::test(start_paused = true)]
async fn a_computed_chain_writes_exact_derived_entries_and_feeds_watchers() {
    let log: Log<(&str, Value, Value)> = Arc::default();
    let reactive = ReactiveConfig::new()
        // Registered before the value it reads: dependency order puts it second.
        .computed("with_tax", &["derived:total"], |s| {
            Some(json!(s.get::<i64>("derived:total")? * 6 / 5))
        })
        .computed("total", &["app:price", "app:quantity"], |s| {
            Some(json!(
                s.get::<i64>("app:price")? * s.get::<i64>("app:quantity")?
            ))
        })
        .watch(logged(
            Watcher::on("derived:with_tax").crossed_above(800.0),
            "expensive",
            &log,
        ));
    let sink = Arc::new(MemoryJournalSink::new());
    let journal: Arc<dyn JournalSink> = sink.clone();
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| {
        b.reactor(reactor(reactive)).journal_sink(journal)
    })
    .await;

    rig.write(json!([["app:price", 250]])).await;
    rig.turn().await; // `total` has no quantity yet: no write at all
    rig.advance(1000).await;
    rig.write(json!([["app:quantity", 2]])).await;
    rig.turn().await;
    rig.advance(1000).await;
    rig.write(json!([["app:quantity", 3]])).await;
    rig.turn().await;
    rig.advance(1000).await;
    rig.turn().await; // nothing changed: nothing written
    rig.settle().await;

    assert_eq!(entries(&log), [("expensive", json!(600), json!(900))]);
    let journal = sink.entries();
    let derived: Vec<String> = journal
        .iter()
        .filter(|m| m.key.starts_with("derived:"))
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    assert_eq!(
        derived,
        [
            r#"{"sequence":17,"key":"derived:total","old":null,"new":500,"origin":"set","timestamp_ms":1718000001500,"delta":false}"#,
            r#"{"sequence":18,"key":"derived:with_tax","old":null,"new":600,"origin":"set","timestamp_ms":1718000001500,"delta":false}"#,
            r#"{"sequence":23,"key":"derived:total","old":500,"new":750,"origin":"set","timestamp_ms":1718000002500,"delta":false}"#,
            r#"{"sequence":24,"key":"derived:with_tax","old":600,"new":900,"origin":"set","timestamp_ms":1718000002500,"delta":false}"#,
        ]
    );
    // Where they sit: after the tool's commit, before the turn count, at each turn complete.
    let keys: Vec<(u64, &str)> = journal
        .iter()
        .filter(|m| m.sequence >= 12)
        .map(|m| (m.sequence, m.key.as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            (12, "app:price"),
            (13, "session:turn_count"),
            (14, "session:elapsed_ms"),
            (15, "session:remaining_budget_ms"),
            (16, "app:quantity"),
            (17, "derived:total"),
            (18, "derived:with_tax"),
            (19, "session:turn_count"),
            (20, "session:elapsed_ms"),
            (21, "session:remaining_budget_ms"),
            (22, "app:quantity"),
            (23, "derived:total"),
            (24, "derived:with_tax"),
            (25, "session:turn_count"),
            // The last turn's time-derived keys, written before its pipeline.
            (26, "session:elapsed_ms"),
            (27, "session:remaining_budget_ms"),
            (28, "session:turn_count"),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn when_sustained_fires_after_exactly_its_duration_of_event_time_and_resets() {
    let fired: Log<u64> = Arc::default();
    let log = Arc::clone(&fired);
    let temporal = TemporalRegistry::new().when_sustained(
        "held",
        |s| s.get::<bool>("app:hold") == Some(true),
        Duration::from_millis(1000),
        move |state, _writer| {
            let log = Arc::clone(&log);
            async move { log.lock().unwrap().push(state.clock().now_ms()) }
        },
    );
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| {
        b.reactor(reactor(ReactiveConfig::new().temporal(temporal)))
    })
    .await;

    let held_from = rig.now();
    rig.write(json!([["app:hold", true]])).await; // holds from the commit, at `held_from`
    rig.advance(999).await;
    rig.tick().await;
    assert_eq!(entries(&fired), Vec::<u64>::new(), "999 ms is not enough");
    rig.advance(1).await;
    rig.tick().await;
    assert_eq!(entries(&fired), [held_from + 1000]);
    rig.advance(500).await;
    rig.tick().await;
    assert_eq!(entries(&fired), [held_from + 1000], "fires once");

    // False resets it; held again, it needs the whole duration again.
    rig.write(json!([["app:hold", false]])).await;
    rig.advance(100).await;
    let held_again = rig.now();
    rig.write(json!([["app:hold", true]])).await;
    rig.advance(600).await;
    rig.tick().await;
    rig.advance(399).await;
    rig.tick().await;
    assert_eq!(entries(&fired), [held_from + 1000]);
    rig.advance(1).await;
    rig.turn().await; // turn complete checks too
    rig.settle().await;
    assert_eq!(entries(&fired), [held_from + 1000, held_again + 1000]);
}

#[tokio::test(start_paused = true)]
async fn when_rate_fires_on_the_nth_event_within_the_window_and_not_when_spread_out() {
    let fired: Log<u64> = Arc::default();
    let log = Arc::clone(&fired);
    let temporal = TemporalRegistry::new().when_rate(
        "barge_ins",
        |e| matches!(e, SessionEvent::Interrupted),
        3,
        Duration::from_millis(1000),
        move |state, _writer| {
            let log = Arc::clone(&log);
            async move { log.lock().unwrap().push(state.clock().now_ms()) }
        },
    );
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| {
        b.reactor(reactor(ReactiveConfig::new().temporal(temporal)))
    })
    .await;

    let first = rig.now();
    rig.interrupt().await;
    rig.advance(500).await;
    rig.interrupt().await;
    rig.advance(500).await;
    rig.tick().await; // not an interruption
    rig.interrupt().await; // the third within 1000 ms
    assert_eq!(entries(&fired), [first + 1000]);

    // Spread out: never three within a second (the window starts over after firing).
    for _ in 0..4 {
        rig.advance(600).await;
        rig.interrupt().await;
    }
    rig.settle().await;
    assert_eq!(entries(&fired), [first + 1000]);
}

#[tokio::test(start_paused = true)]
async fn when_turns_fires_after_n_consecutive_turns_once_per_streak() {
    let fired: Log<u64> = Arc::default();
    let log = Arc::clone(&fired);
    let temporal = TemporalRegistry::new().when_turns(
        "engaged",
        |s| s.get::<bool>("app:engaged") == Some(true),
        2,
        move |state, _writer| {
            let log = Arc::clone(&log);
            // The turns completed before this one (the count goes up at the pipeline's end).
            async move {
                let before = state.get::<u64>("session:turn_count").unwrap_or_default();
                log.lock().unwrap().push(before + 1);
            }
        },
    );
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| {
        b.reactor(reactor(ReactiveConfig::new().temporal(temporal)))
    })
    .await;
    for engaged in [true, false, true, true, true, false, true, true] {
        rig.write(json!([["app:engaged", engaged]])).await;
        rig.turn().await;
    }
    rig.settle().await;
    assert_eq!(entries(&fired), [4, 8], "turns 3–4 and 7–8");
}

#[tokio::test(start_paused = true)]
async fn the_turn_pipeline_runs_computed_transitions_watchers_temporal_then_on_turn_complete() {
    let steps: Log<String> = Arc::default();
    let step = |label: &'static str| {
        let steps = Arc::clone(&steps);
        move || steps.lock().unwrap().push(label.to_owned())
    };
    let (computed, guard, turns, done) = (
        step("computed"),
        step("guard"),
        step("when_turns"),
        step("on_turn_complete"),
    );
    let watch_steps = Arc::clone(&steps);
    let watch = move |label: &'static str| {
        let steps = Arc::clone(&watch_steps);
        move |old: Value, new: Value, _state| {
            let steps = Arc::clone(&steps);
            async move {
                steps
                    .lock()
                    .unwrap()
                    .push(format!("{label}: {old} -> {new}"))
            }
        }
    };
    let reactive = ReactiveConfig::new()
        .computed("doubled", &["app:n"], move |s| {
            computed();
            Some(json!(s.get::<i64>("app:n")? * 2))
        })
        .watch(
            Watcher::on("derived:doubled")
                .blocking()
                .then(watch("derived:doubled")),
        )
        .watch(
            Watcher::on("session:active_phase")
                .blocking()
                .then(watch("phase")),
        )
        .watch(
            Watcher::on("session:turn_count")
                .blocking()
                .then(watch("turn_count")),
        )
        .temporal(TemporalRegistry::new().when_turns(
            "every_turn",
            move |_| {
                turns();
                false
            },
            1,
            |_, _| async {},
        ));
    let phases = PhaseMachine::builder("start")
        .phase(Phase::new("start").transition("next", move |s| {
            guard();
            s.get::<i64>("derived:doubled") == Some(4)
        }))
        .phase(Phase::new("next").terminal())
        .build()
        .unwrap();
    let callbacks = ControlCallbacks {
        on_turn_complete: Some(AsyncCallback::new(CallbackMode::Blocking, move |()| {
            done();
            async {}
        })),
        ..ControlCallbacks::default()
    };
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| {
        b.reactor(reactor(reactive))
            .phases(phases)
            .control_callbacks(callbacks)
    })
    .await;
    rig.write(json!([["app:n", 2]])).await;
    rig.turn().await;
    rig.turn().await;
    rig.settle().await;
    assert_eq!(
        entries(&steps),
        [
            // The tool's commit: the computed value first, then the watchers over everything
            // since the session started (the initial phase too).
            "computed",
            r#"derived:doubled: null -> 4"#,
            r#"phase: null -> "start""#,
            // Turn 1: computed again (unchanged), the guard sees the value; the watchers see
            // the transition it caused.
            "computed",
            "guard",
            r#"phase: "start" -> "next""#,
            "when_turns",
            "on_turn_complete",
            // Turn 2: the turn count written last in turn 1 is seen now ("next" is terminal).
            "computed",
            r#"turn_count: null -> 1"#,
            "when_turns",
            "on_turn_complete",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn temporal_progress_survives_a_restart_of_the_control_lane() {
    let fired: Log<&str> = Arc::default();
    let (rate_log, turns_log) = (Arc::clone(&fired), Arc::clone(&fired));
    let temporal = TemporalRegistry::new()
        .when_rate(
            "two_barge_ins",
            |e| matches!(e, SessionEvent::Interrupted),
            2,
            Duration::from_secs(10),
            move |_, _| {
                let log = Arc::clone(&rate_log);
                async move { log.lock().unwrap().push("two_barge_ins") }
            },
        )
        .when_turns(
            "two_turns",
            |_| true,
            2,
            move |_, _| {
                let log = Arc::clone(&turns_log);
                async move { log.lock().unwrap().push("two_turns") }
            },
        );
    let failed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let callbacks = ControlCallbacks {
        on_generation_complete: Some(AsyncCallback::new(CallbackMode::Blocking, move |()| {
            let failed = Arc::clone(&failed);
            async move {
                if !failed.swap(true, std::sync::atomic::Ordering::SeqCst) {
                    panic!("generation complete callback failed on purpose");
                }
            }
        })),
        ..ControlCallbacks::default()
    };
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| {
        b.reactor(reactor(ReactiveConfig::new().temporal(temporal)))
            .control_callbacks(callbacks)
    })
    .await;
    rig.interrupt().await;
    rig.turn().await;
    rig.conn
        .send_json(&json!({"serverContent": {"generationComplete": true}}))
        .await;
    rig.settle().await;
    assert_eq!(rig.handle.telemetry().restarts, 1, "the lane was restarted");
    assert_eq!(entries(&fired), Vec::<&str>::new());
    // The window and the streak were kept: one more of each completes them.
    rig.interrupt().await;
    rig.turn().await;
    rig.settle().await;
    assert_eq!(entries(&fired), ["two_barge_ins", "two_turns"]);
}

/// Issue 26, promise 3: a blocking watcher action and a temporal pattern's action that hang
/// are cut off at the callback timeout and reported like any awaited callback; the lane goes
/// on (the next tool call is answered, the turn completes) and `disconnect` returns without
/// waiting for the shutdown timeout.
#[tokio::test(start_paused = true)]
async fn hung_watcher_and_temporal_actions_time_out_and_the_session_goes_on() {
    let hung = |_: reel_actors::state::State| std::future::pending::<()>();
    let reactive = ReactiveConfig::new()
        .watch(
            Watcher::on("app:go")
                .became_true()
                .blocking()
                .then(move |_old, _new, state| hung(state)),
        )
        .temporal(TemporalRegistry::new().when_turns(
            "every_turn",
            |_| true,
            1,
            move |state, _writer| hung(state),
        ));
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| {
        b.reactor(reactor(reactive))
            .callback_timeout(Duration::from_secs(2))
            .shutdown_timeout(Duration::from_secs(30))
    })
    .await;
    let mut all = rig.handle.events();
    let bounded = Duration::from_secs(60);
    tokio::time::timeout(bounded, rig.write(json!([["app:go", true]])))
        .await
        .expect("the first call is answered");
    // The watcher hangs on that commit; the next call is answered once it is cut off.
    tokio::time::timeout(bounded, rig.write(json!([["app:later", 7]])))
        .await
        .expect("the call after a hung watcher is answered");
    tokio::time::timeout(bounded, rig.turn())
        .await
        .expect("the turn completes past a hung temporal action");
    let seen = all
        .collect_until_idle(Duration::from_secs(5), bounded)
        .await;
    let errors: Vec<String> = seen
        .iter()
        .filter_map(|e| match &e.event {
            LiveEvent::Session(SessionEvent::Error(error)) => Some(error.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        [
            "callback `watch action` did not return within 2s; the session went on without it",
            "callback `temporal action` did not return within 2s; the session went on without it"
        ]
    );
    assert_eq!(rig.handle.telemetry().callback_timeouts, 2);
    let before = Instant::now();
    let (end, _) = tokio::join!(rig.handle.disconnect(), rig.conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    assert!(
        before.elapsed() < Duration::from_secs(30),
        "disconnect waited {:?}, the shutdown timeout",
        before.elapsed()
    );
}

/// A watcher that timed out in a turn's pipeline is reported even when the lane fails later
/// in the same item (`on_turn_complete` panics after it): the successor handles the report
/// its predecessor kept (found by the fault simulator, seed 1257).
#[tokio::test(start_paused = true)]
async fn a_timeout_kept_by_a_lane_that_then_fails_is_reported_by_its_successor() {
    let calls = Arc::new(Mutex::new(0u32));
    let count = Arc::clone(&calls);
    let callbacks = ControlCallbacks {
        on_turn_complete: Some(AsyncCallback::new(CallbackMode::Blocking, move |()| {
            let count = Arc::clone(&count);
            async move {
                let call = {
                    let mut calls = count.lock().unwrap();
                    *calls += 1;
                    *calls
                };
                assert!(call != 2, "on_turn_complete fails on call 2 on purpose");
            }
        })),
        ..ControlCallbacks::default()
    };
    let reactive = ReactiveConfig::new().watch(
        Watcher::on("session:turn_count")
            .changed_to(1)
            .blocking()
            .then(|_, _, _| std::future::pending::<()>()),
    );
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| {
        b.reactor(reactor(reactive))
            .control_callbacks(callbacks)
            .callback_timeout(Duration::from_secs(2))
    })
    .await;
    let mut all = rig.handle.events();
    rig.turn().await;
    // Turn 2's pipeline: the watcher (turn count 1) hangs and is cut off, then
    // `on_turn_complete` panics: the lane fails and restarts.
    rig.conn
        .send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    let seen = all
        .collect_until_idle(Duration::from_secs(5), Duration::from_secs(60))
        .await;
    let errors: Vec<String> = seen
        .iter()
        .filter_map(|e| match &e.event {
            LiveEvent::Session(SessionEvent::Error(error)) => Some(error.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        [
            "callback `watch action` did not return within 2s; the session went on without it",
            "control_lane callback panicked while handling turn_complete: the lane failed \
             while handling it and was restarted"
        ]
    );
    assert_eq!(*calls.lock().unwrap(), 2);
}
