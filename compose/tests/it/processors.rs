//! Request and response processors: what they change, in which order, how a refusal
//! reads, and that they run on cassette-replayed calls as on live ones — the cassette
//! records and matches the request as the processors left it.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_compose::{
    AgentBuilder, InstructionInserter, ProcessedLlm, ProcessorError, RequestProcessor,
    RequestProcessorChain, ResponseProcessor, ResponseProcessorChain,
};
use reel_llm::{BaseLlm, Cassette, CassetteMode, LlmInterceptor, LlmRequest, LlmResponse};

use crate::scripted::{Scripted, ok};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "reel-compose-processors-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Upper-cases the answer text.
struct Shout;

impl ResponseProcessor for Shout {
    fn name(&self) -> &str {
        "shout"
    }

    fn process_response(
        &self,
        mut response: LlmResponse,
    ) -> BoxFuture<'_, Result<LlmResponse, ProcessorError>> {
        response.text = response.text.to_uppercase();
        Box::pin(async move { Ok(response) })
    }
}

/// Refuses any request whose user text mentions a card number.
struct NoCards;

impl RequestProcessor for NoCards {
    fn name(&self) -> &str {
        "no_cards"
    }

    fn process_request(
        &self,
        request: LlmRequest,
    ) -> BoxFuture<'_, Result<LlmRequest, ProcessorError>> {
        Box::pin(async move {
            if request
                .last_user_text()
                .is_some_and(|text| text.contains("4111"))
            {
                return Err(ProcessorError::request(
                    "no_cards",
                    "the user text holds a card number",
                ));
            }
            Ok(request)
        })
    }
}

fn translator() -> AgentBuilder {
    AgentBuilder::new("translator")
        .instruction("Translate the input.")
        .request_processor(InstructionInserter::new("Answer in French."))
        .response_processor(Shout)
}

async fn run(agent: &dyn reel_agents::TextAgent, input: &str) -> Result<String, String> {
    let state = State::new();
    state.set("input", input).await.unwrap();
    agent.run(&state).await.map_err(|error| error.to_string())
}

#[tokio::test]
async fn request_processors_run_in_order_and_prepend_runs_first() {
    let mut chain = RequestProcessorChain::new();
    chain.add(InstructionInserter::new("Be concise."));
    chain.add(InstructionInserter::new("Respond in English."));
    chain.prepend(NoCards);
    assert_eq!(chain.len(), 3);
    assert_eq!(
        chain.names(),
        ["no_cards", "instruction_inserter", "instruction_inserter"]
    );
    let request = chain
        .process(
            LlmRequest::new("gemini-2.5-flash")
                .system("You help.")
                .user("hi"),
        )
        .await
        .unwrap();
    assert_eq!(
        request.system_instruction.as_deref(),
        Some("You help.\nBe concise.\nRespond in English.")
    );
    assert_eq!(
        chain
            .process(LlmRequest::new("m").user("card 4111 1111"))
            .await
            .unwrap_err(),
        ProcessorError::Request {
            processor: "no_cards".to_owned(),
            reason: "the user text holds a card number".to_owned(),
        }
    );
}

#[tokio::test]
async fn response_processors_run_in_order() {
    let mut chain = ResponseProcessorChain::new();
    chain.add(Shout);
    assert_eq!(format!("{chain:?}"), r#"["shout"]"#);
    let answer = LlmResponse {
        text: "bonjour".to_owned(),
        ..LlmResponse::default()
    };
    assert_eq!(chain.process(answer).await.unwrap().text, "BONJOUR");
}

#[tokio::test]
async fn an_agent_sends_the_processed_request_and_reads_the_processed_answer() {
    let model = Scripted::new("m", vec![ok("bonjour")]);
    let agent = translator().build(model.clone() as Arc<dyn BaseLlm>);
    assert_eq!(run(&agent, "hello").await.unwrap(), "BONJOUR");
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].system_instruction.as_deref(),
        Some("Translate the input.\nAnswer in French.")
    );
}

#[tokio::test]
async fn a_refusing_request_processor_fails_the_agent_and_calls_no_model() {
    let model = Scripted::new("m", vec![ok("never")]);
    let agent = AgentBuilder::new("clerk")
        .instruction("File the note.")
        .request_processor(NoCards)
        .build(model.clone() as Arc<dyn BaseLlm>);
    assert_eq!(
        run(&agent, "my card is 4111 1111").await.unwrap_err(),
        "agent `clerk`: the model call failed: request processor `no_cards` refused the \
         request: the user text holds a card number"
    );
    assert_eq!(model.calls(), 0);
}

#[tokio::test]
async fn a_replay_runs_the_processors_and_the_cassette_matches_the_processed_request() {
    let dir = temp_dir("replay");
    let path = dir.join("translator.cassette.json");

    let live = Scripted::new("m", vec![ok("bonjour")]);
    let cassette = Cassette::open(&path, CassetteMode::Record).unwrap();
    let recorded = translator().build(LlmInterceptor::wrap(
        &cassette,
        live.clone() as Arc<dyn BaseLlm>,
    ));
    assert_eq!(run(&recorded, "hello").await.unwrap(), "BONJOUR");

    // The cassette holds the request as the processors left it, and the raw answer.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        file["interactions"][0]["request"],
        serde_json::json!({
            "model": "m",
            "systemInstruction": "Translate the input.\nAnswer in French.",
            "contents": [{"role": "user", "parts": [{"text": "hello"}]}]
        })
    );
    assert_eq!(file["interactions"][0]["response"][0]["text"], "bonjour");

    // Replayed with the same processors: the same processed request matches, the recorded
    // answer goes through the response processor again.
    let cassette = Cassette::open(&path, CassetteMode::Replay).unwrap();
    let replayed = translator().build(cassette.model("m"));
    assert_eq!(run(&replayed, "hello").await.unwrap(), "BONJOUR");
    assert_eq!(cassette.unused().await, Vec::<usize>::new());
    assert_eq!(live.calls(), 1, "the replay made no live call");

    // Without the request processor, the request is not the recorded one: a miss.
    let cassette = Cassette::open(&path, CassetteMode::Replay).unwrap();
    let unprocessed = AgentBuilder::new("translator")
        .instruction("Translate the input.")
        .response_processor(Shout)
        .build(cassette.model("m"));
    assert_eq!(
        run(&unprocessed, "hello").await.unwrap_err(),
        format!(
            "agent `translator`: the model call failed: the cassette `{}` has no recorded \
             answer for a request to m (\"hello\"); the nearest recorded request (interaction \
             0) differs at `systemInstruction`: recorded \"Translate the input.\\nAnswer in \
             French.\", got \"Translate the input.\"",
            path.display()
        )
    );
    assert_eq!(cassette.unused().await, vec![0]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn processed_llm_without_response_processors_streams_as_it_comes() {
    let model = Scripted::new("m", vec![ok("salut")]);
    let mut requests = RequestProcessorChain::new();
    requests.add(InstructionInserter::new("Be brief."));
    let llm = ProcessedLlm::new(
        model.clone() as Arc<dyn BaseLlm>,
        requests,
        ResponseProcessorChain::new(),
    );
    assert_eq!(llm.model_id(), "m");
    let answer = llm.generate(LlmRequest::new("m").user("hi")).await.unwrap();
    assert_eq!(answer.text, "salut");
    assert_eq!(
        model.requests()[0].system_instruction.as_deref(),
        Some("Be brief.")
    );
}
