//! The `main` of an example: parse the arguments, run the async part on a tokio runtime,
//! and turn the outcome into an exit code — 2 for bad arguments, 1 for a failure, each
//! with one line on standard error.

use std::error::Error;
use std::future::Future;
use std::process::ExitCode;

/// Runs `run(args)` for the arguments `parse` accepted, then `report`s its result.
pub fn main_of<A, T, Fut>(
    parse: impl FnOnce() -> Result<A, String>,
    run: impl FnOnce(A) -> Fut,
    report: impl FnOnce(T),
) -> ExitCode
where
    Fut: Future<Output = Result<T, Box<dyn Error>>>,
{
    let args = match parse() {
        Ok(args) => args,
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
    match runtime.block_on(run(args)) {
        Ok(outcome) => {
            report(outcome);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
