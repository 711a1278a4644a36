//! The Recorder actor: takes recorded frames off the hot path and writes them.
//!
//! The transport's [`crate::transport::WireTap`] stamps each frame and pushes its entry onto
//! a [`RecordQueue`] — a push under a short lock, and a wake-up message when the queue was
//! empty. The Recorder hands queued entries to the application's [`WireRecorder`] (the file
//! writer, by default) in order, flushes it every second and on stop, and reports write
//! errors to telemetry. An entry leaves the queue only after it was handed over, so a
//! Recorder that fails mid-write loses nothing: its replacement starts where it stopped.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use reel_recorder::wire_log::{WireEntry, WireRecorder};

use crate::events::lock;
use crate::slot::Slot;
use crate::telemetry::TelemetryShared;

/// How often the recorder is flushed.
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// Messages to the Recorder.
#[derive(Debug)]
pub enum RecorderMsg {
    /// Entries are waiting in the queue.
    Wake,
    /// Time to flush.
    Flush,
}

/// Entries waiting for the Recorder; shared by the tap and every Recorder instance.
pub struct RecordQueue {
    entries: Mutex<VecDeque<WireEntry>>,
    recorder: Arc<dyn WireRecorder>,
    actor: Arc<Slot<RecorderMsg>>,
}

impl std::fmt::Debug for RecordQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordQueue")
            .field("waiting", &lock(&self.entries).len())
            .finish_non_exhaustive()
    }
}

impl RecordQueue {
    /// A queue in front of `recorder`.
    pub fn new(recorder: Arc<dyn WireRecorder>) -> Self {
        RecordQueue {
            entries: Mutex::new(VecDeque::new()),
            recorder,
            actor: Arc::default(),
        }
    }

    /// Where the Recorder actor is (the supervisor sets it).
    pub fn actor(&self) -> &Arc<Slot<RecorderMsg>> {
        &self.actor
    }

    /// Hands every waiting entry to the recorder, in order, and flushes it. For the end of a
    /// session, when no Recorder is left to do it.
    pub fn drain_and_flush(&self) {
        self.drain();
        self.recorder.flush();
    }

    /// Hands every waiting entry to the recorder, in order. An entry is removed only once
    /// the recorder has taken it.
    fn drain(&self) {
        loop {
            let next = lock(&self.entries).front().cloned();
            let Some(entry) = next else {
                return;
            };
            self.recorder.record(entry);
            lock(&self.entries).pop_front();
        }
    }
}

impl WireRecorder for RecordQueue {
    fn record(&self, entry: WireEntry) {
        let was_empty = {
            let mut entries = lock(&self.entries);
            entries.push_back(entry);
            entries.len() == 1
        };
        if was_empty {
            // If the Recorder is restarting, its successor drains the queue when it starts.
            self.actor.cast(RecorderMsg::Wake);
        }
    }

    fn flush(&self) {
        self.actor.cast(RecorderMsg::Flush);
    }

    fn error_count(&self) -> u64 {
        self.recorder.error_count()
    }
}

/// What a Recorder starts with (each instance).
#[derive(Clone)]
pub struct RecorderArgs {
    /// The queue it drains.
    pub queue: Arc<RecordQueue>,
    /// Where recording errors are counted.
    pub telemetry: Arc<TelemetryShared>,
}

/// The Recorder actor.
pub struct Recorder;

impl Actor for Recorder {
    type Msg = RecorderMsg;
    type State = RecorderArgs;
    type Arguments = RecorderArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<RecorderMsg>,
        args: RecorderArgs,
    ) -> Result<RecorderArgs, ActorProcessingErr> {
        myself.send_interval(FLUSH_INTERVAL, || RecorderMsg::Flush);
        // Whatever a failed predecessor left in the queue.
        let _ = myself.cast(RecorderMsg::Wake);
        Ok(args)
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<RecorderMsg>,
        args: &mut RecorderArgs,
    ) -> Result<(), ActorProcessingErr> {
        args.queue.drain_and_flush();
        args.telemetry
            .set_recording_errors(args.queue.recorder.error_count());
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<RecorderMsg>,
        message: RecorderMsg,
        args: &mut RecorderArgs,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RecorderMsg::Wake => args.queue.drain(),
            RecorderMsg::Flush => {
                args.queue.drain();
                args.queue.recorder.flush();
                args.telemetry
                    .set_recording_errors(args.queue.recorder.error_count());
            }
        }
        Ok(())
    }
}
