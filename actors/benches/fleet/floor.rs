//! The floor of `many_sessions`' workload (`--floor`): each session one plain task that does
//! only what the wire and the application demand of a voice call, with no tree around it.
//!
//! It takes the model's frames from the same fed channel a memory link reads, stamps the
//! hand-off as the link's receiver does, decodes each frame with the session's own decoder
//! (`EventDecoder::decode_streamed`, as the router does), calls the same `FastCallbacks`,
//! and writes the application's chunks with the session's own encoder
//! (`CommandEncoder::encode`, as the command writer does), counted as the memory link's
//! sender counts them; a tool call is answered on the spot. What it leaves out is
//! everything the tree adds: supervision, the lanes, the event hub, the phase, the wire
//! tap's stamps, backpressure. So the CPU it takes is what no session runtime, however
//! lean, could go below on this machine with this harness — the bench's own link and
//! pacers included — and the tree's overhead is the difference.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use reel_actors::callbacks::FastCallbacks;
use reel_protocol::{
    CommandEncoder, DecodeLimits, EventDecoder, FunctionResponse, SessionCommand, SessionEvent,
    decode_server_partial_with,
};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::support::{Fed, LinkCounters, Stamps};

/// One floor session: where the application's chunks go, and its task.
pub struct FloorSession {
    app: mpsc::UnboundedSender<Bytes>,
    link: mpsc::UnboundedSender<Fed>,
    task: JoinHandle<()>,
}

impl FloorSession {
    /// Starts a session reading the model's frames from `model` (fed through `link`),
    /// stamping timed frames' hand-off into `handed`, counting both ways into `counters`
    /// and calling `callbacks`.
    pub fn spawn(
        link: mpsc::UnboundedSender<Fed>,
        model: mpsc::UnboundedReceiver<Fed>,
        handed: Arc<Stamps>,
        counters: Arc<LinkCounters>,
        callbacks: FastCallbacks,
    ) -> FloorSession {
        let (app, chunks) = mpsc::unbounded_channel();
        let task = tokio::spawn(serve(model, chunks, handed, counters, callbacks));
        FloorSession { app, link, task }
    }

    /// Hands the application's 20 ms chunk to the session; `false` once it has ended.
    pub fn send_audio(&self, pcm: Bytes) -> bool {
        self.app.send(pcm).is_ok()
    }

    /// Ends the session behind what was fed before (an empty frame, as the memory link's
    /// close) and waits for its task: `true` if it ended without a panic.
    pub async fn close(self) -> bool {
        let _ = self.link.send(Fed {
            index: None,
            frame: reel_actors::transport::LinkFrame::text(""),
        });
        drop(self.app);
        self.task.await.is_ok()
    }
}

fn count_out(counters: &LinkCounters, bytes: &[u8]) {
    counters.frames_out.fetch_add(1, Ordering::Relaxed);
    counters
        .bytes_out
        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
}

async fn serve(
    mut model: mpsc::UnboundedReceiver<Fed>,
    mut chunks: mpsc::UnboundedReceiver<Bytes>,
    handed: Arc<Stamps>,
    counters: Arc<LinkCounters>,
    callbacks: FastCallbacks,
) {
    let mut decoder = EventDecoder::new();
    let encoder = CommandEncoder::default();
    let limits = DecodeLimits::default();
    let mut events = Vec::new();
    loop {
        tokio::select! {
            biased;
            fed = model.recv() => {
                let Some(fed) = fed else { return };
                if fed.frame.bytes.is_empty() {
                    return;
                }
                if let Some(index) = fed.index {
                    handed.record(index);
                }
                counters.frames_in.fetch_add(1, Ordering::Relaxed);
                counters
                    .bytes_in
                    .fetch_add(fed.frame.bytes.len() as u64, Ordering::Relaxed);
                // As the router: the short reader takes the frames that stream, the
                // general decoder every other.
                if !decoder.decode_streamed(&fed.frame.bytes, limits, &mut events)
                    && let Ok(mut message) = decode_server_partial_with(&fed.frame.bytes, limits)
                {
                    decoder.decode_partial_in_place(0, &mut message, &mut events);
                }
                for event in events.drain(..) {
                    handle(event, &callbacks, &encoder, &counters);
                }
            }
            pcm = chunks.recv() => {
                let Some(pcm) = pcm else { return };
                if let Some(bytes) = encoder.encode(&SessionCommand::SendAudio(pcm)) {
                    count_out(&counters, &bytes);
                    counters.realtime_out.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

fn handle(
    event: SessionEvent,
    callbacks: &FastCallbacks,
    encoder: &CommandEncoder,
    counters: &LinkCounters,
) {
    match event {
        SessionEvent::AudioData(pcm) => {
            if let Some(on_audio) = &callbacks.on_audio {
                on_audio(&pcm);
            }
        }
        SessionEvent::InterimInputTranscription(text) => {
            if let Some(on_transcript) = &callbacks.on_input_transcript {
                on_transcript(&text, false);
            }
        }
        SessionEvent::InputTranscription { text, is_final } => {
            if let Some(on_transcript) = &callbacks.on_input_transcript {
                on_transcript(&text, is_final);
            }
        }
        SessionEvent::ToolCall(calls) => {
            let responses = calls
                .iter()
                .map(|call| {
                    let args = call.args.as_ref().map(|args| args.value().clone());
                    FunctionResponse::new(
                        call.id.clone().unwrap_or_default(),
                        call.name.clone().unwrap_or_default(),
                        json!({"echo": args}),
                    )
                })
                .collect();
            if let Some(bytes) = encoder.encode(&SessionCommand::SendToolResponse(responses)) {
                count_out(counters, &bytes);
                counters.tool_responses_out.fetch_add(1, Ordering::Relaxed);
            }
        }
        _ => {}
    }
}
