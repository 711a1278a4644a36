//! Recording another program's Live session: a Python SDK (`google-genai`) client talks to
//! reel's recording proxy — the one `reel serve --upstream …` runs — which forwards every
//! frame to the API and writes the session as a reel wire log, ready for `reel replay`,
//! `reel show` or a tape server.
//!
//! ```text
//! GEMINI_API_KEY=… cargo run --example proxy                  # in front of the Gemini Live API
//! cargo run --example proxy -- --upstream ws://127.0.0.1:9000 # … of another server (a `reel serve`)
//! cargo run --example proxy -- --bundled                      # … of the bundled tape, offline
//! cargo run --example proxy -- --out my-recordings            # where recordings go (default: recordings)
//! ```
//!
//! It prints how to point the Python SDK at the proxy (a base URL and a certificate to
//! trust: the SDK speaks `wss://` whenever it has a key, so the proxy serves TLS with a
//! fresh self-signed certificate), then one line per recorded session, until Ctrl-C.
//! `examples/support/proxy_client.py` is such a client: one text turn.
//!
//! The proxy presents its own credential upstream (from `GEMINI_API_KEY`, or the Vertex AI
//! variables); the key the SDK sends is never forwarded, and no key is ever recorded.
//! With `--bundled`, the upstream is a tape server on loopback playing
//! `assets/tapes/proxy.wire.jsonl`, which expects exactly what `proxy_client.py` says.

#[path = "support/main_of.rs"]
mod main_of;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use main_of::main_of;
use reel::recorder::jsonl::JsonlReader;
use reel::recorder::{RecordError, WireEntry, WireLogReader};
use reel::tape_server::{
    RunningServer, SelfSignedCertificate, TapeLibrary, TapeServer, TlsFiles, Upstream,
};

/// The Gemini Live API, as an upstream base: each connection goes to the path its client
/// asked for.
pub const GEMINI_LIVE_API: &str = "wss://generativelanguage.googleapis.com";

/// The bundled tape: the session `proxy_client.py` has, recorded by reel against a scripted
/// model (see `tests/it/example_proxy.rs`).
pub const PROXY_TAPE: &str = include_str!("../assets/tapes/proxy.wire.jsonl");

/// A recording proxy, running.
pub struct RecordingProxy {
    /// The server.
    pub server: RunningServer,
    /// Its self-signed certificate and key.
    pub tls: TlsFiles,
    /// Where it writes recordings.
    pub out_dir: PathBuf,
}

impl RecordingProxy {
    /// Starts a recording proxy in front of `upstream`, writing one wire log per client
    /// connection into `out_dir`, serving TLS with a fresh self-signed certificate written
    /// into `tls_dir`.
    pub async fn start(
        upstream: Upstream,
        out_dir: &Path,
        tls_dir: &Path,
    ) -> Result<Self, Box<dyn Error>> {
        let certificate = SelfSignedCertificate::generate()?;
        let tls = certificate.write_to(tls_dir)?;
        let server = TapeServer::record(upstream, out_dir)
            .tls(certificate.identity().clone())
            .start()
            .await?;
        Ok(RecordingProxy {
            server,
            tls,
            out_dir: out_dir.to_owned(),
        })
    }

    /// The base URL to give the Python SDK (`HttpOptions(base_url=…)`).
    pub fn sdk_base_url(&self) -> String {
        format!("https://{}/", self.server.local_addr())
    }

    /// How to point the Python SDK at the proxy.
    pub fn instructions(&self) -> String {
        format!(
            "Point the Python SDK at the proxy:\n\
             \n\
             \x20   export SSL_CERT_FILE={cert}\n\
             \n\
             \x20   client = genai.Client(\n\
             \x20       api_key=\"anything\",  # the proxy uses its own credential upstream\n\
             \x20       http_options=types.HttpOptions(base_url=\"{base}\"),\n\
             \x20   )\n\
             \n\
             or run the example client:\n\
             \n\
             \x20   SSL_CERT_FILE={cert} python examples/support/proxy_client.py {base}\n\
             \n\
             Recordings go to {out}/<model>-<n>.wire.jsonl.",
            cert = self.tls.cert.display(),
            base = self.sdk_base_url(),
            out = self.out_dir.display(),
        )
    }

    /// Closes every session (a session mid-turn finishes its turn and its file first).
    pub async fn shutdown(&mut self) {
        self.server.shutdown().await;
    }
}

/// The wire logs in `dir`, in name order.
pub fn recordings(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.to_string_lossy().ends_with(".wire.jsonl"))
        .collect();
    found.sort();
    Ok(found)
}

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    let lines = JsonlReader::new(PROXY_TAPE.as_bytes(), "assets/tapes/proxy.wire.jsonl");
    WireLogReader::new(lines).collect()
}

/// A tape server on loopback playing the bundled tape: an upstream that needs no key.
pub async fn serve_bundled_tape() -> Result<RunningServer, Box<dyn Error>> {
    let library = TapeLibrary::new().with_entries("proxy", bundled_tape()?);
    Ok(TapeServer::replay(library).start().await?)
}

struct Args {
    upstream: Option<String>,
    bundled: bool,
    out_dir: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut parsed = Args {
        upstream: None,
        bundled: false,
        out_dir: PathBuf::from("recordings"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--upstream" => {
                parsed.upstream = Some(
                    args.next()
                        .ok_or("--upstream needs a ws:// or wss:// URL")?,
                );
            }
            "--bundled" => parsed.bundled = true,
            "--out" => parsed.out_dir = args.next().ok_or("--out needs a directory")?.into(),
            other => {
                return Err(format!(
                    "unknown argument `{other}`; use --upstream URL, --bundled, --out DIR"
                ));
            }
        }
    }
    if parsed.bundled && parsed.upstream.is_some() {
        return Err("--bundled is an upstream of its own; drop --upstream".into());
    }
    Ok(parsed)
}

async fn run(args: Args) -> Result<(), Box<dyn Error>> {
    let mut bundled = if args.bundled {
        Some(serve_bundled_tape().await?)
    } else {
        None
    };
    let upstream = match (&bundled, &args.upstream) {
        (Some(tape_server), _) => Upstream::new(&tape_server.base_url())?,
        // A loopback upstream may do without a credential; any other needs one.
        (None, Some(url)) => Upstream::from_env(url)?,
        (None, None) => Upstream::from_env(GEMINI_LIVE_API)?,
    };
    let tls_dir = std::env::temp_dir().join(format!("reel-proxy-tls-{}", std::process::id()));
    let mut proxy = RecordingProxy::start(upstream, &args.out_dir, &tls_dir).await?;
    println!("recording proxy on {}", proxy.server.base_url());
    println!("{}\n\nCtrl-C to stop.", proxy.instructions());
    loop {
        tokio::select! {
            report = proxy.server.next_report() => match report {
                Some(report) => println!("{report}"),
                None => break,
            },
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    proxy.shutdown().await;
    if let Some(server) = bundled.as_mut() {
        server.shutdown().await;
    }
    let found = recordings(&args.out_dir)?;
    println!(
        "\n{} recording(s) in {}",
        found.len(),
        args.out_dir.display()
    );
    for path in found {
        println!("  reel replay {}", path.display());
    }
    let _ = std::fs::remove_dir_all(&tls_dir);
    Ok(())
}

fn main() -> ExitCode {
    main_of(args, run, |()| {})
}
