//! `MapOverTextAgent::concurrency`: items at once up to the bound, each on its own copy of
//! the state, outputs in list order, and a cassette replay answering every item's call by
//! its request whatever order the calls come in.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{
    AgentError, FnTextAgent, LlmTextAgent, MapOverTextAgent, SequentialTextAgent, SharedAgent,
    TextAgent,
};
use reel_llm::{BaseLlm, Cassette, CassetteMode, LlmChunk, LlmError, LlmRequest, LlmStream};
use reel_recorder::cassette::{CassetteFile, DEFAULT_MAX_CASSETTE_BYTES};
use serde_json::json;
use tokio::sync::{Barrier, Notify};

/// An agent run once per item: waits at `barrier` (so it passes only while another item
/// runs too), counting how many run at once.
struct Pairs {
    barrier: Arc<Barrier>,
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

impl TextAgent for Pairs {
    fn name(&self) -> &str {
        "pairs"
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            self.barrier.wait().await;
            self.running.fetch_sub(1, Ordering::SeqCst);
            Ok(state.get::<String>("item").unwrap_or_default())
        })
    }
}

#[tokio::test(start_paused = true)]
async fn items_run_at_once_up_to_the_bound() {
    let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let pairs: SharedAgent = Arc::new(Pairs {
        barrier: Arc::new(Barrier::new(2)),
        running: running.clone(),
        most: most.clone(),
    });
    let map = MapOverTextAgent::new("map", pairs, "items").concurrency(2);
    let state = State::new();
    state.set("items", ["a", "b", "c", "d"]).await.unwrap();
    // One at a time, the first item would wait at the barrier for ever: the (virtual)
    // deadline says so instead of hanging.
    let output = tokio::time::timeout(Duration::from_secs(60), map.run(&state))
        .await
        .expect("the items ran one at a time");
    assert_eq!(output.unwrap(), "a\nb\nc\nd");
    assert_eq!(most.load(Ordering::SeqCst), 2);
    assert_eq!(state.get_raw("results"), Some(json!(["a", "b", "c", "d"])));
}

#[tokio::test]
async fn outputs_keep_list_order_whatever_order_the_items_finish_in() {
    let first_done = Arc::new(Notify::new());
    let finished = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (done, log) = (first_done.clone(), finished.clone());
    let agent: SharedAgent = Arc::new(FnTextAgent::new_async("item", move |state: State| {
        let (done, log) = (done.clone(), log.clone());
        async move {
            let item = state.get::<String>("item").unwrap_or_default();
            if item == "first" {
                // Finishes only after the second item has.
                done.notified().await;
            } else {
                done.notify_one();
            }
            log.lock().unwrap().push(item.clone());
            Ok(item.to_uppercase())
        }
    }));
    let map = MapOverTextAgent::new("map", agent, "items").concurrency(2);
    let state = State::new();
    state.set("items", ["first", "second"]).await.unwrap();
    assert_eq!(map.run(&state).await.unwrap(), "FIRST\nSECOND");
    assert_eq!(*finished.lock().unwrap(), ["second", "first"]);
    assert_eq!(state.get_raw("results"), Some(json!(["FIRST", "SECOND"])));
}

#[tokio::test]
async fn each_item_runs_on_its_own_copy_of_the_state() {
    let agent: SharedAgent = Arc::new(FnTextAgent::new_async("item", |state: State| async move {
        let item = state.get::<String>("item").unwrap_or_default();
        let seen = state.get::<String>("scratch");
        state
            .set("scratch", &item)
            .await
            .map_err(|e| AgentError::failed("item", e))?;
        Ok(format!(
            "{item} ({} by {})",
            seen.unwrap_or_else(|| "no scratch".to_owned()),
            state.get::<String>("owner").unwrap_or_default()
        ))
    }));
    let map = MapOverTextAgent::new("map", agent, "items")
        .item_key("item")
        .concurrency(3);
    let state = State::new();
    state.set("items", ["x", "y", "z"]).await.unwrap();
    state.set("owner", "ops").await.unwrap();
    assert_eq!(
        map.run(&state).await.unwrap(),
        "x (no scratch by ops)\ny (no scratch by ops)\nz (no scratch by ops)"
    );
    assert_eq!(state.get_raw("scratch"), None);
    assert_eq!(state.get_raw("item"), None);
}

#[tokio::test]
async fn the_first_failure_in_list_order_is_returned() {
    let agent: SharedAgent = Arc::new(FnTextAgent::new("item", |state: &State| {
        match state.get::<String>("item").as_deref() {
            Some("bad") => Err(AgentError::failed("item", "cannot do `bad`")),
            other => Ok(other.unwrap_or_default().to_owned()),
        }
    }));
    let map = MapOverTextAgent::new("map", agent, "items").concurrency(4);
    let state = State::new();
    state.set("items", ["ok", "bad", "ok"]).await.unwrap();
    assert_eq!(
        map.run(&state).await.unwrap_err().to_string(),
        "agent `item` failed: cannot do `bad`"
    );
    assert_eq!(state.get_raw("results"), None);
}

/// Answers `summary of {prompt}`.
struct Summarizer;

impl BaseLlm for Summarizer {
    fn model_id(&self) -> &str {
        "gemini-2.5-flash"
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let answer = format!(
            "summary of {}",
            request.last_user_text().unwrap_or_default()
        );
        Box::pin(async move {
            Ok(Box::pin(futures_util::stream::iter([Ok(LlmChunk::text(answer))])) as LlmStream)
        })
    }
}

/// `item -> input`, then the model.
fn summarize_each(model: Arc<dyn BaseLlm>) -> MapOverTextAgent {
    let to_input: SharedAgent = Arc::new(FnTextAgent::new("to_input", |state: &State| {
        Ok(state.get::<String>("item").unwrap_or_default())
    }));
    let summarize: SharedAgent = Arc::new(LlmTextAgent::new("summarize", model));
    let each: SharedAgent = Arc::new(SequentialTextAgent::new("each", vec![to_input, summarize]));
    MapOverTextAgent::new("map", each, "items").concurrency(3)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-agents-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn concurrent_calls_replay_from_a_cassette_matched_by_request_not_order() {
    let path = temp_dir("map-over").join("map.cassette.json");
    let items = ["alpha", "beta", "gamma"];
    let recording = Cassette::open(&path, CassetteMode::Record).unwrap();
    let state = State::new();
    state.set("items", items).await.unwrap();
    let live = summarize_each(reel_llm::LlmInterceptor::wrap(
        &recording,
        Arc::new(Summarizer),
    ))
    .run(&state)
    .await
    .unwrap();
    assert_eq!(live, "summary of alpha\nsummary of beta\nsummary of gamma");
    // The calls in the opposite order on the cassette: a replay still answers each item
    // with its own recorded answer.
    let mut file = CassetteFile::read(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    assert_eq!(file.interactions.len(), 3);
    file.interactions.reverse();
    file.write(&path, DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    let replay = Cassette::open(&path, CassetteMode::Replay).unwrap();
    let state = State::new();
    state.set("items", items).await.unwrap();
    let replayed = summarize_each(replay.model("gemini-2.5-flash"))
        .run(&state)
        .await
        .unwrap();
    assert_eq!(replayed, live);
    assert_eq!(replay.unused().await, Vec::<usize>::new());
    std::fs::remove_file(&path).unwrap();
}
