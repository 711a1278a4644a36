//! The simulated model: plays a plan's script over whatever connections the client opens,
//! at a steady virtual-time pace, and writes down everything it sees.
//!
//! - It sends `burst` frames every `tick_ms`, reading what the client sends in between.
//! - After a `toolCall` marked `wait` it sends nothing more until every call of it was
//!   answered (or a deadline passed: then it notes it and goes on, as a real model would).
//! - After a `goAway` it waits for the client to close, then continues the script on the
//!   next connection. A link drop (a fault) first waits for the calls in flight to be
//!   answered, so that no answer is lost in a dying socket, which would not be the
//!   runtime's fault.
//! - Each setup's resumption handle is written down next to the latest handle the model
//!   had handed out, for the checks.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::{Instant, sleep_until, timeout};

use super::frames::{self, ClientSaid};
use super::model_link::{Heard, Listener, ModelConn};
use super::plan::{Fault, Plan, Step};

/// How long the model waits for the answers to a `toolCall` before going on.
pub const ANSWER_WAIT: Duration = Duration::from_secs(20);
/// How long the model waits for the client to close after a `goAway`.
pub const CLOSE_WAIT: Duration = Duration::from_secs(30);

/// A setup the model received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupSeen {
    /// 1-based connection number.
    pub connection: u32,
    /// The resumption handle it presented.
    pub presented: Option<String>,
    /// The latest handle the model had sent before it.
    pub latest: Option<String>,
}

/// Everything the model saw and did.
#[derive(Debug, Clone, Default)]
pub struct ModelLog {
    /// The script steps sent, as indices into the script, in order.
    pub sent: Vec<usize>,
    /// Every call id in every `toolResponse` received, in order.
    pub tool_responses: Vec<String>,
    /// When each call of the input-streaming tool was sent (virtual time).
    pub listen_sent: Vec<(String, tokio::time::Instant)>,
    /// Every setup received.
    pub setups: Vec<SetupSeen>,
    /// goAways sent (the script's and the storms').
    pub go_aways: u32,
    /// Links dropped.
    pub drops: u32,
    /// The whole script was sent.
    pub finished: bool,
    /// Things that did not go as the model expected (it went on regardless).
    pub notes: Vec<String>,
    /// Every context frame received: its turns' texts and whether it prompts.
    pub contexts: Vec<(Vec<String>, bool)>,
}

/// How one connection ended, for the model.
enum ConnEnd {
    /// The client is expected to come back (goAway, drop).
    Reconnect,
    /// The client went away.
    Gone,
}

/// The model's state across connections.
struct Model {
    plan: Arc<Plan>,
    log: Arc<Mutex<ModelLog>>,
    finished: Option<oneshot::Sender<()>>,
    cursor: usize,
    latest_handle: Option<String>,
    storm_left: u32,
    /// Link faults already played, by script index.
    played: BTreeSet<(usize, &'static str)>,
    /// Call ids sent and not answered yet.
    pending: BTreeSet<String>,
    connections: u32,
}

/// Plays `plan` on the connections `listener` accepts, writing into `log`; `finished`
/// fires once the whole script was sent.
pub async fn play(
    plan: Arc<Plan>,
    mut listener: Listener,
    log: Arc<Mutex<ModelLog>>,
    finished: oneshot::Sender<()>,
) {
    let mut model = Model {
        plan,
        log,
        finished: Some(finished),
        cursor: 0,
        latest_handle: None,
        storm_left: 0,
        played: BTreeSet::new(),
        pending: BTreeSet::new(),
        connections: 0,
    };
    while let Some(conn) = listener.accept().await {
        match model.serve(conn).await {
            ConnEnd::Reconnect | ConnEnd::Gone => continue,
        }
    }
}

impl Model {
    fn log(&self) -> std::sync::MutexGuard<'_, ModelLog> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn note(&self, note: String) {
        self.log().notes.push(note);
    }

    /// One connection: the handshake, then the script from where it was.
    async fn serve(&mut self, mut conn: ModelConn) -> ConnEnd {
        self.connections += 1;
        let presented = match conn.recv().await {
            Heard::Frame(frame) => match frames::client_said(&frame) {
                ClientSaid::Setup(handle) => handle,
                other => {
                    self.note(format!(
                        "connection {} began with {other:?}, not a setup",
                        self.connections
                    ));
                    None
                }
            },
            Heard::Gone => return ConnEnd::Gone,
        };
        let seen = SetupSeen {
            connection: self.connections,
            presented,
            latest: self.latest_handle.clone(),
        };
        self.log().setups.push(seen);
        if !conn.send(&frames::setup_complete()).await {
            return ConnEnd::Gone;
        }
        if self.storm_left > 0 {
            self.storm_left -= 1;
            return self.go_away(conn).await;
        }
        self.play_steps(conn).await
    }

