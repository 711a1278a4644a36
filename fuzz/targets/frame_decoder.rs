//! The frame decoder on arbitrary bytes: the strict and the partial server decoder, the
//! client decoder and the event decoder. Nothing may panic; beyond that:
//!
//! - a frame the strict decoder reads, the partial one reads the same, with no field error;
//! - a frame the strict decoder refuses for anything but a bad field, the partial one
//!   refuses the same way;
//! - every message read re-encodes to a frame that reads back to it;
//! - a partial frame gives one error event per field error;
//! - the short readers (decision 0021) agree with the general decoder: a `toolCall` frame
//!   `decode_server` reads is what the wire structs' own `Deserialize` reads, and a frame
//!   `EventDecoder::decode_streamed` takes gives the events the general decoder gives (and
//!   it takes no frame the general decoder refuses).
//!
//! Shared by the fuzz target `frame_decoder` and the workspace test `tests/it/fuzz_seeds.rs`.

use reel_protocol::{
    DecodeError, DecodeLimits, EventDecoder, ServerMessage, SessionEvent, decode_client,
    decode_server, decode_server_partial, encode,
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
        if message.tool_call.is_some() {
            let general = serde_json::from_slice::<ServerMessage>(data);
            assert_eq!(general.as_ref().ok(), Some(message));
            assert_eq!(
                general.map(|general| encode(&general)).ok(),
                Some(encode(message))
            );
        }
    }
    let mut streamed = Vec::new();
    let taken = EventDecoder::new().decode_streamed(data, DecodeLimits::default(), &mut streamed);
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
        if taken {
            assert_eq!(
                streamed, events,
                "the short reader's events are the general decoder's"
            );
        }
    } else {
        assert!(
            !taken,
            "the short reader took a frame the general decoder refuses"
        );
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
