//! The studio's page, script and style, embedded in the binary: no build step, no network.

use super::http::Answer;

/// The page, script or style called `name`.
pub(super) fn page(name: &str) -> Answer {
    let (content_type, body): (&'static str, &'static str) = match name {
        "index.html" => ("text/html; charset=utf-8", INDEX),
        "studio.js" => ("text/javascript; charset=utf-8", SCRIPT),
        "studio.css" => ("text/css; charset=utf-8", STYLE),
        _ => return Answer::error(404, "no such page"),
    };
    Answer {
        status: 200,
        content_type,
        body: body.as_bytes().to_vec(),
    }
}

/// The page.
pub const INDEX: &str = include_str!("../../assets/studio/index.html");
/// The script: the list, the timeline, the audio.
pub const SCRIPT: &str = include_str!("../../assets/studio/studio.js");
/// The style.
pub const STYLE: &str = include_str!("../../assets/studio/studio.css");
