//! Where a resolution's outcome lands: `{name}:result` with its provenance, or
//! `{name}:error`.

use reel_actors::state::State;
use serde_json::{Map, Value, json};

use super::error::ResolveError;
use super::provenance::meta_key;
use super::source::SourceKind;

/// A source's result, or its error message.
pub(crate) type Outcome = Result<Value, String>;

/// The key a resolver's result lands in.
pub(crate) fn result_key(resolver: &str) -> String {
    format!("{resolver}:result")
}

/// The key a resolver's error lands in.
pub(crate) fn error_key(resolver: &str) -> String {
    format!("{resolver}:error")
}

/// Writes `outcome` for `resolver`: the result and its provenance in one batch (so
/// nothing comes between them), or the error's message.
pub(crate) async fn write_outcome(
    state: &State,
    resolver: &str,
    source: SourceKind,
    inputs: &Map<String, Value>,
    outcome: Outcome,
) -> Result<Value, ResolveError> {
    match outcome {
        Ok(value) => {
            let key = result_key(resolver);
            let provenance = json!({"source": source, "inputs": inputs});
            state
                .set_many([(key.clone(), value.clone()), (meta_key(&key), provenance)])
                .await
                .map_err(|source| ResolveError::State {
                    resolver: resolver.to_owned(),
                    key,
                    source,
                })?;
            Ok(value)
        }
        Err(message) => {
            let key = error_key(resolver);
            state
                .set(&key, &message)
                .await
                .map_err(|source| ResolveError::State {
                    resolver: resolver.to_owned(),
                    key,
                    source,
                })?;
            Err(ResolveError::Failed {
                resolver: resolver.to_owned(),
                source_kind: source.to_string(),
                message,
            })
        }
    }
}

/// Where `resolver`'s outcome just landed in the journal: the sequence number before its
/// write and the write's event time (`None` if the state's ring no longer shows it).
pub(crate) fn landing(state: &State, resolver: &str, ok: bool) -> Option<(u64, u64)> {
    let key = if ok {
        result_key(resolver)
    } else {
        error_key(resolver)
    };
    state
        .recent_mutations()
        .iter()
        .rev()
        .find(|m| m.key == key)
        .map(|m| (m.sequence.saturating_sub(1), m.timestamp_ms))
}
