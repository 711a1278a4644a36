//! The control lane runs the extractors that are due and commits their results in
//! registration order (see [`crate::extract`] for the rules).

use std::sync::Arc;

use serde_json::Value;

use crate::clock::Clock;
use crate::control_lane::{ControlData, ControlLaneState};
use crate::events::{Lane, LiveEvent};
use crate::extract::{ExtractionContext, ExtractionPoint, state_writes};
use crate::transcript::TranscriptTurn;

impl ControlLaneState {
    /// Runs the extractors due at `point` and commits what they found: for each, in
    /// registration order, its state batch, its event and its callback.
    pub(crate) async fn extract(&self, data: &ControlData, point: ExtractionPoint) {
        if self.extractors.is_empty() {
            return;
        }
        let turn_number = data.turn_number();
        let turns = self.extraction_window(data, point, turn_number);
        let mut ctx = ExtractionContext::new(turn_number, point, self.state.snapshot())
            .with_interceptor(Arc::clone(&self.interceptor));
        ctx.phase = data.active_phase.clone();
        for (name, result) in self.extractors.run(&turns, &ctx).await {
            match result {
                Ok(value) => self.commit_extraction(name, value).await,
                Err(error) => {
                    let message = error.to_string();
                    self.peers
                        .hub
                        .publish_with(Lane::Control, || LiveEvent::ExtractionError {
                            name: name.clone(),
                            error: message.clone(),
                        });
                    match &self.callbacks.on_extraction_error {
                        Some(on_error) => {
                            self.within("on_extraction_error", on_error.run((name, message)))
                                .await;
                        }
                        None => tracing::warn!(extractor = %name, %error, "extraction failed"),
                    }
                }
            }
        }
    }

    /// The turns the extractors read at `point`: the finished ones, and after a tool call
    /// the turn in progress as the last.
    fn extraction_window(
        &self,
        data: &ControlData,
        point: ExtractionPoint,
        turn_number: u32,
    ) -> Vec<TranscriptTurn> {
        let widest = self.extractors.widest_window();
        match point {
            ExtractionPoint::AfterToolCall => {
                let now_ms = self.peers.clock().now_ms();
                let mut turns = data.transcript.window(widest.saturating_sub(1)).to_vec();
                turns.push(data.pending.preview(turn_number, now_ms));
                turns
            }
            ExtractionPoint::TurnComplete | ExtractionPoint::PhaseChange => {
                data.transcript.window(widest).to_vec()
            }
        }
    }

    async fn commit_extraction(&self, name: String, value: Value) {
        let writes = state_writes(&name, &value);
        if !writes.is_empty()
            && let Err(error) = self.state.set_many(writes).await
        {
            self.report_state_write(format!("extractor `{name}`"), &error);
        }
        self.peers
            .hub
            .publish_with(Lane::Control, || LiveEvent::Extraction {
                name: name.clone(),
                value: value.clone(),
            });
        if let Some(on_extracted) = &self.callbacks.on_extracted {
            self.within("on_extracted", on_extracted.run((name, value)))
                .await;
        }
    }
}
