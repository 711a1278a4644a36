//! The booking assistant of the `phases` example, written with `Live::builder()`, and the
//! caller's side of its conversation.
//!
//! Four phases — greeting → collect_details → confirm → farewell — each with its own
//! instruction and tools, left by guarded transitions on what the tools wrote; hooks on
//! entering and leaving phases; a computed value; and two watchers reacting to the state.

// Shared by the `phases` example and its tests; each uses part of it.
#![allow(dead_code)]

#[path = "turns.rs"]
mod turns;

use std::collections::BTreeMap;
use std::error::Error;
use std::sync::{Arc, Mutex};

use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::fluent::{Live, LiveBuilder};
use reel::protocol::SessionEvent;
use reel::tools::{SimpleTool, ToolContext, ToolError, TypedTool};
use serde_json::{Value, json};
use turns::wait_for_turn;

/// What the caller says, turn by turn: the first is the greeting.
pub const CALLER_TURNS: [&str; 5] = [
    "Hello!",
    "It's Ada Lovelace.",
    "Eight of us, at eight tonight.",
    "Yes, please book it.",
    "Thank you, goodbye!",
];

/// Parties of this size or more leave a deposit.
pub const DEPOSIT_FROM_GUESTS: f64 = 7.0;

/// The deposit, in euros.
pub const DEPOSIT_EUR: u32 = 50;

/// What the phase hooks and the watchers did, in order (they run on the control lane, so
/// the order is the same live and in a replay).
#[derive(Debug, Clone, Default)]
pub struct Activity(Arc<Mutex<Vec<String>>>);

impl Activity {
    /// Prints `line` and keeps it.
    pub fn note(&self, line: String) {
        println!("  [{line}]");
        if let Ok(mut lines) = self.0.lock() {
            lines.push(line);
        }
    }

    /// Everything noted so far.
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().map(|lines| lines.clone()).unwrap_or_default()
    }
}

/// Arguments of `note_name`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct NameArgs {
    /// The caller's full name.
    pub name: String,
}

/// Arguments of `note_party`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct PartyArgs {
    /// How many guests.
    pub party_size: u32,
    /// The time, as HH:MM, e.g. "19:30".
    pub time: String,
}

async fn note_name(args: NameArgs, ctx: ToolContext) -> Result<Value, ToolError> {
    ctx.state
        .set("app:caller_name", &args.name)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"name": args.name}))
}

async fn note_party(args: PartyArgs, ctx: ToolContext) -> Result<Value, ToolError> {
    ctx.state
        .set("app:party_size", args.party_size)
        .map_err(|e| ctx.fail(e))?;
    ctx.state
        .set("app:time", &args.time)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"party_size": args.party_size, "time": args.time}))
}

/// Books the table noted so far; the reference is made from the time and the party size.
async fn confirm_booking(ctx: ToolContext) -> Result<Value, ToolError> {
    let (Some(size), Some(time)) = (
        ctx.state.get::<u32>("app:party_size"),
        ctx.state.get::<String>("app:time"),
    ) else {
        return Err(ctx.fail("party size and time are not known yet; ask for them first"));
    };
    let reference = format!("TR-{}-{size}", time.replace(':', ""));
    let deposit = if ctx.state.get::<bool>("app:deposit_required") == Some(true) {
        DEPOSIT_EUR
    } else {
        0
    };
    ctx.state
        .set("app:reference", &reference)
        .map_err(|e| ctx.fail(e))?;
    ctx.state
        .set("app:confirmed", true)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"reference": reference, "deposit_eur": deposit}))
}

