//! Debian packages a test needs (Chromium, PostgreSQL, espeak-ng and sox), installed by the
//! test itself with `apt-get` when they are missing. Installing needs root and Debian's
//! mirrors; where either is missing the test is skipped with a message that says what to
//! install, except under CI (`CI` set), where a missing package fails the test rather than
//! losing its coverage in silence.

use std::process::Command;

/// Makes sure `present()` holds, installing `packages` with apt-get (after an
/// `apt-get update` when the first try fails). `Err` says why the packages cannot be had
/// here; the caller skips its test with it.
pub fn ensure(packages: &[&str], present: impl Fn() -> bool) -> Result<(), String> {
    if present() {
        return Ok(());
    }
    let list = packages.join(" ");
    let cannot = |why: String| {
        let message = format!(
            "needs the Debian packages {list} ({why}); install them with \
             `sudo apt-get install {list}`, or run the tests as root"
        );
        if std::env::var_os("CI").is_some() {
            panic!("{message} (CI is set: a missing package fails the test)");
        }
        Err(message)
    };
    if !is_root() {
        return cannot("not installed, and installing needs root".to_owned());
    }
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
    };
    match install() {
        Err(error) => return cannot(format!("apt-get does not run: {error}")),
        Ok(status) if status.success() => {}
        Ok(_) => {
            let updated = Command::new("apt-get")
                .arg("update")
                .status()
                .is_ok_and(|s| s.success());
            let installed = updated && install().is_ok_and(|s| s.success());
            if !installed {
                return cannot("apt-get could not install them".to_owned());
            }
        }
    }
    if present() {
        Ok(())
    } else {
        cannot("installed, but still not found".to_owned())
    }
}

/// Prints that the calling test is skipped, and why, where `cargo test` shows it.
pub fn skip(test: &str, why: &str) {
    eprintln!("SKIPPED {test}: {why}");
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.starts_with(b"0\n"))
}
