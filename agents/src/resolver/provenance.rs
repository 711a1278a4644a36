//! Provenance: where a resolved value came from, kept beside it under `state_meta:{key}`.

use reel_actors::state::State;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::source::SourceKind;

/// Where a value in state came from, as a resolver wrote it under
/// `state_meta:{name}:result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The kind of source that produced it.
    pub source: SourceKind,
    /// The inputs it was produced from.
    pub inputs: Map<String, Value>,
}

/// The key a value's provenance is kept under: `state_meta:{key}`.
pub(crate) fn meta_key(key: &str) -> String {
    format!("state_meta:{key}")
}

/// The provenance of `key` (`"availability:result"`), if a resolver wrote it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use reel_actors::state::State;
/// use reel_agents::{Resolver, SourceKind, provenance};
///
/// let state = State::new();
/// state.set("slot", "afternoon").await?;
/// Resolver::fetch("availability", |s: State| async move {
///     let slot = s.get::<String>("slot").unwrap_or_default();
///     Ok(serde_json::json!({"open": slot == "afternoon"}))
/// })
/// .inputs(["slot"])
/// .resolve(&state)
/// .await?;
/// let from = provenance(&state, "availability:result").unwrap();
/// assert_eq!(from.source, SourceKind::Fetch);
/// assert_eq!(from.inputs["slot"], "afternoon");
/// # Ok(())
/// # }
/// ```
pub fn provenance(state: &State, key: &str) -> Option<Provenance> {
    state.get(&meta_key(key))
}
