//! Keeps the panics the simulation raises on purpose off stderr.
//!
//! Hundreds of seeds inject thousands of panics; each would print a message and a
//! backtrace hint through the default hook and bury a real failure. Panics whose message
//! starts with `sim fault:` are silenced; every other panic is printed as usual.

use std::sync::Once;

/// The prefix of every planned panic's message.
pub const PREFIX: &str = "sim fault:";

/// Installs the filter once per process.
pub fn silence_planned_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !message.starts_with(PREFIX) {
                previous(info);
            }
        }));
    });
}
