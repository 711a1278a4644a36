//! The deterministic extraction kit: [`Recognizer`]s find integers, money, options (exact
//! or fuzzy), yes/no and dates and times in what the user said, on the CPU, with no
//! model; [`Extract::record`] gathers them into a record extracted at turn boundaries
//! like any other [`TurnExtractor`](super::TurnExtractor).

mod calendar;
mod choice;
mod clock;
mod datetime;
mod money;
mod month_date;
mod number;
mod recognizer;
mod record;
mod tokens;
mod yes_no;

pub use choice::DEFAULT_FUZZY_THRESHOLD;
pub use recognizer::{Recognizer, UnknownTimeZone};
pub use record::{DEFAULT_RECORD_WINDOW, Extract, RecordBuilder, RecordExtractor};
/// The Jaro-Winkler similarity of two strings (by chars, case-sensitive), from 0.0 (nothing
/// in common) to 1.0 (equal), as the `fuzzy` recognizer scores an option: `strsim`'s.
pub use strsim::jaro_winkler;
