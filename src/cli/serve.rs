//! `reel serve`: the tape server ([`reel_tape_server`]) on the command line.
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
//! → record, both → auto. With `CI` set (as CI services set it), `auto` and `once` only
//! replay unless `--allow-record` is given: a changed prompt fails the test instead of
//! calling the API. Recordings go to `--record-dir`, else the `--tapes` directory, else
//! `./tapes`. With `--json`, standard output carries one JSON object per line: `ready`,
//! one `connection` report per connection, `stopped`. Exit codes: 0 after Ctrl-C or
//! SIGTERM, 2 for bad arguments or a server that cannot start (a message on standard error
//! says which).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use reel_recorder::redact::Redactor;
use reel_tape_server::{
    CassetteLibrary, MatchRules, Matching, Mode, Pace, RunningServer, SelfSignedCertificate,
    ServeError, TapeLibrary, TapeLoadError, TapeServer, TlsIdentity, Upstream, default_tls_dir,
};

use super::stop_signal::StopSignal;
use super::{CliError, plural};

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
    /// replay; record; auto (replay when a tape's setup matches, record otherwise); once
    /// (record a test only when it has no tape, otherwise replay and refuse a miss);
    /// passthrough (forward, record nothing).
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// With CI set, let auto and once record (without it they only replay there).
    #[arg(long)]
    allow_record: bool,
    /// Redaction rules (JSON, a list of {"path", "action"}) applied to what is recorded.
    #[arg(long, value_name = "FILE")]
    redact: Option<PathBuf>,
    /// Print JSON lines on standard output: ready (the URLs), one report per connection,
    /// stopped.
    #[arg(long)]
    json: bool,
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
    /// Seconds a client has, after the WebSocket upgrade, to send its first frame (then it
    /// is closed with 4408).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    setup_timeout: f64,
    /// Also serve web pages of this origin (`https://app.example`); repeat for several. A
    /// request with any other `Origin` header is refused with 403 (the SDKs send none).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    Replay,
    Record,
    Auto,
    Once,
    Passthrough,
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
        let json = args.json;
        match start(args).await {
            Ok(server) => Ok(serve_until_stopped(server, stop, json).await),
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

/// Whether the environment says this is a CI run: `CI` set to anything but empty, `0` or
/// `false` (GitHub Actions, GitLab, CircleCI, Travis and Buildkite set `CI=true`).
fn ci_is_set() -> bool {
    std::env::var("CI").is_ok_and(|value| {
        let value = value.trim();
        !(value.is_empty() || value == "0" || value.eq_ignore_ascii_case("false"))
    })
}

/// The mode the arguments ask for, before CI has its say.
fn requested_mode(args: &ServeArgs, has_tapes: bool) -> Result<Mode, ServeFailure> {
    Ok(match (args.mode, has_tapes, args.upstream.is_some()) {
        (Some(ModeArg::Replay), _, _) | (None, true, false) => Mode::Replay,
        (Some(ModeArg::Record), _, _) | (None, false, true) => Mode::Record,
        (Some(ModeArg::Auto), _, _) | (None, true, true) => Mode::Auto,
        (Some(ModeArg::Once), _, _) => Mode::Once,
        (Some(ModeArg::Passthrough), _, _) => Mode::Passthrough,
        (None, false, false) => {
            return Err(usage(
                "nothing to serve: give tapes to replay (--tape FILE, --tapes DIR) or an --upstream to record through",
            ));
        }
    })
}

/// Checks that the arguments fit the mode.
fn check_mode_arguments(args: &ServeArgs, mode: Mode, has_tapes: bool) -> Result<(), ServeFailure> {
    if mode == Mode::Replay && !has_tapes {
        return Err(usage("replay mode needs tapes: --tape FILE or --tapes DIR"));
    }
    if mode != Mode::Replay && args.upstream.is_none() {
        return Err(usage(format!(
            "{} mode needs --upstream URL to record through",
            mode.as_str()
        )));
    }
    if mode == Mode::Replay && args.upstream.is_some() {
        return Err(usage(
            "--upstream is for record, auto, once and passthrough modes, not replay",
        ));
    }
    if mode == Mode::Passthrough && (has_tapes || args.record_dir.is_some()) {
        return Err(usage(
            "passthrough mode records nothing and replays nothing: drop --tape, --tapes and --record-dir",
        ));
    }
    if args.redact.is_some() && !mode.records() {
        return Err(usage(format!(
            "--redact applies to what is recorded, and {} mode records nothing",
            mode.as_str()
        )));
    }
    Ok(())
}

/// Builds and starts the server, and prints where it listens.
async fn start(args: ServeArgs) -> Result<RunningServer, ServeFailure> {
    let has_tapes = !args.tapes.is_empty() || args.tape_dir.is_some();
    let requested = requested_mode(&args, has_tapes)?;
    check_mode_arguments(&args, requested, has_tapes)?;
    // In CI, nothing records by accident: auto and once only replay there.
    let ci_replay_only =
        matches!(requested, Mode::Auto | Mode::Once) && !args.allow_record && ci_is_set();
    let mode = if ci_replay_only {
        Mode::Replay
    } else {
        requested
    };
    if ci_replay_only {
        eprintln!(
            "reel serve: CI is set: {} mode only replays here (a client no tape matches is refused with 4004); --allow-record to record",
            requested.as_str()
        );
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
    if !(args.setup_timeout.is_finite() && args.setup_timeout > 0.0) {
        return Err(usage(format!(
            "--setup-timeout must be a positive number of seconds, not {}",
            args.setup_timeout
        )));
    }
    let redactor = match &args.redact {
        Some(path) => Some(read_redactor(path)?),
        None => None,
    };

    let mut tapes = TapeLibrary::new();
    for tape in &args.tapes {
        tapes.add_file(tape).map_err(ServeError::from)?;
    }
    if let Some(dir) = &args.tape_dir {
        // Recording modes may start with an empty directory: recordings will fill it; and a
        // CI run of one of them replays whatever is there, nothing included.
        let may_start_empty = requested.records() && requested != Mode::Record;
        if may_start_empty && !dir.exists() {
            std::fs::create_dir_all(dir).map_err(|source| ServeError::RecordDir {
                path: dir.clone(),
                source,
            })?;
        }
        let found = tapes.add_dir(dir).map_err(ServeError::from)?;
        if found == 0 && requested == Mode::Replay && args.tapes.is_empty() {
            return Err(ServeError::from(TapeLoadError::NoTapes { path: dir.clone() }).into());
        }
    }
    let tape_count = tapes.len();
    // The REST calls answered beside Live: the cassettes in the tapes directory.
    let cassettes = match &args.tape_dir {
        Some(dir) => CassetteLibrary::open_dir(dir).map_err(|error| usage(error.to_string()))?,
        None => CassetteLibrary::new(),
    };
    let rest_calls = cassettes.calls();

    let record_dir = args
        .record_dir
        .clone()
        .or_else(|| args.tape_dir.clone())
        .unwrap_or_else(|| PathBuf::from("tapes"));
    let config = match mode {
        Mode::Replay => TapeServer::replay(tapes),
        Mode::Record | Mode::Auto | Mode::Once | Mode::Passthrough => {
            let url = args.upstream.as_deref().unwrap_or_default();
            let mut upstream = Upstream::from_env(url).map_err(ServeError::from)?;
            if let Some(ca) = &args.upstream_ca {
                upstream = upstream
                    .with_root_certificates_pem(ca)
                    .map_err(ServeError::from)?;
            }
            match mode {
                Mode::Record => TapeServer::record(upstream, &record_dir),
                Mode::Auto => TapeServer::auto(tapes, upstream, &record_dir),
                Mode::Once => TapeServer::once(tapes, upstream, &record_dir),
                _ => TapeServer::passthrough(upstream),
            }
        }
    };
    let mut config = config
        .cassettes(cassettes)
        .host(args.host.clone())
        .port(args.port)
        .matching(matching.clone())
        .pace(pace)
        // Every report is printed: a burst of sessions ending at once waits for the printer.
        .keep_every_report(true)
        .drain_timeout(Duration::from_secs_f64(args.drain_timeout))
        .setup_timeout(Duration::from_secs_f64(args.setup_timeout));
    for origin in &args.allow_origins {
        config = config.allow_origin(origin);
    }
    if let Some(redactor) = redactor {
        config = config.redact(redactor);
    }

    let mut trust_lines = Vec::new();
    let mut cert_path = None;
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        config = config.tls(TlsIdentity::from_pem_files(cert, key).map_err(ServeError::from)?);
        trust_lines.push(format!("TLS certificate: {}", cert.display()));
        cert_path = Some(cert.clone());
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
        cert_path = Some(files.cert.clone());
    }

    let server = config.start().await?;
    if !server.is_loopback() {
        let spends = if mode == Mode::Replay {
            ""
        } else {
            ", and spend the upstream's credential through it"
        };
        eprintln!(
            "reel serve: warning: listening on {}, not loopback: anyone who can reach this port can use the server{spends}; Host is not checked there",
            server.local_addr()
        );
    }
    let http_base = server
        .base_url()
        .replacen("wss://", "https://", 1)
        .replacen("ws://", "http://", 1);
    let upstream_shown = args
        .upstream
        .as_deref()
        .map(reel_protocol::redact_url)
        .unwrap_or_default();
    if args.json {
        let ready = serde_json::json!({
            "event": "ready",
            "mode": mode.as_str(),
            "requested_mode": requested.as_str(),
            "ci_replay_only": ci_replay_only,
            "base_url": server.base_url(),
            "http_base_url": http_base,
            "live_url": server.live_url(),
            "vertex_url": server.vertex_url(),
            "health_url": format!("{http_base}/healthz"),
            "tls_cert": cert_path.map(|path| path.display().to_string()),
            "recorded_connections": server.recorded_connections(),
            "recorded_rest_calls": rest_calls,
            "record_dir": mode.records().then(|| record_dir.display().to_string()),
            "upstream": (!upstream_shown.is_empty()).then_some(upstream_shown),
            "redacting": args.redact.is_some(),
            "matching": match matching { Matching::Strict => "strict", Matching::Loose(_) => "loose" },
        });
        println!("{ready}");
        return Ok(server);
    }
    let what = match mode {
        Mode::Replay if args.tape_dir.is_some() => {
            format!(
                "replay mode, {}, {}",
                plural(tape_count as u64, "tape", "tapes"),
                plural(rest_calls as u64, "REST call", "REST calls")
            )
        }
        Mode::Replay => format!(
            "replay mode, {}",
            plural(tape_count as u64, "tape", "tapes")
        ),
        Mode::Record => format!(
            "record mode, through {upstream_shown}, into {}",
            record_dir.display()
        ),
        Mode::Auto => format!(
            "auto mode, {}, recording the rest through {upstream_shown} into {}",
            plural(tape_count as u64, "tape", "tapes"),
            record_dir.display()
        ),
        Mode::Once => format!(
            "once mode, {}, recording tests without one through {upstream_shown} into {}",
            plural(tape_count as u64, "tape", "tapes"),
            record_dir.display()
        ),
        Mode::Passthrough => {
            format!("passthrough mode, forwarding to {upstream_shown}, recording nothing")
        }
    };
    let how = match (&matching, pace) {
        (Matching::Strict, _) => "strict matching",
        (Matching::Loose(_), _) => "loose matching",
    };
    let pace_text = match pace {
        Pace::AtOnce => "frames sent at once".to_owned(),
        Pace::Recorded { speed } => format!("frames at the recorded pace x{speed}"),
    };
    let redacting = if args.redact.is_some() {
        "; redacting"
    } else {
        ""
    };
    println!("reel serve: {what}; {how}; {pace_text}{redacting}");
    println!("listening on {}", server.base_url());
    println!("  Google AI: {}", server.live_url());
    println!("  Vertex AI: {}", server.vertex_url());
    println!(
        "  SDK base URL: {http_base} (google-genai http_options base_url, @google/genai httpOptions.baseUrl)"
    );
    println!("  health: {http_base}/healthz; per-test tapes: header x-reel-test: NAME");
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

/// Reads a redaction rules file: a JSON list of rules (`reel_recorder::redact`).
fn read_redactor(path: &std::path::Path) -> Result<Redactor, ServeFailure> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        usage(format!(
            "--redact {}: cannot read it: {error}",
            path.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|error| {
        usage(format!(
            "--redact {}: not a list of redaction rules: {error}",
            path.display()
        ))
    })
}

/// Prints each connection's end on standard error until Ctrl-C, SIGTERM or SIGHUP, then
/// shuts down: open sessions are finished (recordings flushed and closed) and their reports
/// printed. A second signal while they finish exits at once (exit 1), naming the recordings
/// it leaves unfinished.
async fn serve_until_stopped(
    mut server: RunningServer,
    mut stop: StopSignal,
    json: bool,
) -> ExitCode {
    let print = |report: &reel_tape_server::ConnectionReport| {
        if json {
            println!("{}", report.to_json());
        } else {
            eprintln!("reel serve: {report}");
        }
    };
    // `stop` listens for the whole run: a signal that arrives while a report is being
    // printed is kept for the next `recv`.
    loop {
        tokio::select! {
            report = server.next_report() => match report {
                Some(report) => print(&report),
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
    if !json {
        eprintln!("reel serve: stopping; finishing open sessions");
    }
    let again = tokio::select! {
        () = server.shutdown() => None,
        signal = stop.recv() => Some(signal.unwrap_or("a second signal")),
    };
    if let Some(signal) = again {
        // The user asked twice: what is not finished stays as it is on disk (every frame
        // recorded so far is there, line by line), without the rest of its turn or its close.
        let unfinished: Vec<String> = server
            .open_recordings()
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        while let Some(report) = server.try_next_report() {
            print(&report);
        }
        if json {
            println!(
                "{}",
                serde_json::json!({"event": "stopped", "forced": true, "unfinished": unfinished})
            );
        } else if unfinished.is_empty() {
            eprintln!("reel serve: {signal} again: stopped at once; no recording was open");
        } else {
            eprintln!(
                "reel serve: {signal} again: stopped at once; {} not finished (no rest of the turn, no close marker): {}",
                plural(unfinished.len() as u64, "recording", "recordings"),
                unfinished.join(", ")
            );
        }
        // At once: not even the runtime's shutdown, which would wait for the sessions.
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(1);
    }
    while let Some(report) = server.try_next_report() {
        print(&report);
    }
    if json {
        println!("{}", serde_json::json!({"event": "stopped"}));
    } else {
        eprintln!("reel serve: stopped");
    }
    ExitCode::SUCCESS
}
