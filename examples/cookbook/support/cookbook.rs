//! What every cookbook example shares: where its models come from (the bundled cassette,
//! offline, by default; the Gemini REST API with `--live`, recorded with `--record PATH`),
//! the log of the choices it makes by timing (`NN_name.decisions.json` beside the cassette,
//! for races and deadlines) and its `main`.
//!
//! An example is an `async fn run(models: &Models) -> Result<String, Box<dyn Error>>`
//! returning what it prints; [`main`] parses the arguments, builds the [`Models`] and
//! prints the result. A test runs the same `run` with a scripted model to make the bundled
//! cassette and with the bundled cassette to check the printed text.

use std::error::Error;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use reel::agents::{DecisionFile, Decisions};
use reel::llm::{BaseLlm, Cassette, CassetteMode, GeminiLlm, LlmInterceptor};

/// The model the cookbook's agents ask unless an example says otherwise.
pub const MODEL: &str = "gemini-2.5-flash";

/// The bundled cassette of the example `name` (`assets/cookbook/{name}.cassette.json`).
pub fn bundled_cassette(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/cookbook")
        .join(format!("{name}.cassette.json"))
}

/// Where an example's model calls go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Answered from the bundled cassette, offline: a call it does not hold is an error,
    /// never a call out.
    Bundled,
    /// The Gemini REST API (the key from the environment), recorded into a cassette at
    /// `record` if given.
    Live {
        /// Where to record the calls.
        record: Option<PathBuf>,
    },
}

/// The decisions log that goes with the cassette at `cassette` (`X.decisions.json` beside
/// `X.cassette.json`), replaying: empty when there is no such file, so an example that
/// decides nothing by timing needs none.
fn replayed_decisions(cassette: &Path) -> Result<Decisions, String> {
    let path = Decisions::path_beside(cassette);
    if path.exists() {
        Decisions::open(path).map_err(|error| error.to_string())
    } else {
        Ok(Decisions::replay(DecisionFile::default()))
    }
}

/// The models an example asks, by model id, all answered the same way, and the log of the
/// choices its pipeline makes by timing (a race's winner, a deadline), recorded with the
/// calls and replayed with them.
#[derive(Clone)]
pub struct Models {
    source: Source,
    /// The log, or why the bundled one could not be read (an error once it is asked for).
    decisions: Result<Decisions, String>,
}

#[derive(Clone)]
enum Source {
    /// Every model answered from this cassette, with no live model behind it.
    Cassette(Cassette),
    /// Every model live, its calls recorded into the cassette if there is one.
    Live(Option<Cassette>),
    /// Every model built by this function (a test's scripted model), its calls recorded
    /// into the cassette if there is one.
    Scripted(MakeModel, Option<Cassette>),
}

/// Builds a model from its id (a test's scripted model).
type MakeModel = Arc<dyn Fn(&str) -> Arc<dyn BaseLlm> + Send + Sync>;

impl Models {
    /// The models of `target` for the example `name`.
    pub fn for_target(name: &str, target: &Target) -> Result<Models, Box<dyn Error>> {
        let (source, decisions) = match target {
            Target::Bundled => {
                let path = bundled_cassette(name);
                let decisions = Ok(replayed_decisions(&path)?);
                let cassette = Cassette::open(path, CassetteMode::Replay)?;
                (Source::Cassette(cassette), decisions)
            }
            Target::Live { record: None } => (Source::Live(None), Ok(Decisions::record())),
            Target::Live { record: Some(path) } => (
                Source::Live(Some(Cassette::open(path, CassetteMode::Record)?)),
                Ok(Decisions::record()),
            ),
        };
        Ok(Models { source, decisions })
    }

    /// Every model answered from `cassette` alone (a test replaying the bundled cassette),
    /// the decisions replayed from the file beside it (none if there is no such file).
    pub fn replaying(cassette: Cassette) -> Models {
        Models {
            decisions: replayed_decisions(cassette.path()),
            source: Source::Cassette(cassette),
        }
    }

    /// Every model built by `make` from its id, each call recorded into `cassette` if
    /// given (a test making the bundled cassette from a script).
    pub fn scripted(
        make: impl Fn(&str) -> Arc<dyn BaseLlm> + Send + Sync + 'static,
        cassette: Option<Cassette>,
    ) -> Models {
        Models {
            source: Source::Scripted(Arc::new(make), cassette),
            decisions: Ok(Decisions::record()),
        }
    }

