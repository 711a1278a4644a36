//! `S::`: state transforms over a JSON object, and state predicates.

use std::fmt;
use std::ops::Shr;
use std::sync::Arc;

use reel_actors::state::State;
use serde_json::{Map, Value};

type TransformFn = dyn Fn(&mut Map<String, Value>) + Send + Sync;

/// One transform step: what it does, the keys it reads and writes (for
/// [`check_contracts`](crate::check_contracts)), and the function.
#[derive(Clone)]
struct Step {
    label: String,
    reads: Vec<String>,
    writes: Vec<String>,
    f: Arc<TransformFn>,
}

/// A chain of state transforms, applied in order to a JSON object (the state's keys and
/// values). Chain with `>>`; put in a pipeline (`S::pick(..) >> agent`) it runs over the
/// run's [`State`] between agents and passes the previous agent's output through.
///
/// ```
/// use reel_compose::S;
/// use serde_json::json;
///
/// let transform = S::pick(&["name", "age"]) >> S::rename(&[("name", "customer_name")]);
/// let mut state = json!({"name": "Alice", "age": 30, "internal_id": "x123"});
/// transform.apply(&mut state);
/// assert_eq!(state, json!({"customer_name": "Alice", "age": 30}));
/// ```
#[derive(Clone)]
pub struct StateTransform {
    steps: Vec<Step>,
}

impl fmt::Debug for StateTransform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StateTransform")
            .field(&self.label())
            .finish()
    }
}

impl StateTransform {
    fn one(
        label: String,
        reads: Vec<String>,
        writes: Vec<String>,
        f: impl Fn(&mut Map<String, Value>) + Send + Sync + 'static,
    ) -> Self {
        StateTransform {
            steps: vec![Step {
                label,
                reads,
                writes,
                f: Arc::new(f),
            }],
        }
    }

    /// Applies every step, in order, to `state` (a JSON object; anything else is left as
    /// it is).
    pub fn apply(&self, state: &mut Value) {
        if let Value::Object(map) = state {
            for step in &self.steps {
                (step.f)(map);
            }
        }
    }

    /// The chain as written: `S::pick(name, age) >> S::rename(name->customer_name)`.
    pub fn label(&self) -> String {
        let labels: Vec<&str> = self.steps.iter().map(|step| step.label.as_str()).collect();
        labels.join(" >> ")
    }

    /// The keys the chain reads (declared by `rename`, `merge`, `flatten` and `pick`).
    pub fn reads(&self) -> Vec<String> {
        dedup(
            self.steps
                .iter()
                .flat_map(|step| step.reads.iter().cloned()),
        )
    }

    /// The keys the chain writes (declared by `set`, `defaults`, `rename` and `merge`).
    pub fn writes(&self) -> Vec<String> {
        dedup(
            self.steps
                .iter()
                .flat_map(|step| step.writes.iter().cloned()),
        )
    }

    /// Runs the chain over `state`: its keys as a JSON object, transformed, then every
    /// changed key written and every dropped key removed.
    pub async fn apply_to(&self, state: &State) -> Result<(), reel_actors::state::StateError> {
        let before = state.snapshot().to_json();
        let mut after = before.clone();
        self.apply(&mut after);
        let (Value::Object(before), Value::Object(after)) = (before, after) else {
            return Ok(());
        };
        for key in before.keys() {
            if !after.contains_key(key) {
                state.remove(key).await?;
            }
        }
        for (key, value) in after {
            if before.get(&key) != Some(&value) {
                state.set(&key, value).await?;
            }
        }
        Ok(())
    }
}

