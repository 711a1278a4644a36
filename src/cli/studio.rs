//! `reel studio [DIR]`: the recordings of a directory in a local web page
//! (`reel::studio`), until Ctrl-C, SIGTERM or SIGHUP.
//!
//! Listens on `127.0.0.1` (any free port unless `--port`); another address only when
//! `--host` names it, with a warning, and then every request needs the token. Prints the
//! address and the run's token (a live feed presents it). Exit 0 when stopped, 2 when the
//! directory cannot be read or the address cannot be bound.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::stop_signal::StopSignal;
use super::{CliError, plural};
use reel::studio::catalog;
use reel::studio::{DEFAULT_MAX_FEED_BYTES, RunningStudio, StudioOptions};

/// Arguments of `reel studio`.
#[derive(Debug, Args)]
pub struct StudioArgs {
    /// Where `s3://` paths are read from.
    #[command(flatten)]
    s3: super::S3Args,
    /// The directory of recordings (`*.wire.jsonl`, with their `*.journal.jsonl`), or an
    /// `s3://bucket/prefix/` whose recordings are copied to a local directory at start.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on. The studio serves recordings: anything but loopback must be
    /// asked for by name.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    host: String,
    /// Also let web pages of this origin use the studio (`https://app.example`); repeat for
    /// several. Any other `Origin` but the studio's own is refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// The most bytes one live feed may write; then it is closed and its recording ends
    /// there.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FEED_BYTES)]
    max_feed_bytes: u64,
    /// Print JSON lines on standard output instead of text: `ready` (the address, the
    /// token, the recordings listed), then `stopped`.
    #[arg(long)]
    json: bool,
}

/// Serves the studio until Ctrl-C or SIGTERM.
pub fn run(args: StudioArgs) -> Result<ExitCode, CliError> {
    args.s3.apply();
    // An `s3://` prefix is copied, streamed, to a directory of this run's own, and served
    // from there: a snapshot of the prefix as it was when the studio started.
    let staged = Staged::for_input(&args.dir)?;
    let dir = staged
        .as_ref()
        .map_or_else(|| args.dir.clone(), |staged| staged.dir.clone());
    let listed = match catalog::list(&dir) {
        Ok(listed) => listed,
        Err(error) => {
            eprintln!("reel studio: cannot read {}: {error}", args.dir.display());
            return Ok(ExitCode::from(2));
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(async {
        let mut stop = match StopSignal::listen() {
            Ok(stop) => stop,
            Err(error) => {
                eprintln!("reel studio: cannot listen for Ctrl-C and SIGTERM: {error}");
                return Ok(ExitCode::from(2));
            }
        };
        let host = if args.host.contains(':') && !args.host.starts_with('[') {
            format!("[{}]", args.host)
        } else {
            args.host.clone()
        };
        let options = StudioOptions {
            allowed_origins: args.allow_origins.clone(),
            max_feed_bytes: args.max_feed_bytes,
            token: None,
        };
        let addr = format!("{host}:{}", args.port);
        let studio = match RunningStudio::start_with(&addr, &dir, options).await {
            Ok(studio) => studio,
            Err(error) => {
                eprintln!(
                    "reel studio: cannot listen on {host}:{}: {error}",
                    args.port
                );
                return Ok(ExitCode::from(2));
            }
        };
        let token = studio.token();
        if studio.token_for_everything() {
            eprintln!(
                "reel studio: warning: listening on {}, not loopback: anyone who can reach this port can try it; every request needs the token",
                studio.local_addr()
            );
        }
        if args.json {
            let url = if studio.token_for_everything() {
                format!("{}?token={token}", studio.url())
            } else {
                studio.url()
            };
            let ready = serde_json::json!({
                "event": "ready",
                "url": url,
                "addr": studio.local_addr().to_string(),
                "token": token,
                "token_for_everything": studio.token_for_everything(),
                "dir": args.dir.display().to_string(),
                "recordings": listed.len(),
            });
            println!("{ready}");
            let _ = stop.recv().await;
            studio.stop().await;
            println!("{}", serde_json::json!({"event": "stopped"}));
            return Ok(ExitCode::SUCCESS);
        }
        if studio.token_for_everything() {
            println!(
                "reel studio: {}?token={token} ({} in {})",
                studio.url(),
                plural(listed.len() as u64, "recording", "recordings"),
                args.dir.display()
            );
        } else {
            println!(
                "reel studio: {} ({} in {})",
                studio.url(),
                plural(listed.len() as u64, "recording", "recordings"),
                args.dir.display()
            );
        }
        println!("token: {token}");
        println!(
            "A session streams in live with Live::builder()….studio(\"{}\").studio_token(\"{token}\") (or REEL_STUDIO_TOKEN={token}).",
            studio.local_addr()
        );
        println!("Ctrl-C or SIGTERM to stop.");
        let _ = stop.recv().await;
        studio.stop().await;
        Ok(ExitCode::SUCCESS)
    })
}

/// The local copy of an `s3://` prefix `reel studio` serves, removed when the studio ends.
struct Staged {
    dir: PathBuf,
}

impl Staged {
    /// For an `s3://` input, its recordings copied below a fresh directory; for a local
    /// one, nothing.
    #[cfg(feature = "s3")]
    fn for_input(input: &std::path::Path) -> Result<Option<Staged>, CliError> {
        use reel::recordings::ObjectUrl;
        use reel::recordings::object::Bucket;
        let Some(text) = input.to_str().filter(|text| ObjectUrl::is_object_url(text)) else {
            return Ok(None);
        };
        let url = ObjectUrl::parse(text)?;
        let bucket = Bucket::open(&url, super::s3_endpoint())?;
        let staged = Staged {
            dir: std::env::temp_dir().join(format!("reel-studio-{}", std::process::id())),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(CliError::Runtime)?;
        runtime.block_on(bucket.fetch_all(&url, &staged.dir))?;
        Ok(Some(staged))
    }

    /// Without the `s3` feature, every input is a local directory.
    #[cfg(not(feature = "s3"))]
    fn for_input(_input: &std::path::Path) -> Result<Option<Staged>, CliError> {
        Ok(None)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
