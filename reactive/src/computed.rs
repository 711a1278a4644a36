//! Computed values: `derived:{name}` keys recomputed from the state at each commit point
//! (tool writes committed, turn complete), in dependency order.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::error::ReactiveError;
use crate::order::dependency_order;
use reel_actors::state::{State, prefix};

/// How a computed value is worked out: `Some(value)` is written to `derived:{name}` (`null`
/// removes it), `None` writes nothing (the last value stays).
pub type ComputeFn = Arc<dyn Fn(&State) -> Option<Value> + Send + Sync>;

#[derive(Clone)]
struct Computed {
    name: String,
    key: String,
    deps: Vec<String>,
    compute: ComputeFn,
}

/// Computed values, each written to `derived:{name}`.
///
/// A value names the keys it depends on; a dependency on another computed value's
/// `derived:` key puts it after that value, so a chain is computed in one pass. Every value
/// is recomputed at every commit point — after tool writes are committed and at every turn
/// complete, before the watchers look (not only those whose dependencies changed: the
/// closure reads the whole state, and an undeclared dependency must not leave a value
/// stale); a result equal to the current value writes nothing, so the journal shows only
/// real changes. Values depending on each other in a cycle are refused when the registry is
/// built ([`ComputedRegistry::order`], [`ReactiveError::Cycle`]).
///
/// ```
/// use reel_reactive::ComputedRegistry;
/// use serde_json::json;
///
/// let computed = ComputedRegistry::new()
///     // Registered first, computed second: it reads `derived:total`.
///     .computed("with_tax", &["derived:total"], |s| {
///         Some(json!(s.get::<f64>("derived:total")? * 1.2))
///     })
///     .computed("total", &["app:price", "app:quantity"], |s| {
///         Some(json!(s.get::<f64>("app:price")? * s.get::<f64>("app:quantity")?))
///     });
/// assert_eq!(computed.order().unwrap(), ["total", "with_tax"]);
/// ```
#[derive(Clone, Default)]
pub struct ComputedRegistry {
    values: Vec<Computed>,
}

impl ComputedRegistry {
    /// No computed values.
    pub fn new() -> Self {
        ComputedRegistry::default()
    }

    /// Adds the value `name`, written to `derived:{name}`, depending on the keys `deps`
    /// (full keys: `app:price`, `derived:total`).
    pub fn computed<F>(mut self, name: impl Into<String>, deps: &[&str], compute: F) -> Self
    where
        F: Fn(&State) -> Option<Value> + Send + Sync + 'static,
    {
        let name = name.into();
        self.values.push(Computed {
            key: format!("{}{name}", prefix::DERIVED),
            name,
            deps: deps.iter().map(|dep| (*dep).to_owned()).collect(),
            compute: Arc::new(compute),
        });
        self
    }

    /// How many values there are.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The names in the order they are computed, or why there is none: a name registered
    /// twice, or a cycle.
    pub fn order(&self) -> Result<Vec<String>, ReactiveError> {
        Ok(self
            .sorted_indices()?
            .into_iter()
            .filter_map(|i| self.values.get(i).map(|v| v.name.clone()))
            .collect())
    }

    /// The values sorted into computation order.
    pub(crate) fn build(self) -> Result<ComputedValues, ReactiveError> {
        let order = self.sorted_indices()?;
        let mut slots: Vec<Option<Computed>> = self.values.into_iter().map(Some).collect();
        let values = order
            .into_iter()
            .filter_map(|i| slots.get_mut(i).and_then(Option::take))
            .collect();
        Ok(ComputedValues { values })
    }

    fn sorted_indices(&self) -> Result<Vec<usize>, ReactiveError> {
        let mut by_key: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, value) in self.values.iter().enumerate() {
            if by_key.insert(value.key.as_str(), i).is_some() {
                return Err(ReactiveError::DuplicateComputed {
                    name: value.name.clone(),
                });
            }
        }
        let deps: Vec<Vec<usize>> = self
            .values
            .iter()
            .map(|value| {
                value
                    .deps
                    .iter()
                    .filter_map(|dep| by_key.get(dep.as_str()).copied())
                    .collect()
            })
            .collect();
        dependency_order(&deps).map_err(|cycle| ReactiveError::Cycle {
            path: cycle
                .into_iter()
                .filter_map(|i| self.values.get(i).map(|v| v.name.clone()))
                .collect(),
        })
    }
}

impl fmt::Debug for ComputedRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.values.iter().map(|v| (&v.name, &v.deps)))
            .finish()
    }
}

/// Computed values in computation order (a built [`ComputedRegistry`]).
#[derive(Clone, Default)]
pub(crate) struct ComputedValues {
    values: Vec<Computed>,
}

impl ComputedValues {
    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Recomputes every value in order, each written (if it changed) before the next is
    /// computed, so a value reading another's `derived:` key sees it fresh.
    pub(crate) async fn recompute(&self, state: &State) {
        for value in &self.values {
            let Some(new) = (value.compute)(state) else {
                continue;
            };
            if let Err(error) = state.set(&value.key, new).await {
                tracing::warn!(%error, key = value.key, "could not write a computed value");
            }
        }
    }
}

impl fmt::Debug for ComputedValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.values.iter().map(|v| &v.name))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_cycle_is_refused_and_named() {
        let registry = ComputedRegistry::new()
            .computed("summary", &["derived:b"], |_| None)
            .computed("a", &["derived:c", "app:x"], |_| None)
            .computed("b", &["derived:a"], |_| None)
            .computed("c", &["derived:b"], |_| None);
        assert_eq!(
            registry.order(),
            Err(ReactiveError::Cycle {
                path: vec!["a".into(), "c".into(), "b".into(), "a".into()]
            })
        );
        assert!(matches!(registry.build(), Err(ReactiveError::Cycle { .. })));
    }

    #[test]
    fn a_name_registered_twice_is_refused() {
        let registry = ComputedRegistry::new()
            .computed("a", &[], |_| None)
            .computed("a", &[], |_| None);
        assert_eq!(
            registry.order(),
            Err(ReactiveError::DuplicateComputed { name: "a".into() })
        );
    }

    #[tokio::test]
    async fn a_chain_is_computed_in_one_pass_and_none_writes_nothing() {
        let state = State::new();
        state.set("app:price", 10).await.unwrap();
        let values = ComputedRegistry::new()
            .computed("doubled_total", &["derived:total"], |s| {
                Some(json!(s.get::<i64>("derived:total")? * 2))
            })
            .computed("total", &["app:price", "app:quantity"], |s| {
                Some(json!(
                    s.get::<i64>("app:price")? * s.get::<i64>("app:quantity").unwrap_or(1)
                ))
            })
            .computed("nothing", &[], |_| None)
            .build()
            .unwrap();
        assert_eq!(
            format!("{values:?}"),
            r#"["total", "doubled_total", "nothing"]"#
        );
        values.recompute(&state).await;
        state.set("app:quantity", 3).await.unwrap();
        values.recompute(&state).await;
        values.recompute(&state).await; // unchanged: nothing journaled
        let journal: Vec<(String, Value, Value)> = state
            .recent_mutations()
            .into_iter()
            .map(|m| (m.key, m.old, m.new))
            .collect();
        assert_eq!(
            journal,
            vec![
                ("app:price".into(), Value::Null, json!(10)),
                ("derived:total".into(), Value::Null, json!(10)),
                ("derived:doubled_total".into(), Value::Null, json!(20)),
                ("app:quantity".into(), Value::Null, json!(3)),
                ("derived:total".into(), json!(10), json!(30)),
                ("derived:doubled_total".into(), json!(20), json!(60)),
            ]
        );
    }
}
