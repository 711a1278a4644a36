//! The control lane's side of persistence: snapshots at turn boundaries and at shutdown,
//! and announcing a restored session (see [`crate::persistence`]).

use std::time::Duration;

use crate::clock::Clock;
use crate::control_lane::{ControlData, ControlLaneState};
use crate::events::{Lane, LiveEvent};
use crate::persistence::{SUMMARY_TURNS, SessionSnapshot, rfc3339_utc};

/// How long the lane waits for the final snapshot to be written when it shuts down.
const FINAL_SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(10);

impl ControlLaneState {
    /// The session as it stands, at event time.
    fn snapshot(&self, data: &ControlData) -> SessionSnapshot {
        let state = self.state.snapshot();
        SessionSnapshot {
            state: state
                .iter()
                .map(|(key, value)| (key.to_owned(), value.clone()))
                .collect(),
            phase: data.active_phase.clone().unwrap_or_default(),
            turn_count: u32::try_from(data.turn_count).unwrap_or(u32::MAX),
            transcript_summary: data.transcript.format_window(SUMMARY_TURNS),
            resume_handle: data.resume_handle.clone(),
            saved_at: rfc3339_utc(self.peers.clock().now_ms()),
        }
    }

    /// Turn boundary: hands a snapshot to the writer task, without waiting.
    pub(crate) fn save_snapshot(&self, data: &ControlData) {
        if let Some(saver) = &self.saver {
            saver.save(self.snapshot(data));
        }
    }

    /// Shutdown: saves a final snapshot and waits until it is written.
    pub(crate) async fn save_final_snapshot(&self, data: &ControlData) {
        if let Some(saver) = &self.saver {
            saver
                .save_and_wait(self.snapshot(data), FINAL_SNAPSHOT_TIMEOUT)
                .await;
        }
    }

    /// First connect of a restored session: publishes [`LiveEvent::Resumed`] and runs
    /// `on_resumed` (once; a reconnect does not announce it again).
    pub(crate) async fn announce_resume(&self, data: &mut ControlData) {
        let Some(snapshot) = data.resumed.take() else {
            return;
        };
        self.peers
            .hub
            .publish_with(Lane::Control, || LiveEvent::Resumed {
                phase: snapshot.phase.clone(),
                turn_count: snapshot.turn_count,
            });
        if let Some(on_resumed) = &self.callbacks.on_resumed {
            self.within("on_resumed", on_resumed.run((snapshot, self.state.clone())))
                .await;
        }
    }
}