fn dedup(keys: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in keys {
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

fn owned(keys: &[&str]) -> Vec<String> {
    keys.iter().map(|key| (*key).to_owned()).collect()
}

impl Shr for StateTransform {
    type Output = StateTransform;

    /// Chains two transforms: `self`, then `rhs`.
    fn shr(mut self, rhs: StateTransform) -> StateTransform {
        self.steps.extend(rhs.steps);
        self
    }
}

/// The `S::` namespace: state transforms ([`StateTransform`]) and state predicates
/// ([`StatePredicate`]).
#[derive(Debug, Clone, Copy)]
pub struct S;

impl S {
    /// Keeps only the listed keys, dropping everything else.
    pub fn pick(keys: &[&str]) -> StateTransform {
        let keys = owned(keys);
        StateTransform::one(
            format!("S::pick({})", keys.join(", ")),
            keys.clone(),
            Vec::new(),
            move |map| map.retain(|key, _| keys.contains(key)),
        )
    }

    /// Removes the listed keys.
    pub fn drop(keys: &[&str]) -> StateTransform {
        let keys = owned(keys);
        StateTransform::one(
            format!("S::drop({})", keys.join(", ")),
            Vec::new(),
            Vec::new(),
            move |map| map.retain(|key, _| !keys.contains(key)),
        )
    }

    /// Renames keys: each `(old, new)` moves the value at `old` (when present) to `new`.
    pub fn rename(pairs: &[(&str, &str)]) -> StateTransform {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(old, new)| ((*old).to_owned(), (*new).to_owned()))
            .collect();
        let label = pairs
            .iter()
            .map(|(old, new)| format!("{old}->{new}"))
            .collect::<Vec<_>>()
            .join(", ");
        let reads = pairs.iter().map(|(old, _)| old.clone()).collect();
        let writes = pairs.iter().map(|(_, new)| new.clone()).collect();
        StateTransform::one(format!("S::rename({label})"), reads, writes, move |map| {
            for (old, new) in &pairs {
                if let Some(value) = map.shift_remove(old) {
                    map.insert(new.clone(), value);
                }
            }
        })
    }

    /// Moves the listed keys (those present) into one object at `into`.
    pub fn merge(keys: &[&str], into: &str) -> StateTransform {
        let (keys, into) = (owned(keys), into.to_owned());
        StateTransform::one(
            format!("S::merge({} -> {into})", keys.join(", ")),
            keys.clone(),
            vec![into.clone()],
            move |map| {
                let mut merged = Map::new();
                for key in &keys {
                    if let Some(value) = map.shift_remove(key) {
                        merged.insert(key.clone(), value);
                    }
                }
                map.insert(into.clone(), Value::Object(merged));
            },
        )
    }

    /// Lifts the keys of the object at `key` to the top level (replacing `key`); a `key`
    /// that is not an object is left as it is.
    pub fn flatten(key: &str) -> StateTransform {
        let key = key.to_owned();
        StateTransform::one(
            format!("S::flatten({key})"),
            vec![key.clone()],
            Vec::new(),
            move |map| {
                if let Some(Value::Object(inner)) = map.get(&key).cloned() {
                    map.shift_remove(&key);
                    map.extend(inner);
                }
            },
        )
    }

    /// Sets `key` to `value`.
    pub fn set(key: &str, value: Value) -> StateTransform {
        let key = key.to_owned();
        StateTransform::one(
            format!("S::set({key})"),
            Vec::new(),
            vec![key.clone()],
            move |map| {
                map.insert(key.clone(), value.clone());
            },
        )
    }

    /// Sets each key of `defaults` (a JSON object) that the state does not hold.
    pub fn defaults(defaults: Value) -> StateTransform {
        let defaults = match defaults {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let keys: Vec<String> = defaults.keys().cloned().collect();
        StateTransform::one(
            format!("S::defaults({})", keys.join(", ")),
            Vec::new(),
            keys,
            move |map| {
                for (key, value) in &defaults {
                    if !map.contains_key(key) {
                        map.insert(key.clone(), value.clone());
                    }
                }
            },
        )
    }

    /// Replaces the whole state object with what `f` returns for it (a non-object result
    /// leaves it as it was).
    pub fn map(f: impl Fn(Value) -> Value + Send + Sync + 'static) -> StateTransform {
        StateTransform::one(
            "S::map(fn)".to_owned(),
            Vec::new(),
            Vec::new(),
            move |map| {
                if let Value::Object(new) = f(Value::Object(std::mem::take(map))) {
                    *map = new;
                }
            },
        )
    }

    /// Holds when `key` is `true`, or the text `true` (any case, white space around it
    /// ignored: what a model writes through an output key).
    pub fn is_true(key: &str) -> StatePredicate {
        let key = key.to_owned();
        StatePredicate::new(format!("S::is_true({key})"), {
            let key = key.clone();
            move |state| match state.get(&key) {
                Some(Value::Bool(flag)) => *flag,
                Some(Value::String(text)) => text.trim().eq_ignore_ascii_case("true"),
                _ => false,
            }
        })
        .reading(&[&key])
    }

    /// Holds when `key` is the string `value`.
    pub fn eq(key: &str, value: &str) -> StatePredicate {
        let (key, value) = (key.to_owned(), value.to_owned());
        StatePredicate::new(format!("S::eq({key}, {value})"), {
            let key = key.clone();
            move |state| state.get(&key).and_then(Value::as_str) == Some(value.as_str())
        })
        .reading(&[&key])
    }

    /// Holds when `key` is one of the strings `values`.
    pub fn one_of(key: &str, values: &[&str]) -> StatePredicate {
        let (key, values) = (key.to_owned(), owned(values));
        StatePredicate::new(format!("S::one_of({key}, [{}])", values.join(", ")), {
            let key = key.clone();
            move |state| {
                state
                    .get(&key)
                    .and_then(Value::as_str)
                    .is_some_and(|found| values.iter().any(|value| value == found))
            }
        })
        .reading(&[&key])
    }
}

type PredicateFn = dyn Fn(&Value) -> bool + Send + Sync;

/// A condition on the state, judged on its keys as a JSON object: `S::is_true`, `S::eq`,
/// `S::one_of`, or any closure `Fn(&Value) -> bool` (through [`until`](crate::until)).
/// It reads the state only, so the same state judges the same in a replay.
#[derive(Clone)]
pub struct StatePredicate {
    label: String,
    reads: Vec<String>,
    f: Arc<PredicateFn>,
}

impl fmt::Debug for StatePredicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StatePredicate").field(&self.label).finish()
    }
}

impl StatePredicate {
    /// A predicate called `label` (in diagnostics) checking `f`.
    pub fn new(
        label: impl Into<String>,
        f: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        StatePredicate {
            label: label.into(),
            reads: Vec::new(),
            f: Arc::new(f),
        }
    }

    /// Declares the state keys it reads (for the contracts: a loop's `until` reads them
    /// after each run of its body).
    #[must_use]
    pub fn reading(mut self, keys: &[&str]) -> Self {
        self.reads = owned(keys);
        self
    }

    /// The state keys it reads, as declared.
    pub fn reads(&self) -> &[String] {
        &self.reads
    }

    /// Whether it holds on `state` (a JSON object of the state's keys).
    pub fn check(&self, state: &Value) -> bool {
        (self.f)(state)
    }

    /// Whether it holds on the run's `state`.
    pub fn check_state(&self, state: &State) -> bool {
        self.check(&state.snapshot().to_json())
    }

    /// How it was written (`S::eq(quality, good)`).
    pub fn label(&self) -> &str {
        &self.label
    }
}
