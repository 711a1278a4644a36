// The structs a typed tool of `tool_call_2_nested.json` deserializes its arguments into,
// shared (by `#[path]`) by `protocol/examples/decode_loop.rs` and
// `protocol/benches/gemini-compare`, so both sides of the `typed` figure build the same
// values (docs/bench-log/protocol-codec.md, "Issue 32, item 3").
// The loops only build and drop them (and print one with `Debug`).
#![allow(dead_code)]

use serde::Deserialize;

/// `book_table`'s arguments.
#[derive(Debug, Deserialize)]
pub struct BookTable {
    /// Who books.
    pub guest: Guest,
    /// When.
    pub slot: Slot,
    /// How many.
    pub party: u32,
    /// Wishes.
    pub tags: Vec<String>,
}

/// The guest of a booking.
#[derive(Debug, Deserialize)]
pub struct Guest {
    /// Their name.
    pub name: String,
    /// Their phone number.
    pub phone: String,
}

/// The slot of a booking.
#[derive(Debug, Deserialize)]
pub struct Slot {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// `HH:MM`.
    pub time: String,
}

/// `get_weather`'s arguments.
#[derive(Debug, Deserialize)]
pub struct Weather {
    /// Where.
    pub location: Location,
    /// `celsius` or `fahrenheit`.
    pub units: String,
    /// How many days ahead.
    pub days: u32,
}

/// A point on the map.
#[derive(Debug, Deserialize)]
pub struct Location {
    /// Latitude.
    pub lat: f64,
    /// Longitude.
    pub lng: f64,
}
