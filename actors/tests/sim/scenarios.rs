//! Plans written by hand, for the cases an issue describes in words.

use super::plan::{Fault, Pace, Plan, Step};

/// Issue 11's report: a fast-lane `on_text` callback fails 4 times while the server
/// streams 6,000 text frames at a steady pace (ten frames every 10 ms).
/// On the code the issue was filed against, 27–95 further deltas were lost after a restart.
pub fn issue_11_restart_under_load() -> Plan {
    let mut script: Vec<Step> = (0..6_000).map(Step::Text).collect();
    script.push(Step::TurnComplete);
    script.push(Step::Usage(0));
    Plan {
        seed: 0,
        pace: Pace {
            tick_ms: 10,
            burst: 10,
        },
        resumption: false,
        script,
        faults: [1_200, 2_400, 3_100, 4_800]
            .into_iter()
            .map(|delta| Fault::TextPanic { delta })
            .collect(),
    }
}
