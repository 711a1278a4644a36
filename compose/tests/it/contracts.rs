//! check_contracts catches each wiring mistake at build time with its exact error;
//! infer_data_flow and diagnose read the same walk.

use reel_compose::{
    A, AgentBuilder, C, Composable, ContractViolation, DataFlowEdge, P, S, check_contracts,
    check_contracts_with, diagnose, diagnose_with, infer_data_flow, review_loop, until_state,
};

fn agent(name: &str) -> AgentBuilder {
    AgentBuilder::new(name)
}

#[test]
fn a_reader_with_no_writer_upstream() {
    let tree = agent("writer").output_key("draft") >> agent("editor").reads(["draft", "style"]);
    let violations = check_contracts(&tree);
    assert_eq!(
        violations,
        [ContractViolation::UnsatisfiedRead {
            agent: "editor".into(),
            key: "style".into()
        }]
    );
    assert_eq!(
        violations[0].to_string(),
        "agent `editor` reads `style`, which nothing upstream writes"
    );
    // Given by the caller, it is satisfied.
    assert_eq!(check_contracts_with(&tree, &["style"]), []);
    // A reader before its writer is not satisfied either.
    let backwards = agent("editor").reads(["draft"]) >> agent("writer").output_key("draft");
    assert_eq!(
        check_contracts(&backwards),
        [ContractViolation::UnsatisfiedRead {
            agent: "editor".into(),
            key: "draft".into()
        },]
    );
}

#[test]
fn a_write_nobody_reads() {
    let tree = agent("a").writes(["notes", "used"]) >> agent("b").reads(["used"]) >> agent("c");
    let violations = check_contracts(&tree);
    assert_eq!(
        violations,
        [ContractViolation::UnreadWrite {
            agent: "a".into(),
            key: "notes".into()
        }]
    );
    assert_eq!(
        violations[0].to_string(),
        "agent `a` writes `notes`, which nothing downstream reads"
    );
    assert!(!violations[0].is_error());
    // The last step's writes are the tree's results.
    assert_eq!(
        check_contracts(&(agent("a") >> agent("z").output_key("result"))),
        []
    );
}

#[test]
fn two_parallel_branches_writing_one_key() {
    let tree = (agent("tech").output_key("view") | agent("biz").output_key("view"))
        >> agent("merge").reads(["view"]);
    let violations = check_contracts(&tree);
    assert_eq!(
        violations,
        [ContractViolation::ParallelWriteConflict {
            key: "view".into(),
            first: "tech".into(),
            second: "biz".into()
        }]
    );
    assert_eq!(
        violations[0].to_string(),
        "parallel branches `tech` and `biz` both write `view`"
    );
}

#[test]
fn a_branch_reading_what_its_sibling_writes() {
    let tree = (agent("fetch").output_key("data") | agent("use").reads(["data"]))
        >> agent("end").reads(["data"]);
    assert_eq!(
        check_contracts(&tree),
        [ContractViolation::SiblingRead {
            reader: "use".into(),
            writer: "fetch".into(),
            key: "data".into()
        }]
    );
    assert_eq!(
        check_contracts(&tree)[0].to_string(),
        "agent `use` reads `data`, which its parallel sibling `fetch` writes at the same time"
    );
}

#[test]
fn loops_see_their_own_writes_and_artifacts_and_context_count() {
    let writer = agent("writer").reads(["quality"]).output_key("draft");
    let reviewer = agent("reviewer").reads(["draft"]);
    assert_eq!(
        check_contracts(&review_loop(writer, reviewer, "quality", "good", 3)),
        []
    );

    let tree: Composable = agent("greeter")
        .instruction(P::with_state(&["user:name"]))
        .into();
    assert_eq!(
        check_contracts(&tree),
        [ContractViolation::UnsatisfiedRead {
            agent: "greeter".into(),
            key: "user:name".into()
        }]
    );

    let tree = agent("extract").artifacts(A::json_output("claims", "Claims"))
        >> S::rename(&[("claims", "facts")])
        >> agent("report").context(C::from_state(&["facts"]));
    assert_eq!(check_contracts(&tree), []);
    assert_eq!(
        infer_data_flow(&tree),
        [
            DataFlowEdge {
                from: "extract".into(),
                to: "S::rename(claims->facts)".into(),
                key: "claims".into()
            },
            DataFlowEdge {
                from: "S::rename(claims->facts)".into(),
                to: "report".into(),
                key: "facts".into()
            },
        ]
    );
}

#[test]
fn diagnose_reports_shape_flow_and_violations() {
    let tree = agent("a").output_key("x").writes(["unused"])
        >> (agent("b").reads(["x"]).output_key("y") | agent("c").reads(["z"]).output_key("y"))
        >> agent("d").reads(["y"]);
    assert_eq!(
        diagnose(&tree),
        "tree: a >> (b | c) >> d\n\
         data flow:\n  a -> b (x)\n  b -> d (y)\n  c -> d (y)\n\
         contracts:\n  \
         error: parallel branches `b` and `c` both write `y`\n  \
         error: agent `c` reads `z`, which nothing upstream writes\n  \
         warning: agent `a` writes `unused`, which nothing downstream reads\n"
    );
}

#[test]
fn diagnose_with_counts_the_given_keys_as_written() {
    let tree =
        agent("extract").reads(["document"]).output_key("facts") >> agent("check").reads(["facts"]);
    assert_eq!(
        diagnose(&tree),
        "tree: extract >> check\ndata flow:\n  extract -> check (facts)\n\
         contracts:\n  error: agent `extract` reads `document`, which nothing upstream writes\n"
    );
    assert_eq!(
        diagnose_with(&tree, &["document"]),
        "tree: extract >> check\ndata flow:\n  extract -> check (facts)\ncontracts: ok\n"
    );
}

#[test]
fn a_loops_until_predicate_reads_its_key() {
    let tree = (agent("w").output_key("done") * until_state(S::is_true("done"))) >> agent("next");
    assert_eq!(check_contracts(&tree), []);
    assert_eq!(
        infer_data_flow(&tree),
        [DataFlowEdge {
            from: "w".into(),
            to: "S::is_true(done)".into(),
            key: "done".into()
        }]
    );
    // A loop waiting on a key nothing writes runs to its bound.
    let tree = agent("w") * until_state(S::eq("ready", "yes"));
    assert_eq!(
        check_contracts(&tree),
        [ContractViolation::UnsatisfiedRead {
            agent: "S::eq(ready, yes)".into(),
            key: "ready".into()
        }]
    );
}
