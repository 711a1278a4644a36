//! Test support for code that calls models out of band (built with the `testing` feature).
//!
//! [`gemini_standin::GeminiStandin`] answers the Gemini REST API's `generateContent` and
//! `streamGenerateContent` on a loopback port with scripted answers, so
//! [`GeminiLlm`](crate::GeminiLlm) and anything built on it is tested over real HTTP without the network.

pub mod gemini_standin;
pub mod loopback;
