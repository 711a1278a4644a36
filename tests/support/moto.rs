//! A real S3-compatible server for tests: moto's server mode (`moto[server]` from PyPI),
//! installed once into a venv of its own under `target/interop/moto`, started on a free
//! loopback port per test, stopped when dropped. Objects are uploaded with boto3 (installed
//! with moto). When pip cannot reach PyPI, [`MotoServer::start`] returns `None` and says so
//! on stderr; any other failure fails the test.

#![allow(dead_code)] // each test file uses its own subset

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// The pinned moto.
pub const MOTO: &str = "moto[server]==5.1.4";

/// The credentials every request signs with (moto accepts any).
pub const ACCESS_KEY: &str = "reel-test-key";
/// The secret that goes with [`ACCESS_KEY`].
pub const SECRET_KEY: &str = "reel-test-secret";

/// What pip says when it cannot reach the index: the only reason to skip.
const OFFLINE_SIGNS: [&str; 4] = [
    "Could not find a version that satisfies",
    "No matching distribution found",
    "NewConnectionError",
    "Temporary failure in name resolution",
];

/// The venv's Python with moto and boto3, installed once; `None` when PyPI is out of reach.
fn python() -> Option<&'static Path> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let interop = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/interop");
            let venv = interop.join("moto");
            let python = venv.join("bin/python");
            let marker = venv.join("moto-5.1.4.installed");
            if marker.exists() {
                return Some(python);
            }
            std::fs::create_dir_all(&interop).unwrap();
            let made = Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .output()
                .unwrap();
            assert!(made.status.success(), "python3 -m venv failed: {made:?}");
            let pip = Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    MOTO,
                ])
                .output()
                .unwrap();
            if !pip.status.success() {
                let said = String::from_utf8_lossy(&pip.stderr).into_owned();
                if OFFLINE_SIGNS.iter().any(|sign| said.contains(sign)) {
                    eprintln!("SKIPPED: pip cannot reach PyPI to install {MOTO}:\n{said}");
                    return None;
                }
                panic!("pip install {MOTO} failed:\n{said}");
            }
            std::fs::write(&marker, "").unwrap();
            Some(python)
        })
        .as_deref()
}

/// A running moto server on loopback.
pub struct MotoServer {
    child: Child,
    /// Its endpoint, `http://127.0.0.1:PORT`.
    pub endpoint: String,
}

impl MotoServer {
    /// Starts a server on a free loopback port and waits until it says it listens; `None`
    /// (with a message) when moto cannot be installed because PyPI is out of reach.
    pub fn start() -> Option<MotoServer> {
        MotoServer::start_with(&[])
    }

    /// A server that checks credentials (moto's `INITIAL_NO_AUTH_ACTION_COUNT=0`): it knows
    /// no access key, so every request is refused with `InvalidAccessKeyId`.
    pub fn start_refusing() -> Option<MotoServer> {
        MotoServer::start_with(&[("INITIAL_NO_AUTH_ACTION_COUNT", "0")])
    }

    /// A server with `env` set. The port is one the system just handed out, free when
    /// asked; another process may take it before moto binds it, so a server that ends
    /// saying its address is in use is started again on a new port (a few times).
    fn start_with(env: &[(&str, &str)]) -> Option<MotoServer> {
        let python = python()?;
        let mut said = String::new();
        for _ in 0..5 {
            match MotoServer::start_on_free_port(python, env) {
                Ok(server) => return Some(server),
                Err(log) if log.contains("Address already in use") => said = log,
                Err(log) => panic!("moto_server ended before it listened:\n{log}"),
            }
        }
        panic!("moto_server found no free port in 5 tries:\n{said}");
    }

    /// One try: a free port, moto started on it; `Err` with its log if it ended before
    /// it listened.
    fn start_on_free_port(
        python: &std::path::Path,
        env: &[(&str, &str)],
    ) -> Result<MotoServer, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(python)
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Ready when it says so (werkzeug's "Running on" line), not after a sleep.
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let mut said = String::new();
        loop {
            match lines.next() {
                Some(Ok(line)) => {
                    said.push_str(&line);
                    said.push('\n');
                    if line.contains("Running on") {
                        break;
                    }
                }
                _ => {
                    let _ = child.wait();
                    return Err(said);
                }
            }
        }
        // Keep draining its log so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Ok(MotoServer {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        })
    }

    /// Runs a boto3 script against the server (`s3` is a client bound to it); panics with
    /// its output unless it succeeds.
    pub fn boto3(&self, script: &str) {
        let program = format!(
            "import boto3\ns3 = boto3.client('s3', endpoint_url='{}', region_name='us-east-1', \
             aws_access_key_id='{ACCESS_KEY}', aws_secret_access_key='{SECRET_KEY}')\n{script}",
            self.endpoint
        );
        let output = Command::new(python().unwrap())
            .args(["-c", &program])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "boto3 script failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Makes `bucket` and uploads each local file to its key.
    pub fn upload(&self, bucket: &str, files: &[(&Path, &str)]) {
        let mut script = format!("s3.create_bucket(Bucket='{bucket}')\n");
        for (file, key) in files {
            script.push_str(&format!(
                "s3.upload_file({:?}, '{bucket}', '{key}')\n",
                file.display().to_string()
            ));
        }
        self.boto3(&script);
    }

    /// Runs `reel` with `args` against this server (credentials in the environment, the
    /// endpoint by `--s3-endpoint`): exit code, stdout, stderr.
    pub fn reel(&self, args: &[&str]) -> (i32, String, String) {
        let output = Command::new(env!("CARGO_BIN_EXE_reel"))
            .args(args)
            .args(["--s3-endpoint", &self.endpoint])
            .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
            .env("AWS_DEFAULT_REGION", "us-east-1")
            .env_remove("AWS_ENDPOINT_URL")
            .env_remove("CLICOLOR_FORCE")
            .output()
            .unwrap();
        (
            output.status.code().unwrap(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    }
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
