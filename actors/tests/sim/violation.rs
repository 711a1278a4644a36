//! What breaks an invariant, as data: each violation names what was expected and exactly
//! what happened instead.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// One broken invariant.
#[derive(Debug, Clone, PartialEq)]
pub enum Violation {
    /// The run did not finish: something waited longer than its bound (virtual time).
    Hang {
        /// What was being waited for.
        stage: &'static str,
        /// The bound.
        waited: Duration,
    },
    /// The session did not start.
    StartFailed {
        /// Why.
        error: String,
    },
    /// Events the model sent never reached a handler, and none was reported failed.
    Lost {
        /// The handler (`on_text`, …).
        handler: &'static str,
        /// How many.
        count: usize,
        /// Which, as ranges (`t3101..=t3195, t4000`).
        ids: String,
    },
    /// Events reached a handler more than once.
    Duplicated {
        /// The handler.
        handler: &'static str,
        /// How many events came more than once.
        count: usize,
        /// Which, as ranges.
        ids: String,
    },
    /// An event reached a handler before one sent ahead of it.
    OutOfOrder {
        /// The handler.
        handler: &'static str,
        /// The event that came too late.
        id: String,
        /// The event it came after.
        after: String,
    },
    /// A handler got an event the model never sent.
    Unexpected {
        /// The handler.
        handler: &'static str,
        /// The event.
        id: String,
    },
    /// Events whose handling failed were not each reported as
    /// `SessionError::CallbackPanicked` (or more reports came than failures).
    FailureNotReported {
        /// The lane of the report.
        lane: String,
        /// The event kind of the report.
        event: String,
        /// Failures injected and observed.
        failed: usize,
        /// Reports published.
        reported: usize,
    },
    /// A child was restarted a different number of times than it failed.
    RestartCount {
        /// The child.
        actor: String,
        /// Failures injected and observed.
        failed: usize,
        /// `LiveEvent::Restarted` published for it.
        restarts: usize,
    },
    /// A tool call id the model sent was never answered.
    ToolCallUnanswered {
        /// The call id.
        id: String,
    },
    /// A tool call id was answered more than once.
    ToolCallAnsweredTwice {
        /// The call id.
        id: String,
        /// How many times.
        times: usize,
    },
    /// A governed plan's `once` tool ran to completion more than once.
    OnceRanTwice {
        /// The calls that ran it without error, in order.
        calls: Vec<String>,
    },
    /// A call the governed plan's tool gate refused ran anyway.
    RefusedCallRan {
        /// The call id.
        id: String,
    },
    /// A call of the input-streaming tool did not hear the caller's audio as it was sent:
    /// a chunk from before the call, a chunk twice or out of order, or a gap without a
    /// `Missed` notice.
    ToolInput {
        /// The call id.
        call: String,
        /// What it heard wrong.
        what: String,
    },
    /// A `toolResponse` answered an id the model never sent.
    UnknownToolResponse {
        /// The id.
        id: String,
    },
    /// An application state write of the fault-free run is missing, and no fault
    /// declares it.
    JournalMissing {
        /// The key.
        key: String,
        /// The value the fault-free run wrote.
        new: Value,
    },
    /// A context frame that is not whole batches in the pipeline's order (see
    /// `Checker::context_frames`).
    ContextFrame {
        /// Its turns' texts.
        turns: Vec<String>,
        /// Whether it asked the model to answer.
        prompt: bool,
    },
    /// An application state write the fault-free run did not make.
    JournalExtra {
        /// The key.
        key: String,
        /// The value written.
        new: Value,
    },
    /// The session ended (or stayed up) against what the faults imply.
    SessionEnd {
        /// What the faults imply.
        expected: String,
        /// What happened.
        actual: String,
    },
    /// A reconnect presented another handle than the latest the model had sent.
    StaleResumeHandle {
        /// The connection (1-based).
        connection: u32,
        /// The handle in its setup.
        presented: Option<String>,
        /// The latest handle sent before.
        latest: Option<String>,
    },
    /// Wire-log entries never reached the recorder (neither stored nor failed).
    WireLogLost {
        /// How many.
        count: usize,
        /// Which sequence numbers, as ranges.
        seqs: String,
    },
    /// A wire-log entry reached the recorder more than once.
    WireLogDuplicated {
        /// The sequence number.
        seq: u64,
        /// How many times.
        times: usize,
    },
    /// Failed wire-log writes are not what telemetry reports.
    RecordingErrorsNotReported {
        /// Writes that failed.
        failed: u64,
        /// `TelemetrySnapshot::recording_errors`.
        reported: u64,
    },
    /// A buffer grew past its bound.
    UnboundedBuffer {
        /// Which buffer.
        what: &'static str,
        /// Items held at the end.
        buffered: usize,
        /// The bound.
        bound: usize,
    },
    /// A stream read only after the end does not account for every event: what it holds,
    /// plus what its `Lagged` notices say it missed, is not what was published; or it does
    /// not end with `SessionEnded`.
    StreamCutShort {
        /// Events the stream yielded (its notices aside).
        held: u64,
        /// What its `Lagged` notices say it missed.
        lagged: u64,
        /// Events published (as a stream that always read saw them).
        published: u64,
        /// Whether its last event was `SessionEnded`.
        ended: bool,
    },
    /// Awaited application code that ran past the callback timeout was not reported once
    /// as `SessionError::CallbackTimeout` for that callback.
    TimeoutNotReported {
        /// The callback (`on_turn_complete`, `watch action`).
        callback: &'static str,
        /// Timeouts the plan implies (of the calls that were made).
        expected: usize,
        /// Reports published.
        reported: usize,
    },
    /// Right after the session ended (`disconnect` returned, or `connect` failed), its id
    /// could not be claimed again.
    IdStillClaimed {
        /// Why the claim was refused.
        error: String,
    },
    /// The journal file on the simulated disk is not what was written before its disk
    /// failed, or lost mutations its writer did not count as failed writes.
    JournalFile {
        /// What is wrong, exactly.
        what: String,
    },
    /// A session without a telemetry actor counted a different number of something the
    /// model sent than it sent (the router counts what telemetry counts).
    TelemetryCount {
        /// The snapshot's field.
        what: &'static str,
        /// What the model sent.
        want: u64,
        /// What the snapshot holds.
        got: u64,
    },
    /// A violation of the plan's fault-free run (the baseline), which should have none.
    InBaseline(Box<Violation>),
    /// The seed's second run did not repeat its first: their traces (`sim::trace`) differ.
    NotReproducible {
        /// Which run differs: `with faults` or `fault-free`.
        run: &'static str,
        /// The first differing line (1-based).
        line: usize,
        /// That line in the first run's trace.
        first: String,
        /// That line in the second run's trace.
        second: String,
    },
}

