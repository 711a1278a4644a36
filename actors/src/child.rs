//! [`Child`]: the actors a session's supervisor starts, and how each one is restarted.

/// What the supervisor does when a child fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// Start a new instance (after the backoff), which goes on from the child's inbox and
    /// shared data; past the restart limit the session ends.
    Restart,
    /// End the session at once: the child holds what cannot be rebuilt (the connection, the
    /// order of the inbound stream).
    EndSession,
}

/// How the supervisor treats one child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartSpec {
    /// On failure.
    pub on_failure: OnFailure,
    /// Whether the child reports `Drained` at the end of the session, and the session ends
    /// only once every such child has.
    pub drains: bool,
}

/// Declares the children once, one row each, in the order the supervisor starts them: the
/// variant (with its doc), its name in reports and logs, what the supervisor does when it
/// fails, and whether the session waits for it to drain. From the rows come [`Child`],
/// [`Child::ALL`], [`Child::as_str`] and [`Child::spec`]: a new child is one row.
macro_rules! children {
    ($($(#[$doc:meta])* $child:ident = $name:literal, $on_failure:ident, drains: $drains:literal;)+) => {
        /// One of the actors of a session's tree. The supervisor, the restart report
        /// ([`crate::LiveEvent::Restarted`]) and the failed-event report all name children
        /// with it. Ordered as they start.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Child {
            $($(#[$doc])* $child,)+
        }

        impl Child {
            /// Every child, in the order the supervisor starts them: leaves first, so
            /// whoever sends to an actor finds it in place.
            pub const ALL: [Child; [$(Child::$child),+].len()] = [$(Child::$child),+];

            /// Its name in reports and logs: `fast_lane`, `control_lane`, `state_store`, …
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Child::$child => $name,)+
                }
            }

            /// How the supervisor treats it.
            pub fn spec(self) -> RestartSpec {
                match self {
                    $(Child::$child => RestartSpec {
                        on_failure: OnFailure::$on_failure,
                        drains: $drains,
                    },)+
                }
            }
        }
    };
}

children! {
    /// The single writer of the session state.
    StateStore = "state_store", Restart, drains: false;
    /// Counters, latencies, token usage.
    Telemetry = "telemetry", Restart, drains: true;
    /// Audio, text, transcripts, voice activity: synchronous callbacks.
    FastLane = "fast_lane", Restart, drains: true;
    /// Tool calls, turns, phases, awaited callbacks, the session's own state keys.
    ControlLane = "control_lane", Restart, drains: true;
    /// Writes the wire log.
    Recorder = "recorder", Restart, drains: false;
    /// Decodes inbound frames into events and feeds the lanes.
    Router = "router", EndSession, drains: false;
    /// Moves bytes in and out; the only place frames cross the wire.
    Transport = "transport", EndSession, drains: false;
}

impl std::fmt::Display for Child {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_specs() {
        let rows: Vec<(&str, OnFailure, bool)> = Child::ALL
            .iter()
            .map(|c| (c.as_str(), c.spec().on_failure, c.spec().drains))
            .collect();
        assert_eq!(
            rows,
            vec![
                ("state_store", OnFailure::Restart, false),
                ("telemetry", OnFailure::Restart, true),
                ("fast_lane", OnFailure::Restart, true),
                ("control_lane", OnFailure::Restart, true),
                ("recorder", OnFailure::Restart, false),
                ("router", OnFailure::EndSession, false),
                ("transport", OnFailure::EndSession, false),
            ]
        );
    }
}
