//! `reel eval SUITE DIR…`: a suite of criteria (the seed's `E::`) scored over recordings,
//! in parallel, reported as Markdown (the default: a pull-request comment), JSON, JUnit XML
//! or TRX (`reel_eval`).
//!
//! The suite is a JSON file (`docs/cli.md`, "reel eval"). Its judge, for model-judged
//! criteria, answers from the cassette the suite names: by default in replay mode, so a run
//! is offline and makes no model call; `--judge auto` or `--judge record` asks Gemini
//! (`GEMINI_API_KEY`) for what the cassette does not hold and records it.
//!
//! Exit codes: 0 every case passed on every recording; 1 a case failed; 2 something could
//! not be evaluated (a recording that cannot be read, a judge that gave no score, a bad
//! suite): partial is never reported as a pass.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use reel_eval::export::{Format, render};
use reel_eval::{EvalOptions, Judge, PriceTable, Suite, evaluate};
use reel_llm::{BaseLlm, Cassette, CassetteMode, GeminiLlm, LlmInterceptor};

use super::{CliError, print_stdout};

/// Arguments of `reel eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The suite file (JSON: name, cases, optional judge and prices).
    suite: PathBuf,
    /// Recordings: directories (searched recursively for `*.wire.jsonl`, `*.trace.json`,
    /// `*.cassette.json`) or files.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The report's format.
    #[arg(long, value_enum, default_value = "markdown")]
    format: EvalFormat,
    /// Write the report into this file (and a one-line summary on standard output).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Recordings evaluated at once (default: the machine's cores).
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// A price table (JSON), replacing the suite's: each recording's cost in the report.
    #[arg(long, value_name = "FILE")]
    prices: Option<PathBuf>,
    /// How the judge's cassette is used: `replay` (offline; a call it does not hold is an
    /// error), `auto` (ask Gemini for what it lacks and record it) or `record` (ask Gemini
    /// for everything, replacing the cassette). `auto` and `record` need GEMINI_API_KEY.
    #[arg(long, value_name = "MODE", default_value = "replay")]
    judge: CassetteMode,
}

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EvalFormat {
    /// Markdown, for a pull-request comment.
    Markdown,
    /// The report as JSON.
    Json,
    /// JUnit XML.
    Junit,
    /// Visual Studio TRX.
    Trx,
}

impl From<EvalFormat> for Format {
    fn from(format: EvalFormat) -> Self {
        match format {
            EvalFormat::Markdown => Format::Markdown,
            EvalFormat::Json => Format::Json,
            EvalFormat::Junit => Format::Junit,
            EvalFormat::Trx => Format::Trx,
        }
    }
}

/// Runs the suite over the inputs and writes the report.
pub fn run(args: EvalArgs) -> Result<ExitCode, CliError> {
    let mut suite = Suite::from_json_file(&args.suite)?;
    if let Some(path) = &args.prices {
        suite.set_prices(PriceTable::from_json_file(path)?);
    }
    if let Some(spec) = suite.judge_spec().cloned() {
        let judge_error = |message: String| CliError::Judge {
            path: spec.cassette.display().to_string(),
            message,
        };
        // Sorted by request: recordings are judged at once, so their judge calls finish in
        // any order; sorted, a recorded cassette is the same file every run (decision 0071).
        let cassette = Cassette::builder(&spec.cassette, args.judge)
            .sorted_by_request(true)
            .open()
            .map_err(|error| judge_error(error.to_string()))?;
        let judge = match args.judge {
            CassetteMode::Replay => Judge::from_cassette(&cassette, &spec.model),
            CassetteMode::Auto | CassetteMode::Record => {
                let live: Arc<dyn BaseLlm> = Arc::new(
                    GeminiLlm::from_env(&spec.model)
                        .map_err(|error| judge_error(error.to_string()))?,
                );
                Judge::new(cassette.wrap(live))
            }
        };
        suite.set_judge(judge);
    }
    let options = EvalOptions {
        jobs: args.jobs.unwrap_or(EvalOptions::default().jobs),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.jobs.get())
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let report = runtime.block_on(evaluate(&suite, &args.inputs, options))?;
    let text = render(&report, args.format.into());
    match &args.out {
        None => print_stdout(&text)?,
        Some(path) => {
            std::fs::write(path, &text).map_err(|error| {
                CliError::Output(std::io::Error::new(
                    error.kind(),
                    format!("{}: {error}", path.display()),
                ))
            })?;
            let s = &report.summary;
            print_stdout(&format!(
                "reel eval {}: {} of {} cases passed, {} failed, {} errors, {} unreadable recordings; report in {}\n",
                super::terminal::visible(&report.suite),
                s.passed,
                s.cases,
                s.failed,
                s.errors,
                s.unreadable,
                path.display()
            ))?;
        }
    }
    Ok(if report.has_errors() {
        ExitCode::from(2)
    } else if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
