//! `reel flow check LOG FLOW.json`: a recorded session scored against a flow, offline —
//! the tool calls the flow refuses (with the sequence number of the frame that carried
//! each), every step's verdict, completion. `reel flow mermaid FLOW.json`: the flow's graph.
//!
//! Nothing is replayed: the calls and responses are read from the wire log, the state from
//! the journal recorded beside it (`X.journal.jsonl` for `X.wire.jsonl`, or `--journal`),
//! and both are run through the flow's monitor in observe mode (`reel_flow::score`).
//! Exit 0 when every call was admissible, 1 when the flow refuses one, 2 on bad input (a
//! recording, or a flow file that does not read or compile).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use reel_flow::score::{Score, flow_beside, journal_beside, score_entries};
use reel_flow::{CompiledFlow, Flow, Verdict};
use serde::Serialize;

use super::input::{WireInput, read_journal};
use super::{CliError, plural, print_stdout, print_text};

/// Arguments of `reel flow`.
#[derive(Debug, Args)]
pub struct FlowArgs {
    #[command(subcommand)]
    command: FlowCommand,
}

#[derive(Debug, Subcommand)]
enum FlowCommand {
    /// Score a recorded session against a flow: the calls it refuses, each step's verdict,
    /// completion (exit 1 when a call is refused).
    Check(CheckArgs),
    /// Print a flow file's graph as a Mermaid flowchart.
    Mermaid(MermaidArgs),
}

/// Arguments of `reel flow check`.
#[derive(Debug, Args)]
struct CheckArgs {
    /// The session's wire log.
    log: String,
    /// The flow file (JSON; see `flow/README.md`); default: `X.flow.json` beside
    /// `X.wire.jsonl`, which a governed session writes.
    flow: Option<String>,
    /// The session's journal (default: `X.journal.jsonl` beside `X.wire.jsonl`, if there).
    #[arg(long)]
    journal: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Read a damaged log or journal up to its first bad line.
    #[arg(long)]
    salvage: bool,
}

/// Arguments of `reel flow mermaid`.
#[derive(Debug, Args)]
struct MermaidArgs {
    /// The flow file.
    flow: String,
}

/// Runs the subcommand.
pub fn run(args: FlowArgs) -> Result<ExitCode, CliError> {
    match args.command {
        FlowCommand::Check(args) => check(args),
        FlowCommand::Mermaid(args) => {
            let (flow, _) = read_flow(&args.flow)?;
            print_stdout(&flow.to_mermaid())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Reads and compiles the flow file at `path`.
fn read_flow(path: &str) -> Result<(Flow, CompiledFlow), CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_owned(),
        source,
    })?;
    let bad = |source| CliError::Flow {
        path: path.to_owned(),
        source,
    };
    let flow = Flow::from_json(&text).map_err(bad)?;
    let compiled = flow.compile().map_err(bad)?;
    Ok((flow, compiled))
}

/// `reel flow check --json`.
#[derive(Serialize)]
struct CheckJson<'a> {
    log: &'a str,
    flow: &'a str,
    journal: Option<&'a str>,
    /// `conforms` or `violated`.
    verdict: &'static str,
    #[serde(flatten)]
    score: &'a Score,
}

fn check(args: CheckArgs) -> Result<ExitCode, CliError> {
    let flow_path = match &args.flow {
        Some(path) => path.clone(),
        None => {
            let expected = flow_beside(Path::new(&args.log));
            if !expected.is_file() {
                return Err(CliError::NoFlowBeside {
                    log: args.log.clone(),
                    expected: expected.display().to_string(),
                });
            }
            expected.display().to_string()
        }
    };
    let (_, flow) = read_flow(&flow_path)?;
    let entries = WireInput::open(&args.log)?
        .salvaging(args.salvage)
        .collect::<Result<Vec<_>, _>>()?;
    let journal = args.journal.clone().or_else(|| {
        journal_beside(Path::new(&args.log)).and_then(|p| p.to_str().map(str::to_owned))
    });
    let mut mutations = Vec::new();
    if let Some(journal) = &journal {
        read_journal(journal, args.salvage, Some(&mut mutations))?;
    }
    let score = score_entries(&entries, &mutations, &flow);
    if args.json {
        let report = CheckJson {
            log: &args.log,
            flow: &flow_path,
            journal: journal.as_deref(),
            verdict: if score.conforms() {
                "conforms"
            } else {
                "violated"
            },
            score: &score,
        };
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        print_text(&render(
            &args,
            &flow_path,
            journal.as_deref(),
            &flow,
            &score,
        ))?;
    }
    Ok(if score.conforms() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pending => "pending",
        Verdict::Active => "active",
        Verdict::Done => "done",
        Verdict::Skipped => "skipped",
    }
}

fn render(
    args: &CheckArgs,
    flow_path: &str,
    journal: Option<&str>,
    flow: &CompiledFlow,
    score: &Score,
) -> String {
    let mut out = String::new();
    let steps = flow.flow().steps.len() as u64;
    let _ = writeln!(out, "  reel flow check — {}\n", args.log);
    let _ = writeln!(
        out,
        "  Flow:       {} ({})",
        flow_path,
        plural(steps, "step", "steps")
    );
    let _ = match journal {
        Some(journal) => writeln!(
            out,
            "  Journal:    {journal} ({})",
            plural(score.journal_entries, "mutation", "mutations")
        ),
        None => writeln!(
            out,
            "  Journal:    none beside the log: guards read an empty state"
        ),
    };
    let refused = score.violations.len() as u64;
    let _ = writeln!(
        out,
        "  Tool calls: {}, {refused} refused by the flow\n",
        score.tool_calls
    );
    let width = flow
        .flow()
        .steps
        .iter()
        .map(|s| s.id.len())
        .max()
        .unwrap_or(0);
    let _ = writeln!(out, "  Steps:");
    for verdict in &score.verdicts {
        let _ = writeln!(
            out,
            "    {:width$}  {}",
            verdict.step,
            verdict_word(verdict.verdict)
        );
    }
    if !score.violations.is_empty() {
        let _ = writeln!(out, "\n  Violations:");
        for violation in &score.violations {
            let call = violation
                .call_id
                .as_deref()
                .map_or_else(String::new, |id| format!(" ({id})"));
            let _ = writeln!(
                out,
                "    frame {}  {}{call}: {}",
                violation.seq, violation.tool, violation.reason
            );
        }
    }
    let complete = if score.complete {
        "yes".to_owned()
    } else if score.unmet_requirements.is_empty() {
        "no".to_owned()
    } else {
        format!("no — missing: {}", score.unmet_requirements.join(", "))
    };
    let _ = writeln!(out, "\n  Complete:   {complete}\n");
    if score.conforms() {
        let _ = writeln!(
            out,
            "  CONFORMS — every tool call was admissible under the flow."
        );
    } else {
        let _ = writeln!(
            out,
            "  VIOLATED — the flow refuses {}.",
            plural(refused, "call", "calls")
        );
    }
    out
}
