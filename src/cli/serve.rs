//! `reel serve`: the tape server ([`reel_replayer::server`]) on the command line.
//!
//! ```text
//! reel serve --tapes tests/tapes                        # replay
//! reel serve --upstream wss://generativelanguage.googleapis.com --record-dir tapes
//! reel serve --tapes tapes --upstream wss://generativelanguage.googleapis.com   # auto
//! reel serve --tapes tapes --match loose --rules rules.json --speed 1 --tls-self-signed
//! ```
//!
//! Prints the listening URLs on standard output, then one line per finished connection on
//! standard error (a mismatch with its JSON-path diff), and runs until Ctrl-C or SIGTERM,
//! which close every session alike (a recording proxy finishes the current turn and its
//! file first) and print the reports of the sessions they closed.
//!
//! Without `--mode`, the mode follows the arguments: tapes only → replay, `--upstream` only
//! → record, both → auto. Recordings go to `--record-dir`, else the `--tapes` directory,
//! else `./tapes`. Exit codes: 0 after Ctrl-C or SIGTERM, 2 for bad arguments or a server
//! that cannot start (a message on standard error says which).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use reel_replayer::server::{
    MatchRules, Matching, Mode, Pace, RunningServer, SelfSignedCertificate, ServeError,
    TapeLibrary, TapeLoadError, TapeServer, TlsIdentity, Upstream, default_tls_dir,
};

use super::CliError;
use super::stop_signal::StopSignal;

/// Arguments of `reel serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A tape (wire log) to replay; repeat for several.
    #[arg(long = "tape", value_name = "FILE")]
    tapes: Vec<PathBuf>,
    /// A directory of tapes (`*.wire.jsonl`, matched in file-name order).
    #[arg(long = "tapes", value_name = "DIR")]
    tape_dir: Option<PathBuf>,
    /// The API to record through (`wss://generativelanguage.googleapis.com`, or another
    /// `reel serve`); its credential comes from GEMINI_API_KEY / GOOGLE_API_KEY /
    /// GOOGLE_GENAI_USE_VERTEXAI + GOOGLE_ACCESS_TOKEN (none needed on loopback).
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// Also trust the certificates in this PEM file for a `wss://` upstream.
    #[arg(long, value_name = "PEM", requires = "upstream")]
    upstream_ca: Option<PathBuf>,
    /// Where recordings go (`<model>-<n>.wire.jsonl`).
    #[arg(long, value_name = "DIR")]
    record_dir: Option<PathBuf>,
    /// replay, record, or auto (replay when a tape's setup matches, record otherwise).
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// strict: frames must be equal (key casing, order and base64 alphabet aside);
    /// loose: audio/video bytes and the --rules fields are ignored.
    #[arg(long = "match", value_enum, value_name = "HOW")]
    matching: Option<MatchArg>,
    /// Loose-matching rules (JSON: {"defaults": true, "ignore": ["path", ...]}); implies
    /// --match loose.
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// Send recorded frames at the recorded pace times this factor (1 = real time);
    /// without it, at once.
    #[arg(long, value_name = "X")]
    speed: Option<f64>,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    host: String,
    /// TLS certificate chain (PEM); serves wss://.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_key",
        conflicts_with = "tls_self_signed"
    )]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve wss:// with a fresh self-signed certificate for localhost and 127.0.0.1,
    /// written to --tls-dir.
    #[arg(long)]
    tls_self_signed: bool,
    /// Where --tls-self-signed writes cert.pem and key.pem [default: reel-serve-tls in the
    /// system temp directory].
    #[arg(long, value_name = "DIR", requires = "tls_self_signed")]
    tls_dir: Option<PathBuf>,
    /// Seconds a recording proxy keeps reading the upstream for the rest of a turn after
    /// its client left.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    drain_timeout: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    Replay,
    Record,
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum MatchArg {
    Strict,
    Loose,
}

