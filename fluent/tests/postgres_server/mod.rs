//! A real PostgreSQL server for the session-service tests: Debian's `postgresql` package
//! (installed with apt-get when it is missing), a fresh cluster in a temporary directory,
//! started on a free loopback port, stopped (immediately) when dropped.
//!
//! PostgreSQL refuses to run as root; as root, the cluster belongs to the `postgres` user
//! the package creates and its commands run through `runuser`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A running cluster.
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
}

impl Postgres {
    /// Initializes and starts a cluster; the database `postgres`, user `reel`, no password
    /// (trust on loopback). `None` (after saying why) where PostgreSQL cannot be installed:
    /// the calling test is skipped.
    pub fn start(name: &str) -> Option<Postgres> {
        let bin = match binaries() {
            Ok(bin) => bin,
            Err(why) => {
                crate::system_packages::skip(name, &why);
                return None;
            }
        };
        let dir = std::env::temp_dir().join(format!("reel-pg-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let port = {
            let probe = TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let root = is_root();
        if root {
            run(
                "chown",
                &["-R", "postgres:postgres", dir.to_str().unwrap()],
                false,
            );
        }
        let data = dir.join("data");
        run(
            bin.join("initdb").to_str().unwrap(),
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "reel",
                "-A",
                "trust",
                "--no-sync",
            ],
            root,
        );
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            dir.display()
        );
        run(
            bin.join("pg_ctl").to_str().unwrap(),
            &[
                "-D",
                data.to_str().unwrap(),
                "-o",
                &options,
                "-l",
                dir.join("server.log").to_str().unwrap(),
                "-w",
                "start",
            ],
            root,
        );
        Some(Postgres { dir, bin, port })
    }

    /// `host=127.0.0.1 port=… user=reel dbname=postgres`.
    pub fn url(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=reel dbname=postgres",
            self.port
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = command(
            self.bin.join("pg_ctl").to_str().unwrap(),
            &["-D", data.to_str().unwrap(), "-m", "immediate", "stop"],
            is_root(),
        )
        .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The newest installed PostgreSQL's `bin` directory, installing the package when there
/// is none; `Err` says why it cannot be had here.
fn binaries() -> Result<PathBuf, String> {
    crate::system_packages::ensure(&["postgresql"], || newest_installed().is_some())?;
    newest_installed().ok_or_else(|| "postgresql installed, but no initdb found".to_owned())
}

fn newest_installed() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.starts_with(b"0\n"))
}

fn command(program: &str, args: &[&str], as_postgres: bool) -> Command {
    if as_postgres {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--", program]).args(args);
        command
    } else {
        let mut command = Command::new(program);
        command.args(args);
        command
    }
}

fn run(program: &str, args: &[&str], as_postgres: bool) {
    let output = command(program, args, as_postgres)
        .output()
        .unwrap_or_else(|error| panic!("{program} does not run: {error}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Where the server's log is, for a failing test's message.
#[allow(dead_code)]
pub fn log_of(pg: &Postgres) -> PathBuf {
    Path::new(&pg.dir).join("server.log")
}