impl Violation {
    /// A short, stable name of the violation's kind, for the tally.
    pub fn kind(&self) -> String {
        let kind = match self {
            Violation::Hang { stage, .. } => return format!("hang ({stage})"),
            Violation::StartFailed { .. } => "start_failed",
            Violation::Lost { handler, .. } => return format!("lost ({handler})"),
            Violation::Duplicated { handler, .. } => return format!("duplicated ({handler})"),
            Violation::OutOfOrder { handler, .. } => return format!("out_of_order ({handler})"),
            Violation::Unexpected { handler, .. } => return format!("unexpected ({handler})"),
            Violation::FailureNotReported { lane, event, .. } => {
                return format!("failure_not_reported ({lane} {event})");
            }
            Violation::RestartCount { actor, .. } => return format!("restart_count ({actor})"),
            Violation::ToolCallUnanswered { .. } => "tool_call_unanswered",
            Violation::ToolCallAnsweredTwice { .. } => "tool_call_answered_twice",
            Violation::OnceRanTwice { .. } => "once_ran_twice",
            Violation::RefusedCallRan { .. } => "refused_call_ran",
            Violation::UnknownToolResponse { .. } => "unknown_tool_response",
            Violation::ToolInput { .. } => "tool_input",
            Violation::JournalMissing { .. } => "journal_missing",
            Violation::JournalExtra { .. } => "journal_extra",
            Violation::ContextFrame { .. } => "context_frame",
            Violation::SessionEnd { .. } => "session_end",
            Violation::StaleResumeHandle { .. } => "stale_resume_handle",
            Violation::WireLogLost { .. } => "wire_log_lost",
            Violation::WireLogDuplicated { .. } => "wire_log_duplicated",
            Violation::RecordingErrorsNotReported { .. } => "recording_errors_not_reported",
            Violation::UnboundedBuffer { what, .. } => return format!("unbounded_buffer ({what})"),
            Violation::StreamCutShort { .. } => "stream_cut_short",
            Violation::TimeoutNotReported { callback, .. } => {
                return format!("timeout_not_reported ({callback})");
            }
            Violation::IdStillClaimed { .. } => "id_still_claimed",
            Violation::JournalFile { .. } => "journal_file",
            Violation::TelemetryCount { what, .. } => return format!("telemetry_count ({what})"),
            Violation::InBaseline(inner) => return format!("baseline: {}", inner.kind()),
            Violation::NotReproducible { run, .. } => return format!("not_reproducible ({run})"),
        };
        kind.to_owned()
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Hang { stage, waited } => write!(
                f,
                "hang: {stage} did not finish within {waited:?} (virtual)"
            ),
            Violation::StartFailed { error } => write!(f, "the session did not start: {error}"),
            Violation::Lost {
                handler,
                count,
                ids,
            } => {
                write!(
                    f,
                    "lost: {count} events never reached {handler}, none reported failed: {ids}"
                )
            }
            Violation::Duplicated {
                handler,
                count,
                ids,
            } => {
                write!(
                    f,
                    "duplicated: {handler} got {count} events more than once: {ids}"
                )
            }
            Violation::OutOfOrder { handler, id, after } => {
                write!(f, "out of order: {handler} got {id} after {after}")
            }
            Violation::Unexpected { handler, id } => {
                write!(f, "unexpected: {handler} got {id}, never sent")
            }
            Violation::FailureNotReported {
                lane,
                event,
                failed,
                reported,
            } => write!(
                f,
                "{failed} failed {lane}-lane {event} events but {reported} CallbackPanicked reports"
            ),
            Violation::RestartCount {
                actor,
                failed,
                restarts,
            } => {
                write!(
                    f,
                    "{actor} failed {failed} times but was restarted {restarts} times"
                )
            }
            Violation::ToolCallUnanswered { id } => write!(f, "tool call {id} was never answered"),
            Violation::ToolCallAnsweredTwice { id, times } => {
                write!(f, "tool call {id} was answered {times} times")
            }
            Violation::OnceRanTwice { calls } => write!(
                f,
                "the governed tool may run once, and ran to completion for {}",
                calls.join(", ")
            ),
            Violation::RefusedCallRan { id } => {
                write!(f, "the tool gate refused {id}, and the tool ran it")
            }
            Violation::UnknownToolResponse { id } => {
                write!(f, "a toolResponse answered {id}, never called")
            }
            Violation::ToolInput { call, what } => {
                write!(f, "the input-streaming call {call} {what}")
            }
            Violation::JournalMissing { key, new } => {
                write!(
                    f,
                    "journal: the fault-free run wrote {key} = {new}, this run did not (no fault declares it)"
                )
            }
            Violation::JournalExtra { key, new } => write!(
                f,
                "journal: this run wrote {key} = {new}, the fault-free run did not"
            ),
            Violation::ContextFrame { turns, prompt } => write!(
                f,
                "context frame not whole batches in order: {turns:?} (turnComplete: {prompt})"
            ),
            Violation::SessionEnd { expected, actual } => {
                write!(f, "session end: expected {expected}, got {actual}")
            }
            Violation::StaleResumeHandle {
                connection,
                presented,
                latest,
            } => write!(
                f,
                "connection {connection} presented handle {presented:?}, the latest was {latest:?}"
            ),
            Violation::WireLogLost { count, seqs } => {
                write!(f, "wire log: {count} entries never recorded: {seqs}")
            }
            Violation::WireLogDuplicated { seq, times } => {
                write!(f, "wire log: entry {seq} recorded {times} times")
            }
            Violation::RecordingErrorsNotReported { failed, reported } => write!(
                f,
                "wire log: {failed} writes failed, telemetry reports {reported} recording errors"
            ),
            Violation::UnboundedBuffer {
                what,
                buffered,
                bound,
            } => {
                write!(
                    f,
                    "unbounded: {what} holds {buffered} events (bound {bound})"
                )
            }
            Violation::StreamCutShort {
                held,
                lagged,
                published,
                ended,
            } => write!(
                f,
                "a stream read after the end held {held} events and was told of {lagged} missed, \
                 of {published} published; {}",
                if *ended {
                    "it ended with SessionEnded"
                } else {
                    "it did not end with SessionEnded"
                }
            ),
            Violation::TimeoutNotReported {
                callback,
                expected,
                reported,
            } => write!(
                f,
                "{expected} timeouts of `{callback}` expected, {reported} reported"
            ),
            Violation::IdStillClaimed { error } => {
                write!(
                    f,
                    "the session's id was still claimed after its end: {error}"
                )
            }
            Violation::JournalFile { what } => write!(f, "journal file: {what}"),
            Violation::TelemetryCount { what, want, got } => write!(
                f,
                "telemetry without its actor: {what} is {got}, the model sent {want}"
            ),
            Violation::InBaseline(inner) => write!(f, "in the fault-free run: {inner}"),
            Violation::NotReproducible {
                run,
                line,
                first,
                second,
            } => write!(
                f,
                "not reproducible: run again, the run {run} differs at line {line} of its trace:\n        first:  {first}\n        second: {second}"
            ),
        }
    }
}

/// `ids` (sorted) as ranges: `t1..=t4, t9`.
pub fn ranges(prefix: &str, ids: &[u64]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        if j == i {
            out.push(format!("{prefix}{}", ids[i]));
        } else {
            out.push(format!("{prefix}{}..={prefix}{}", ids[i], ids[j]));
        }
        i = j + 1;
    }
    if out.len() > 12 {
        let more = out.len() - 12;
        out.truncate(12);
        out.push(format!("… and {more} more ranges"));
    }
    out.join(", ")
}
