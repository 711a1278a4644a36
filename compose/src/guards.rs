//! `G::`: guards over an agent's output.

use std::fmt;
use std::ops::BitOr;
use std::sync::Arc;

type GuardFn = dyn Fn(&str) -> Result<(), String> + Send + Sync;

#[derive(Clone)]
struct Guard {
    label: String,
    check: Arc<GuardFn>,
}

/// An output guard that did not hold: which one, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("output guard `{guard}` failed: {problem}")]
pub struct GuardViolation {
    /// The guard, as written (`G::max_length(80)`).
    pub guard: String,
    /// What was wrong with the output.
    pub problem: String,
}

/// Output guards, checked in order on an agent's output (`|` adds one). The first that
/// does not hold fails the agent's run with its [`GuardViolation`] (as
/// [`AgentError::Failed`](reel_agents::AgentError::Failed)); a guard reads only the
/// output, so a replay judges the same.
///
/// ```
/// use reel_compose::G;
///
/// let guards = G::max_length(10) | G::not_contains(&["password"]);
/// assert!(guards.check("all good").is_ok());
/// let violation = guards.check("the Password is 1234").unwrap_err();
/// assert_eq!(violation.to_string(), "output guard `G::max_length(10)` failed: the output has 20 characters, more than 10");
/// ```
#[derive(Clone, Default)]
pub struct Guards {
    guards: Vec<Guard>,
}

impl fmt::Debug for Guards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let labels: Vec<&str> = self.guards.iter().map(|g| g.label.as_str()).collect();
        f.debug_tuple("Guards").field(&labels).finish()
    }
}

impl Guards {
    fn one(
        label: impl Into<String>,
        check: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        Guards {
            guards: vec![Guard {
                label: label.into(),
                check: Arc::new(check),
            }],
        }
    }

    /// How many guards there are.
    pub fn len(&self) -> usize {
        self.guards.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.guards.is_empty()
    }

    /// Checks `output` against each guard in order; the first failing one's violation.
    pub fn check(&self, output: &str) -> Result<(), GuardViolation> {
        for guard in &self.guards {
            (guard.check)(output).map_err(|problem| GuardViolation {
                guard: guard.label.clone(),
                problem,
            })?;
        }
        Ok(())
    }
}

impl BitOr for Guards {
    type Output = Guards;

    /// `self`'s guards, then `rhs`'s.
    fn bitor(mut self, rhs: Guards) -> Guards {
        self.guards.extend(rhs.guards);
        self
    }
}

/// The `G::` namespace: output guards ([`Guards`]).
#[derive(Debug, Clone, Copy)]
pub struct G;

impl G {
    /// At most `max` characters.
    pub fn max_length(max: usize) -> Guards {
        Guards::one(format!("G::max_length({max})"), move |output| {
            let chars = output.chars().count();
            if chars > max {
                Err(format!(
                    "the output has {chars} characters, more than {max}"
                ))
            } else {
                Ok(())
            }
        })
    }

    /// Not empty (after trimming white space).
    pub fn non_empty() -> Guards {
        Guards::one("G::non_empty()", |output| {
            if output.trim().is_empty() {
                Err("the output is empty".to_owned())
            } else {
                Ok(())
            }
        })
    }

    /// None of `terms`, compared without regard to case.
    pub fn not_contains(terms: &[&str]) -> Guards {
        let terms: Vec<String> = terms.iter().map(|t| t.to_lowercase()).collect();
        Guards::one(
            format!("G::not_contains({})", terms.join(", ")),
            move |output| {
                let lower = output.to_lowercase();
                match terms.iter().find(|term| lower.contains(term.as_str())) {
                    Some(term) => Err(format!("the output contains `{term}`")),
                    None => Ok(()),
                }
            },
        )
    }

    /// Every one of `terms`, compared without regard to case.
    pub fn contains(terms: &[&str]) -> Guards {
        let terms: Vec<String> = terms.iter().map(|t| t.to_lowercase()).collect();
        Guards::one(
            format!("G::contains({})", terms.join(", ")),
            move |output| {
                let lower = output.to_lowercase();
                match terms.iter().find(|term| !lower.contains(term.as_str())) {
                    Some(term) => Err(format!("the output does not contain `{term}`")),
                    None => Ok(()),
                }
            },
        )
    }

    /// Valid JSON.
    pub fn json() -> Guards {
        Guards::one("G::json()", |output| {
            serde_json::from_str::<serde_json::Value>(output)
                .map(|_| ())
                .map_err(|error| format!("the output is not JSON: {error}"))
        })
    }

    /// `check`, called `name` in violations: `Err(problem)` fails the guard.
    pub fn custom(
        name: &str,
        check: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static,
    ) -> Guards {
        Guards::one(format!("G::custom({name})"), check)
    }
}