/// The booking assistant. `activity` collects what its hooks and watchers did.
pub fn booking_assistant(activity: &Activity) -> LiveBuilder {
    let (entered, left, closed, deposit, confirmed) = (
        activity.clone(),
        activity.clone(),
        activity.clone(),
        activity.clone(),
        activity.clone(),
    );
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .tool(TypedTool::new(
            "note_name",
            "Notes the caller's name for the booking.",
            note_name,
        ))
        .tool(TypedTool::new(
            "note_party",
            "Notes how many guests are coming and at what time.",
            note_party,
        ))
        .tool(SimpleTool::new(
            "confirm_booking",
            "Books the table noted so far and returns its reference.",
            None,
            |_args, ctx| confirm_booking(ctx),
        ))
        // ── phases ──────────────────────────────────────────────────────────────────
        .phase("greeting", |p| {
            p.instruction(
                "You take table bookings for Trattoria Reel. Welcome the caller and ask for \
                 their name; call note_name with it.",
            )
            .tools(["note_name"])
            .transition_with(
                "collect_details",
                |s| s.contains("app:caller_name"),
                "the caller gave their name",
            )
        })
        .phase("collect_details", |p| {
            p.instruction(
                "Ask how many guests are coming and at what time; call note_party with both.",
            )
            .tools(["note_party"])
            .transition_with(
                "confirm",
                |s| s.contains("app:party_size") && s.contains("app:time"),
                "party size and time are known",
            )
            .on_enter(move |state, _writer| {
                let activity = entered.clone();
                async move {
                    let name = state.get::<String>("app:caller_name").unwrap_or_default();
                    activity.note(format!("enter collect_details: booking for {name}"));
                }
            })
            // Runs before the next phase's instruction is written: confirm reads it.
            .on_exit(move |state, _writer| {
                let activity = left.clone();
                async move {
                    let summary = format!(
                        "{} guests at {} for {}",
                        state.get::<u32>("app:party_size").unwrap_or_default(),
                        state.get::<String>("app:time").unwrap_or_default(),
                        state.get::<String>("app:caller_name").unwrap_or_default(),
                    );
                    let _ = state.set("app:summary", &summary).await;
                    activity.note(format!("exit collect_details: {summary}"));
                }
            })
        })
        .phase("confirm", |p| {
            p.dynamic_instruction(|s| {
                let summary = s.get::<String>("app:summary").unwrap_or_default();
                format!(
                    "Read the booking back to the caller ({summary}) and ask them to confirm; \
                     when they do, call confirm_booking and give them the reference."
                )
            })
            .tools(["confirm_booking"])
            .transition_with(
                "farewell",
                |s| s.get::<bool>("app:confirmed") == Some(true),
                "the booking is confirmed",
            )
        })
        .phase("farewell", |p| {
            p.instruction("Thank the caller and say goodbye.")
                .terminal()
                .on_enter(move |state, _writer| {
                    let activity = closed.clone();
                    async move {
                        let reference = state.get::<String>("app:reference").unwrap_or_default();
                        activity.note(format!("enter farewell: booking {reference} closed"));
                    }
                })
        })
        // ── reactive state ──────────────────────────────────────────────────────────
        .computed("guests", &["app:party_size"], |s| {
            Some(json!(s.get::<u32>("app:party_size").unwrap_or(0)))
        })
        .watch("derived:guests")
        .crossed_above(DEPOSIT_FROM_GUESTS)
        .blocking()
        .then(move |_old, new, state| {
            let activity = deposit.clone();
            async move {
                let _ = state.set("app:deposit_required", true).await;
                activity.note(format!("watch: {new} guests, a deposit is required"));
            }
        })
        .watch("app:confirmed")
        .became_true()
        .blocking()
        .then(move |_old, _new, state| {
            let activity = confirmed.clone();
            async move {
                let reference = state.get::<String>("app:reference").unwrap_or_default();
                activity.note(format!("watch: booking {reference} confirmed"));
            }
        })
}

/// What the conversation showed.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Booking {
    /// The assistant's answers.
    pub answers: Vec<String>,
    /// Each tool call: the tool and the response the model got.
    pub tools: Vec<(String, Value)>,
    /// The phases, in the order they were active.
    pub phases: Vec<String>,
    /// What the hooks and watchers did, in order.
    pub activity: Vec<String>,
    /// The `app:` and `derived:` keys at the end.
    pub state: BTreeMap<String, Value>,
}

impl Booking {
    fn observe(&mut self, lane: Lane, event: &LiveEvent) {
        match (lane, event) {
            (Lane::Control, LiveEvent::Session(SessionEvent::TextComplete(text))) => {
                println!("assistant: {text}");
                self.answers.push(text.clone());
            }
            (Lane::Control, LiveEvent::ToolFinished { name, response, .. }) => {
                println!("  [{name} → {response}]");
                self.tools.push((name.clone(), response.clone()));
            }
            (Lane::Control, LiveEvent::PhaseTransition { from, to, reason }) => {
                println!("  [phase {from} → {to}: {reason}]");
                if self.phases.is_empty() {
                    self.phases.push(from.clone());
                }
                self.phases.push(to.clone());
            }
            _ => {}
        }
    }
}

/// Plays the caller: waits for the model to finish each turn, then says the next of
/// `turns`; once the model has answered the last, collects the outcome. `events` must have
/// been subscribed before the session started; the greeting (the first turn) is sent by
/// the builder.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
    turns: &[&str],
    activity: &Activity,
) -> Result<Booking, Box<dyn Error>> {
    let mut booking = Booking::default();
    let mut next = turns.iter();
    loop {
        if !wait_for_turn(events, |lane, event| booking.observe(lane, event)).await? {
            return Err("the session ended in the middle of the call".into());
        }
        let Some(text) = next.next() else {
            break;
        };
        println!("caller: {text}");
        handle.send_text(*text)?;
    }
    booking.activity = activity.lines();
    booking.state = handle
        .state()
        .snapshot()
        .iter()
        .filter(|(key, _)| key.starts_with("app:") || key.starts_with("derived:"))
        .map(|(key, value)| (key.to_owned(), value.clone()))
        .collect();
    Ok(booking)
}
