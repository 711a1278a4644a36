//! [`ChangeCursor`]: where the last commit point left the journal, so the next one hands
//! the reactor every change since.

use crate::state::{Changes, State, StateSnapshot};

/// The journal position of the last commit point and the state at it, kept in the control
/// lane's data so that a restarted lane goes on where the failed one stopped.
#[derive(Debug, Clone)]
pub(crate) struct ChangeCursor {
    /// The sequence number of the last mutation handed on.
    cursor: u64,
    /// The state at `cursor`, for when the journal's ring no longer reaches back to it.
    baseline: StateSnapshot,
}

impl ChangeCursor {
    /// Changes made to `state` from now on are handed on.
    pub(crate) fn new(state: &State) -> Self {
        let baseline = state.snapshot();
        ChangeCursor {
            cursor: baseline.cursor(),
            baseline,
        }
    }

    /// Every change since the last call (the net change of each key), and the cursor moved
    /// past them. What is written after this call is in the next one's.
    pub(crate) fn take(&mut self, state: &State) -> Changes {
        let now = state.snapshot();
        let upto = now.cursor();
        if upto <= self.cursor {
            return Changes::default();
        }
        let mutations: Vec<_> = state
            .mutations_since(self.cursor)
            .into_iter()
            .take_while(|m| m.sequence <= upto)
            .collect();
        let complete = mutations.first().map(|m| m.sequence) == Some(self.cursor + 1);
        let changes = if complete {
            Changes::from_journal(&mutations)
        } else {
            tracing::warn!(
                from = self.cursor + 1,
                to = upto,
                "the journal's ring no longer holds every change since the last commit \
                 point; the reactor sees the net change of each key instead"
            );
            Changes::between(&self.baseline, &now)
        };
        self.cursor = upto;
        self.baseline = now;
        changes
    }

    /// The sequence number of the last mutation handed on.
    #[cfg(test)]
    fn position(&self) -> u64 {
        self.cursor
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::state::{Change, RECENT_MUTATIONS};

    #[tokio::test]
    async fn a_ring_that_lost_changes_falls_back_to_the_net_change() {
        let state = State::new();
        state.set("app:score", 1).await.unwrap();
        let mut cursor = ChangeCursor::new(&state);
        state.set("app:score", 2).await.unwrap();
        for i in 0..RECENT_MUTATIONS {
            state.set("app:noise", i).await.unwrap();
        }
        let changes = cursor.take(&state);
        assert_eq!(
            changes.iter().collect::<Vec<_>>(),
            [
                (
                    "app:noise",
                    &Change {
                        old: serde_json::Value::Null,
                        new: json!(RECENT_MUTATIONS - 1)
                    }
                ),
                (
                    "app:score",
                    &Change {
                        old: json!(1),
                        new: json!(2)
                    }
                ),
            ]
        );
        assert!(cursor.take(&state).is_empty(), "nothing new");
        assert_eq!(cursor.position(), state.mutation_cursor());
    }

    #[tokio::test]
    async fn changes_are_handed_on_once_from_the_journal() {
        let state = State::new();
        let mut cursor = ChangeCursor::new(&state);
        state.set("app:a", 1).await.unwrap();
        state.set("app:a", 2).await.unwrap();
        let first = cursor.take(&state);
        assert_eq!(
            first.get("app:a"),
            Some(&Change {
                old: serde_json::Value::Null,
                new: json!(2)
            })
        );
        state.set("app:b", true).await.unwrap();
        let second = cursor.take(&state);
        assert_eq!(second.len(), 1);
        assert!(second.get("app:a").is_none());
    }
}
