//! The frame decoder on arbitrary bytes: the strict and the partial server decoder, the
//! client decoder and the event decoder. Nothing may panic; beyond that:
//!
//! - a frame the strict decoder reads, the partial one reads the same, with no field error;
//! - a frame the strict decoder refuses for anything but a bad field, the partial one
//!   refuses the same way;
//! - every message read re-encodes to a frame that reads back to it;
//! - a partial frame gives one error event per field error.
//!
//! Shared by the fuzz target `frame_decoder` and the workspace test `tests/fuzz_seeds.rs`.

use reel_protocol::{
    DecodeError, EventDecoder, SessionEvent, decode_client, decode_server, decode_server_partial,
    encode,
};

/// Checks one input.
pub fn run(data: &[u8]) {
    let strict = decode_server(data);
    let partial = decode_server_partial(data);
    match (&strict, &partial) {
        (Ok(message), Ok(partial)) => {
            assert_eq!(message, &partial.message);
            assert!(partial.field_errors.is_empty());
        }
        (Ok(_), Err(error)) => panic!("the partial decoder refused a good frame: {error}"),
        (Err(DecodeError::InvalidField { .. }), _) => {}
        (Err(strict), partial) => assert_eq!(partial.as_ref().err(), Some(strict)),
    }
    if let Ok(message) = &strict {
        assert_eq!(decode_server(&encode(message)).as_ref(), Ok(message));
    }
    if let Ok(partial) = partial {
        let errors = partial.field_errors.len();
        for error in &partial.field_errors {
            let _ = error.to_string();
        }
        let mut events = Vec::new();
        EventDecoder::new().decode_partial(1, partial, &mut events);
        let reported = events
            .iter()
            .filter(|event| matches!(event, SessionEvent::Error(_)))
            .count();
        assert_eq!(reported, errors);
    }
    if let Err(error) = &strict {
        let _ = error.to_string();
    }
    match decode_client(data) {
        Ok(message) => assert_eq!(decode_client(&encode(&message)), Ok(message)),
        Err(error) => {
            let _ = error.to_string();
        }
    }
}
