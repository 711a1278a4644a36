//! ApprovalTextAgent: the pipeline waits for the approver's decision, goes on when it
//! approves, fails with who rejected it and why, and a replay decides as the person did
//! without asking anyone.

use std::sync::Arc;

use reel_actors::state::State;
use reel_agents::{
    AgentError, Approval, ApprovalTextAgent, Choice, Decisions, FnTextAgent, SequentialTextAgent,
    SharedAgent, TextAgent,
};
use tokio::sync::{mpsc, oneshot};

type Asked = mpsc::UnboundedReceiver<(String, oneshot::Sender<Approval>)>;

/// `draft >> approval >> publish`, the approval asking through a channel (as a UI would).
fn pipeline(approval: ApprovalTextAgent) -> SequentialTextAgent {
    let draft: SharedAgent = Arc::new(FnTextAgent::new("draft", |_: &State| {
        Ok("Refunds take five days.".to_owned())
    }));
    let publish: SharedAgent = Arc::new(FnTextAgent::new_async(
        "publish",
        |state: State| async move {
            let text = state.get::<String>("input").unwrap_or_default();
            state
                .set("published", &text)
                .await
                .map_err(|e| AgentError::failed("publish", e))?;
            Ok(format!("published: {text}"))
        },
    ));
    SequentialTextAgent::new("reply", vec![draft, Arc::new(approval), publish])
}

fn asking() -> (ApprovalTextAgent, Asked) {
    let (tx, rx) = mpsc::unbounded_channel();
    let approval = ApprovalTextAgent::new("approval", move |text: String| {
        let tx = tx.clone();
        async move {
            let (answer, decided) = oneshot::channel();
            let _ = tx.send((text, answer));
            decided
                .await
                .unwrap_or_else(|_| Approval::reject("nobody", "the approver went away"))
        }
    });
    (approval, rx)
}

#[tokio::test]
async fn the_pipeline_waits_for_the_decision_and_resumes_on_approval() {
    let (approval, mut asked) = asking();
    let decisions = Decisions::record();
    let pipeline = pipeline(approval.decisions(decisions.clone()));
    let state = State::new();
    let running = tokio::spawn({
        let state = state.clone();
        async move { pipeline.run(&state).await }
    });
    let (text, answer) = asked.recv().await.unwrap();
    assert_eq!(text, "Refunds take five days.");
    // Asked and not yet answered: nothing after the approval has run.
    assert_eq!(state.get::<String>("published"), None);
    assert!(!running.is_finished());
    answer.send(Approval::approve("editor", "fine")).unwrap();
    assert_eq!(
        running.await.unwrap().unwrap(),
        "published: Refunds take five days."
    );
    assert_eq!(
        state.get_raw("approval:approval"),
        Some(serde_json::json!({"approved": true, "by": "editor", "note": "fine"}))
    );
    assert_eq!(
        serde_json::to_value(decisions.snapshot()).unwrap(),
        serde_json::json!({"version": 1, "decisions": [
            {"agent": "approval", "kind": "approval", "approved": true, "by": "editor", "note": "fine"}
        ]})
    );
}

#[tokio::test]
async fn a_rejection_stops_the_pipeline_with_who_and_why() {
    let approval = ApprovalTextAgent::new("approval", |_| async {
        Approval::reject("legal", "promise no dates")
    });
    let state = State::new();
    let error = pipeline(approval).run(&state).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent `approval`: rejected by legal: promise no dates"
    );
    assert_eq!(state.get::<String>("published"), None);
}

#[tokio::test]
async fn a_replay_decides_as_the_person_did_and_asks_nobody() {
    let recorded = Decisions::record();
    recorded.note(
        "approval",
        Choice::Approval {
            approved: false,
            by: "legal".into(),
            note: "promise no dates".into(),
        },
    );
    let replay = Decisions::replay(recorded.snapshot());
    let approval = ApprovalTextAgent::new("approval", |_| async {
        panic!("a replay asked the approver")
    })
    .decisions(replay.clone());
    let error = pipeline(approval).run(&State::new()).await.unwrap_err();
    assert!(matches!(
        error,
        AgentError::Rejected { ref by, ref reason, .. } if by == "legal" && reason == "promise no dates"
    ));
    assert_eq!(replay.unused(), Vec::<usize>::new());
}
