//! `reel demo`: a whole session on an embedded default — the weather assistant against the
//! bundled tape, recorded, then replayed offline.

pub mod conversation;
pub mod model_script;
pub mod run;
pub mod weather;

/// The bundled tape: the demo conversation, recorded by reel from [`model_script`].
pub const WEATHER_TAPE: &str = include_str!("../../assets/tapes/weather.wire.jsonl");
