//! `reel studio`: a local web page over a directory of recordings, to see inside a call.
//!
//! The list of recordings (`catalog`); a call as a timeline of lanes (the wire both ways,
//! tool calls as bars, turns with their time to first audio, the journal's state changes)
//! with every frame clickable to its JSON and raw bytes, and its audio played in sync with a
//! moving cursor (`call`); served by a small loopback server (`http`) whose page is
//! embedded in the binary (`assets`). Two recordings, or a recording and its replay, side by
//! side with their first divergence (`diff`). Conversation control on the phases lane: the
//! context sent at each turn boundary and the navigation block (`conversation`). The flow of a governed recording on its own lane:
//! steps active and done over time, denied calls (`flow_lane`). One recording as one self-contained HTML file
//! (`offline`, `reel show LOG --html`). A running session streams into it as it happens
//! (`live`, `Live::builder().studio(addr)`).

pub mod access;
pub mod assets;
pub mod call;
pub mod catalog;
pub mod conversation;
pub mod diff;
pub mod downloads;
pub mod flow_lane;
pub mod http;
pub mod live;
pub mod offline;
pub mod script_json;
pub mod seek;
pub mod setup_summary;
pub mod transcript;

pub use http::{DEFAULT_MAX_FEED_BYTES, RunningStudio, StudioOptions};