    async fn play_steps(&mut self, mut conn: ModelConn) -> ConnEnd {
        let tick = Duration::from_millis(self.plan.pace.tick_ms);
        let mut next = Instant::now() + tick;
        loop {
            if !self.read_until(&mut conn, next).await {
                return ConnEnd::Gone;
            }
            next += tick;
            for _ in 0..self.plan.pace.burst {
                if self.cursor == self.plan.script.len() {
                    return self.finish(conn).await;
                }
                if let Some(count) = self.link_fault(|f, at| match f {
                    Fault::GoAwayStorm { before_step, count } if *before_step == at => Some(*count),
                    _ => None,
                }) {
                    self.storm_left = count.saturating_sub(1);
                    return self.go_away(conn).await;
                }
                if self
                    .link_fault(|f, at| {
                        matches!(f, Fault::LinkDrop { before_step } if *before_step == at)
                            .then_some(0)
                    })
                    .is_some()
                {
                    let all: Vec<String> = self.pending.iter().cloned().collect();
                    if !self.wait_answers(&mut conn, &all).await {
                        return ConnEnd::Gone;
                    }
                    self.pending.clear();
                    self.log().drops += 1;
                    conn.drop_link();
                    return ConnEnd::Reconnect;
                }
                let step = self.plan.script[self.cursor].clone();
                if !conn.send(&frames::frame(&step)).await {
                    return ConnEnd::Gone;
                }
                let index = self.cursor;
                self.log().sent.push(index);
                self.cursor += 1;
                match step {
                    Step::Resumption(handle) => self.latest_handle = Some(handle),
                    Step::ToolCall { calls, wait } => {
                        let now = tokio::time::Instant::now();
                        self.log().listen_sent.extend(
                            calls
                                .iter()
                                .filter(|id| frames::is_listen(id))
                                .map(|id| (id.clone(), now)),
                        );
                        self.pending.extend(calls.iter().cloned());
                        if wait {
                            if !self.wait_answers(&mut conn, &calls).await {
                                return ConnEnd::Gone;
                            }
                            next = Instant::now() + tick;
                        }
                        break;
                    }
                    Step::GoAway => {
                        self.log().go_aways += 1;
                        return self.wait_close(conn).await;
                    }
                    _ => {}
                }
            }
        }
    }

    /// The link fault placed before the current step, if it was not played yet.
    fn link_fault(&mut self, pick: impl Fn(&Fault, usize) -> Option<u32>) -> Option<u32> {
        let at = self.cursor;
        let (fault, value) = self
            .plan
            .faults
            .iter()
            .find_map(|f| pick(f, at).map(|v| (f.kind(), v)))?;
        self.played.insert((at, fault)).then_some(value)
    }

    async fn go_away(&mut self, mut conn: ModelConn) -> ConnEnd {
        if !conn.send(&frames::go_away()).await {
            return ConnEnd::Gone;
        }
        self.log().go_aways += 1;
        self.wait_close(conn).await
    }

    /// Reads until the client closes (it should, after a goAway).
    async fn wait_close(&mut self, mut conn: ModelConn) -> ConnEnd {
        let deadline = Instant::now() + CLOSE_WAIT;
        if self.read_until(&mut conn, deadline).await {
            self.note(format!(
                "the client did not close connection {} within {CLOSE_WAIT:?} of a goAway",
                self.connections
            ));
        }
        ConnEnd::Reconnect
    }

    /// The script is over: says so, then reads until the client closes.
    async fn finish(&mut self, mut conn: ModelConn) -> ConnEnd {
        self.log().finished = true;
        if let Some(finished) = self.finished.take() {
            let _ = finished.send(());
        }
        while self
            .read_until(&mut conn, Instant::now() + Duration::from_secs(3600))
            .await
        {}
        ConnEnd::Gone
    }

    /// Waits until every one of `calls` was answered, or [`ANSWER_WAIT`] passed (noted).
    /// `false` if the client went away.
    async fn wait_answers(&mut self, conn: &mut ModelConn, calls: &[String]) -> bool {
        let deadline = Instant::now() + ANSWER_WAIT;
        while calls.iter().any(|c| self.pending.contains(c)) {
            let heard = match timeout(
                deadline.saturating_duration_since(Instant::now()),
                conn.recv(),
            )
            .await
            {
                Ok(heard) => heard,
                Err(_) => {
                    let open: Vec<&String> =
                        calls.iter().filter(|c| self.pending.contains(*c)).collect();
                    self.note(format!(
                        "{open:?} not answered within {ANSWER_WAIT:?}; went on"
                    ));
                    return true;
                }
            };
            if !self.heard(heard) {
                return false;
            }
        }
        true
    }

    /// Reads what the client sends until `deadline`: `true` then, `false` if the client
    /// went away first.
    async fn read_until(&mut self, conn: &mut ModelConn, deadline: Instant) -> bool {
        loop {
            tokio::select! {
                biased;
                heard = conn.recv() => if !self.heard(heard) { return false },
                () = sleep_until(deadline) => return true,
            }
        }
    }

    /// Writes down a client frame; `false` if the client went away.
    fn heard(&mut self, heard: Heard) -> bool {
        let frame = match heard {
            Heard::Frame(frame) => frame,
            Heard::Gone => return false,
        };
        match frames::client_said(&frame) {
            ClientSaid::ToolResponse(ids) => {
                for id in &ids {
                    self.pending.remove(id);
                }
                self.log().tool_responses.extend(ids);
            }
            ClientSaid::Setup(_) => self.note("a second setup on one connection".to_owned()),
            ClientSaid::Context(turns, prompt) => self.log().contexts.push((turns, prompt)),
            ClientSaid::Other => {}
        }
        true
    }
}