/// Arguments that do not make a server, or a server that cannot start: exit 2.
#[derive(Debug, thiserror::Error)]
enum ServeFailure {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Serve(#[from] ServeError),
}

/// Runs the server until Ctrl-C or SIGTERM.
pub fn run(args: ServeArgs) -> Result<ExitCode, CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(async {
        // Listening before the server starts: a signal sent as soon as the URLs are printed
        // stops it cleanly rather than killing it.
        let stop = match StopSignal::listen() {
            Ok(stop) => stop,
            Err(error) => {
                eprintln!("reel serve: cannot listen for Ctrl-C and SIGTERM: {error}");
                return Ok(ExitCode::from(2));
            }
        };
        match start(args).await {
            Ok(server) => {
                serve_until_stopped(server, stop).await;
                Ok(ExitCode::SUCCESS)
            }
            Err(failure) => {
                eprintln!("reel serve: {failure}");
                Ok(ExitCode::from(2))
            }
        }
    })
}

fn usage(message: impl Into<String>) -> ServeFailure {
    ServeFailure::Usage(message.into())
}

/// Builds and starts the server, and prints where it listens.
async fn start(args: ServeArgs) -> Result<RunningServer, ServeFailure> {
    let has_tapes = !args.tapes.is_empty() || args.tape_dir.is_some();
    let mode = match (args.mode, has_tapes, args.upstream.is_some()) {
        (Some(ModeArg::Replay), _, _) | (None, true, false) => Mode::Replay,
        (Some(ModeArg::Record), _, _) | (None, false, true) => Mode::Record,
        (Some(ModeArg::Auto), _, _) | (None, true, true) => Mode::Auto,
        (None, false, false) => {
            return Err(usage(
                "nothing to serve: give tapes to replay (--tape FILE, --tapes DIR) or an --upstream to record through",
            ));
        }
    };
    if mode == Mode::Replay && !has_tapes {
        return Err(usage("replay mode needs tapes: --tape FILE or --tapes DIR"));
    }
    if mode != Mode::Replay && args.upstream.is_none() {
        return Err(usage(format!(
            "{} mode needs --upstream URL to record through",
            if mode == Mode::Record {
                "record"
            } else {
                "auto"
            }
        )));
    }
    if mode == Mode::Replay && args.upstream.is_some() {
        return Err(usage("--upstream is for record and auto modes, not replay"));
    }
    let matching = match (args.matching, &args.rules) {
        (Some(MatchArg::Strict), Some(_)) => {
            return Err(usage("--rules is for --match loose, not strict"));
        }
        (Some(MatchArg::Strict) | None, None) => Matching::Strict,
        (_, Some(path)) => Matching::Loose(MatchRules::from_file(path).map_err(ServeError::from)?),
        (Some(MatchArg::Loose), None) => Matching::loose(),
    };
    let pace = match args.speed {
        None => Pace::AtOnce,
        Some(speed) if speed.is_finite() && speed > 0.0 => Pace::Recorded { speed },
        Some(speed) => {
            return Err(usage(format!(
                "--speed must be a positive number (1 = recorded pace), not {speed}"
            )));
        }
    };
    if !(args.drain_timeout.is_finite() && args.drain_timeout >= 0.0) {
        return Err(usage(format!(
            "--drain-timeout must be a number of seconds, not {}",
            args.drain_timeout
        )));
    }

    let mut tapes = TapeLibrary::new();
    for tape in &args.tapes {
        tapes.add_file(tape).map_err(ServeError::from)?;
    }
    if let Some(dir) = &args.tape_dir {
        // In auto mode the directory may start empty: recordings will fill it.
        if mode == Mode::Auto && !dir.exists() {
            std::fs::create_dir_all(dir).map_err(|source| ServeError::RecordDir {
                path: dir.clone(),
                source,
            })?;
        }
        let found = tapes.add_dir(dir).map_err(ServeError::from)?;
        if found == 0 && mode == Mode::Replay && args.tapes.is_empty() {
            return Err(ServeError::from(TapeLoadError::NoTapes { path: dir.clone() }).into());
        }
    }
    let tape_count = tapes.len();

    let record_dir = args
        .record_dir
        .clone()
        .or_else(|| args.tape_dir.clone())
        .unwrap_or_else(|| PathBuf::from("tapes"));
    let config = match mode {
        Mode::Replay => TapeServer::replay(tapes),
        Mode::Record | Mode::Auto => {
            let url = args.upstream.as_deref().unwrap_or_default();
            let mut upstream = Upstream::from_env(url).map_err(ServeError::from)?;
            if let Some(ca) = &args.upstream_ca {
                upstream = upstream
                    .with_root_certificates_pem(ca)
                    .map_err(ServeError::from)?;
            }
            if mode == Mode::Record {
                TapeServer::record(upstream, &record_dir)
            } else {
                TapeServer::auto(tapes, upstream, &record_dir)
            }
        }
    };
    let mut config = config
        .host(args.host.clone())
        .port(args.port)
        .matching(matching.clone())
        .pace(pace)
        .drain_timeout(Duration::from_secs_f64(args.drain_timeout));

    let mut trust_lines = Vec::new();
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        config = config.tls(TlsIdentity::from_pem_files(cert, key).map_err(ServeError::from)?);
        trust_lines.push(format!("TLS certificate: {}", cert.display()));
    } else if args.tls_self_signed {
        let generated = SelfSignedCertificate::generate().map_err(ServeError::from)?;
        let dir = args.tls_dir.clone().unwrap_or_else(default_tls_dir);
        let files = generated.write_to(&dir).map_err(ServeError::from)?;
        config = config.tls(generated.identity().clone());
        trust_lines.push(format!(
            "TLS: self-signed certificate for localhost, 127.0.0.1 and ::1: {}",
            files.cert.display()
        ));
        trust_lines.push("trust it in the client:".to_owned());
        trust_lines.extend(
            files
                .trust_hints()
                .into_iter()
                .map(|hint| format!("  {hint}")),
        );
    }

    let server = config.start().await?;
    let what = match mode {
        Mode::Replay => format!("replay mode, {tape_count} tape(s)"),
        Mode::Record => format!(
            "record mode, through {}, into {}",
            args.upstream
                .as_deref()
                .map(reel_protocol::redact_url)
                .unwrap_or_default(),
            record_dir.display()
        ),
        Mode::Auto => format!(
            "auto mode, {tape_count} tape(s), recording the rest through {} into {}",
            args.upstream
                .as_deref()
                .map(reel_protocol::redact_url)
                .unwrap_or_default(),
            record_dir.display()
        ),
    };
    let how = match (&matching, pace) {
        (Matching::Strict, _) => "strict matching",
        (Matching::Loose(_), _) => "loose matching",
    };
    let pace_text = match pace {
        Pace::AtOnce => "frames sent at once".to_owned(),
        Pace::Recorded { speed } => format!("frames at the recorded pace x{speed}"),
    };
    println!("reel serve: {what}; {how}; {pace_text}");
    println!("listening on {}", server.base_url());
    println!("  Google AI: {}", server.live_url());
    println!("  Vertex AI: {}", server.vertex_url());
    let http_base = server
        .base_url()
        .replacen("wss://", "https://", 1)
        .replacen("ws://", "http://", 1);
    println!(
        "  SDK base URL: {http_base} (google-genai http_options base_url, @google/genai httpOptions.baseUrl)"
    );
    if server.is_tls() {
        for line in trust_lines {
            println!("{line}");
        }
    } else {
        println!(
            "  (google-genai uses wss:// whenever it has an API key: for it, add --tls-self-signed)"
        );
    }
    println!("Ctrl-C or SIGTERM to stop.");
    Ok(server)
}

/// Prints each connection's end on standard error until Ctrl-C or SIGTERM, then shuts down:
/// open sessions are finished (recordings flushed and closed) and their reports printed.
async fn serve_until_stopped(mut server: RunningServer, mut stop: StopSignal) {
    // `stop` listens for the whole run: a signal that arrives while a report is being
    // printed is kept for the next `recv`.
    loop {
        tokio::select! {
            report = server.next_report() => match report {
                Some(report) => eprintln!("reel serve: {report}"),
                None => break,
            },
            signal = stop.recv() => {
                if let Err(error) = signal {
                    eprintln!("reel serve: cannot listen for Ctrl-C and SIGTERM ({error}); stopping");
                }
                break;
            }
        }
    }
    eprintln!("reel serve: stopping; finishing open sessions");
    server.shutdown().await;
    while let Some(report) = server.try_next_report() {
        eprintln!("reel serve: {report}");
    }
    eprintln!("reel serve: stopped");
}
