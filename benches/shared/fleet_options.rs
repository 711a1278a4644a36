//! The options the benches that run many sessions share (`many_sessions`, `serve_sessions`):
//! `--sessions N,N,…` and `--seconds S`, read the same way with the same errors. Included
//! with `#[path = …]` as `shared/machine.rs` is.

/// The value of `--sessions`: session counts, comma-separated, each at least 1.
pub fn sessions(value: &str) -> Result<Vec<usize>, String> {
    let sessions = value
        .split(',')
        .map(|n| n.trim().parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| format!("--sessions {value}: {error}"))?;
    if sessions.contains(&0) {
        return Err("--sessions: each N must be at least 1".to_owned());
    }
    Ok(sessions)
}

/// The value of `--seconds`: at least 1.
pub fn seconds(value: &str) -> Result<u64, String> {
    let seconds = value
        .parse()
        .map_err(|error| format!("--seconds {value}: {error}"))?;
    if seconds == 0 {
        return Err("--seconds must be at least 1".to_owned());
    }
    Ok(seconds)
}
