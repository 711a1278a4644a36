//! JSON paths, differences and key casing: the one syntax every part of reel names a place
//! in a JSON value with.
//!
//! Redaction rules (`reel-recorder`), the tape server's loose-matching rules
//! (`reel-replayer`) and the out-of-band model matchers (`reel-llm`) all take a [`JsonPath`];
//! every report of a difference (a replay's divergence, a tape server's mismatch, a model
//! request that does not match its recording) names places as [`json_diff`] does. So a path
//! copied from a report works in a rule.
//!
//! # Path syntax
//!
//! | written | names |
//! |---|---|
//! | `serverContent.modelTurn` | the member `modelTurn` of the member `serverContent` |
//! | `parts[0]` | element 0 of the array `parts` |
//! | `parts[*]` | every element of the array `parts` |
//! | `contents.*` | any one member of `contents` (or element, if it is an array) |
//! | `**.requestId` | `requestId` at any depth, the top level included |
//! | `[*].id` | `id` in every element of a top-level array |
//!
//! - Keys are joined by dots; brackets follow a key (or begin the path, for a top-level
//!   array) and hold an index or `*`, any number of times: `grid[0][*]`.
//! - A key matches its lowerCamelCase and its snake_case spelling alike (`inlineData` and
//!   `inline_data`), as the Live API accepts both: see [`camel_case`] and [`snake_case`].
//! - `*` and `**` stand for a whole key; `**` may not end a path. A key cannot hold `.`, `[`,
//!   `]` or `*`.
//!
//! A place found in a value ([`Location`], as [`json_diff`] reports it) is written in the
//! same syntax, without wildcards; `$` is the whole value.

mod casing;
mod diff;
mod path;

pub use casing::{camel_case, snake_case};
pub use diff::{Location, PathDiff, Place, first_difference, json_diff, payload_json};
pub use path::{JsonPath, PathError, PathProblem, Selected};