    /// The log of the pipeline's timing-dependent choices: replaying with the bundled
    /// cassette (from `NN_name.decisions.json` beside it), recording otherwise. Clones
    /// share the log. An error if the file beside the cassette cannot be read.
    pub fn decisions(&self) -> Result<Decisions, Box<dyn Error>> {
        Ok(self.decisions.clone()?)
    }

    /// The model `id`.
    pub fn get(&self, id: &str) -> Result<Arc<dyn BaseLlm>, Box<dyn Error>> {
        Ok(match &self.source {
            Source::Cassette(cassette) => cassette.model(id),
            Source::Live(record) => {
                let live: Arc<dyn BaseLlm> = Arc::new(GeminiLlm::from_env(id)?);
                match record {
                    Some(cassette) => cassette.wrap(live),
                    None => live,
                }
            }
            Source::Scripted(make, record) => {
                let scripted = make(id);
                match record {
                    Some(cassette) => cassette.wrap(scripted),
                    None => scripted,
                }
            }
        })
    }

    /// The cookbook's default model, [`MODEL`].
    pub fn default_model(&self) -> Result<Arc<dyn BaseLlm>, Box<dyn Error>> {
        self.get(MODEL)
    }

    /// The cassette the calls are answered from or recorded into, if any.
    fn cassette(&self) -> Option<&Cassette> {
        match &self.source {
            Source::Cassette(cassette) => Some(cassette),
            Source::Live(record) | Source::Scripted(_, record) => record.as_ref(),
        }
    }

    /// After a run, for an example that checks its decisions (take the log from
    /// [`Models::decisions`] first): a recorded log is written beside the recording cassette
    /// (if there is one); a replayed one must have been read whole, else the run did not
    /// decide as recorded and this is an error naming the decisions left.
    pub fn keep_decisions(&self, decisions: &Decisions) -> Result<(), Box<dyn Error>> {
        match &self.source {
            Source::Cassette(cassette) => {
                let unused = decisions.unused();
                if !unused.is_empty() {
                    return Err(format!(
                        "{}: decisions {unused:?} were recorded but not made again",
                        Decisions::path_beside(cassette.path()).display()
                    )
                    .into());
                }
            }
            Source::Live(_) | Source::Scripted(..) => {
                if let Some(cassette) = self.cassette() {
                    decisions.save(Decisions::path_beside(cassette.path()))?;
                }
            }
        }
        Ok(())
    }
}

/// The target the command line names: nothing (the bundled cassette), `--live`, or
/// `--live --record PATH`.
pub fn parse_target(args: impl IntoIterator<Item = String>) -> Result<Target, String> {
    let mut live = false;
    let mut record = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--live" => live = true,
            "--record" => {
                record = Some(PathBuf::from(args.next().ok_or("--record needs a path")?));
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}` (try --live, --live --record PATH)"
                ));
            }
        }
    }
    match (live, record) {
        (false, Some(_)) => Err("--record records live calls: add --live".to_owned()),
        (false, None) => Ok(Target::Bundled),
        (true, record) => Ok(Target::Live { record }),
    }
}

/// The `main` of the cookbook example `name`: runs `run` on the models the arguments name
/// and prints what it returns. Exit code 2 for bad arguments, 1 for a failure, each with
/// one line on standard error.
pub fn main<F, Fut>(name: &str, run: F) -> ExitCode
where
    F: FnOnce(Models) -> Fut,
    Fut: Future<Output = Result<String, Box<dyn Error>>>,
{
    main_on_target(|target| async move {
        let models = Models::for_target(name, &target)?;
        let decisions = models.decisions()?;
        let printed = run(models).await?;
        if let Target::Live { record: Some(path) } = &target
            && !decisions.snapshot().decisions.is_empty()
        {
            decisions.save(Decisions::path_beside(path))?;
        }
        Ok(printed)
    })
}

/// The `main` of any cookbook example: runs `run` on the target the arguments name
/// (nothing: offline; `--live`; `--live --record PATH`) on a tokio runtime and prints what
/// it returns. Exit code 2 for bad arguments, 1 for a failure, each with one line on
/// standard error.
pub fn main_on_target<F, Fut>(run: F) -> ExitCode
where
    F: FnOnce(Target) -> Fut,
    Fut: Future<Output = Result<String, Box<dyn Error>>>,
{
    let target = match parse_target(std::env::args().skip(1)) {
        Ok(target) => target,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(target)) {
        Ok(printed) => {
            print!("{printed}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
