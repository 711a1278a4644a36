//! A tape server on loopback playing a bundled tape: the model of the examples when they
//! run offline.

use std::error::Error;

use reel::protocol::ApiEndpoint;
use reel::recorder::WireEntry;
use reel::tape_server::{Pace, RunningServer, TapeLibrary, TapeServer};

/// Starts a tape server playing `entries` (tape `name`) at the recorded pace divided by
/// `speed`, or at once (`None`).
pub async fn serve_tape(
    name: &str,
    entries: Vec<WireEntry>,
    speed: Option<f64>,
) -> Result<RunningServer, Box<dyn Error>> {
    let pace = match speed {
        Some(speed) => Pace::Recorded { speed },
        None => Pace::AtOnce,
    };
    let server = TapeServer::replay(TapeLibrary::new().with_entries(name, entries))
        .pace(pace)
        .start()
        .await?;
    Ok(server)
}

/// Where to reach `server`: Google AI's protocol, no credential.
pub fn endpoint_of(server: &RunningServer) -> ApiEndpoint {
    ApiEndpoint::google_ai("")
        .without_credential()
        .with_base_url(&server.base_url())
}
