//! [`RecordedConfirmations`]: a replay's confirmation provider, which never asks anyone.

use std::sync::Arc;

use futures_util::future::{BoxFuture, FutureExt};
use reel_actors::tools::{
    ConfirmationProvider, ConfirmationRequest, ToolConfirmation, recorded_decision,
};

use crate::tape_scan::TapeScan;

/// Confirmations as the recording `scan` reads shows them.
///
/// A tool that must be confirmed (`reel_tools::ConfirmTool`) runs
/// again in a replay, but its confirmation is taken from the recording: the response the
/// session sent for the call's id, found by the same [`TapeScan`] that answers recorded
/// tools as the tape is read (the tape is read once, from a file or from memory). A denial's
/// error response was a denial with its reason, any other response a confirmation
/// ([`recorded_decision`]); a call the recording never answered is denied with a reason
/// that says so, and the replay's response then shows the difference.
#[derive(Clone)]
pub struct RecordedConfirmations {
    scan: Arc<TapeScan>,
}

impl std::fmt::Debug for RecordedConfirmations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedConfirmations")
            .finish_non_exhaustive()
    }
}

impl RecordedConfirmations {
    /// Decisions from the recording `scan` reads.
    pub fn new(scan: Arc<TapeScan>) -> Self {
        RecordedConfirmations { scan }
    }
}

impl ConfirmationProvider for RecordedConfirmations {
    fn confirm(&self, request: ConfirmationRequest) -> BoxFuture<'static, ToolConfirmation> {
        let scan = Arc::clone(&self.scan);
        async move {
            let recorded = scan
                .answer(&request.call_id, &request.tool, Some(request.args.clone()))
                .await;
            match recorded {
                Some(response) => recorded_decision(&response.response.unwrap_or_default()),
                None => ToolConfirmation::denied(format!(
                    "the recording holds no decision on call {}",
                    request.call_id
                )),
            }
        }
        .boxed()
    }
}
