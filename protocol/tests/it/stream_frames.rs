//! The short reader of streamed frames (`EventDecoder::decode_streamed`) against the general
//! decoder, frame by frame.
//!
//! Sessions of generated frames — model turns of text and inline-data parts, transcription
//! chunks, the turn's other frames — in both key spellings, with whitespace, escapes, raw
//! UTF-8, control characters, bad base64, extra fields and damaged bytes, go through two
//! decoders: one that tries the short reader first and falls back to the general decoder
//! (as the session's router does), one that only uses the general decoder. Every frame must
//! give the same events on both, and so must the turn's end after it (the answer text and
//! transcriptions the decoders gathered). The run counts how many frames the short reader
//! took, so it cannot pass by taking none.

use reel_protocol::{
    DecodeLimits, EventDecoder, SessionError, SessionEvent, decode_server_partial,
};

use crate::support;

use support::{Rng, string_piece, ws};

/// The contents of a JSON string: up to eight pieces (see [`string_piece`]).
fn string_body(rng: &mut Rng) -> String {
    (0..rng.below(8)).map(|_| string_piece(rng)).collect()
}

/// Base64 of a few bytes, in one of the alphabets the protocol accepts, or text that is not.
fn base64(rng: &mut Rng) -> String {
    use base64_simd::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let bytes: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
    match rng.below(10) {
        0 => STANDARD_NO_PAD.encode_to_string(&bytes),
        1 => URL_SAFE_NO_PAD.encode_to_string(&bytes),
        2 => "!!not base64".to_owned(),
        3 => "QUJD\\/A==".to_owned(),
        _ => STANDARD.encode_to_string(&bytes),
    }
}

/// `"name"` in one of its spellings.
fn key(rng: &mut Rng, camel: &str, snake: &str) -> String {
    let name = if rng.chance(80) { camel } else { snake };
    format!("{}\"{name}\"{}:{}", ws(rng), ws(rng), ws(rng))
}

fn part(rng: &mut Rng) -> String {
    let w = ws(rng);
    match rng.below(12) {
        0..=5 => format!(
            "{{{}\"{}\"{w}}}",
            key(rng, "text", "text"),
            string_body(rng)
        ),
        6..=8 => {
            let mime = rng.pick(&["audio/pcm;rate=24000", "image/jpeg", "audio/wav", ""]);
            let mut fields = vec![
                format!("{}\"{mime}\"", key(rng, "mimeType", "mime_type")),
                format!("{}\"{}\"", key(rng, "data", "data"), base64(rng)),
            ];
            if rng.chance(15) {
                fields.swap(0, 1);
            }
            if rng.chance(8) {
                fields.pop();
            }
            if rng.chance(5) {
                fields.push(format!("{}\"x\"", key(rng, "displayName", "display_name")));
            }
            format!(
                "{{{}{{{}}}{w}}}",
                key(rng, "inlineData", "inline_data"),
                fields.join(",")
            )
        }
        9 => format!(
            "{{{}\"{}\",{}true}}",
            key(rng, "text", "text"),
            string_body(rng),
            key(rng, "thought", "thought")
        ),
        10 => "{}".to_owned(),
        _ => format!(
            "{{{}{{\"code\":\"print(1)\"}}}}",
            key(rng, "executableCode", "executable_code")
        ),
    }
}

/// One server frame of a session.
fn frame(rng: &mut Rng) -> String {
    let content = match rng.below(20) {
        0..=9 => {
            let parts: Vec<String> = (0..rng.below(6)).map(|_| part(rng)).collect();
            let parts = format!(
                "{}[{}{}]",
                key(rng, "parts", "parts"),
                parts.join(","),
                ws(rng)
            );
            let mut fields = vec![parts];
            if rng.chance(50) {
                fields.insert(0, format!("{}\"model\"", key(rng, "role", "role")));
            }
            if rng.chance(10) {
                fields.reverse();
            }
            if rng.chance(3) {
                fields.clear();
            }
            format!(
                "{}{{{}}}",
                key(rng, "modelTurn", "model_turn"),
                fields.join(",")
            )
        }
        10..=13 => {
            let finished = if rng.chance(15) {
                ",\"finished\":true"
            } else {
                ""
            };
            format!(
                "{}{{{}\"{}\"{finished}}}",
                key(rng, "outputTranscription", "output_transcription"),
                key(rng, "text", "text"),
                string_body(rng)
            )
        }
        14..=16 => format!(
            "{}{{{}\"{}\"}}",
            key(rng, "inputTranscription", "input_transcription"),
            key(rng, "text", "text"),
            string_body(rng)
        ),
        17 => format!("{}true", key(rng, "interrupted", "interrupted")),
        18 => format!(
            "{}true",
            key(rng, "generationComplete", "generation_complete")
        ),
        _ => format!("{}true", key(rng, "turnComplete", "turn_complete")),
    };
    let mut content = format!("{{{content}{}}}", ws(rng));
    if rng.chance(5) {
        content.insert_str(content.len() - 1, ",\"turnComplete\":true");
    }
    let mut frame = format!(
        "{}{{{}{content}{}}}{}",
        ws(rng),
        key(rng, "serverContent", "server_content"),
        ws(rng),
        ws(rng)
    );
    if rng.chance(4) {
        frame.insert_str(frame.rfind('}').unwrap_or(0), ",\"usageMetadata\":{}");
    }
    frame
}

/// Now and then a byte of the frame changed, removed or added.
fn damage(rng: &mut Rng, frame: String) -> Vec<u8> {
    let mut bytes = frame.into_bytes();
    if rng.chance(6) && !bytes.is_empty() {
        let at = rng.below(bytes.len());
        match rng.below(4) {
            0 => {
                bytes.remove(at);
            }
            1 => bytes.insert(at, b"{}[],:\"\\ a0"[rng.below(11)]),
            2 => bytes[at] = 0xff,
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// The general decoder's events for a frame, as the router reports a frame it cannot read.
fn general(decoder: &mut EventDecoder, seq: u64, frame: &[u8], out: &mut Vec<SessionEvent>) {
    match decode_server_partial(frame) {
        Ok(partial) => decoder.decode_partial(seq, partial, out),
        Err(error) => out.push(SessionEvent::Error(SessionError::Decode { seq, error })),
    }
}

#[test]
fn the_short_reader_gives_the_general_decoders_events() {
    let limits = DecodeLimits::default();
    let turn_complete = br#"{"serverContent":{"turnComplete":true}}"#;
    let (mut frames, mut taken) = (0usize, 0usize);
    let mut taken_kinds = std::collections::BTreeSet::new();
    for seed in 1..=3_000u64 {
        let mut rng = Rng::seeded(seed);
        let (mut short, mut long) = (EventDecoder::new(), EventDecoder::new());
        for seq in 0..rng.below(12) as u64 + 1 {
            let text = frame(&mut rng);
            let frame = damage(&mut rng, text);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            frames += 1;
            if short.decode_streamed(&frame, limits, &mut a) {
                taken += 1;
                taken_kinds.extend(a.iter().map(SessionEvent::kind));
            } else {
                assert!(a.is_empty(), "a refused frame added events");
                general(&mut short, seq, &frame, &mut a);
            }
            general(&mut long, seq, &frame, &mut b);
            assert_eq!(
                a,
                b,
                "seed {seed}, frame {seq}: {}",
                String::from_utf8_lossy(&frame)
            );
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        general(&mut short, 99, turn_complete, &mut a);
        general(&mut long, 99, turn_complete, &mut b);
        assert_eq!(a, b, "seed {seed}: the turn's end");
    }
    // The short reader took a real share, of every kind it reads, and left the rest.
    assert!(
        taken * 4 > frames && taken * 10 < frames * 9,
        "{taken} of {frames} frames taken"
    );
    assert_eq!(
        taken_kinds.into_iter().collect::<Vec<_>>(),
        [
            "audio",
            "input_transcription",
            "media",
            "output_transcription",
            "text"
        ]
    );
}

#[test]
fn a_frame_over_the_limit_is_left_to_the_general_decoder() {
    let frame = br#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hi"}]}}}"#;
    let mut events = Vec::new();
    let limits = DecodeLimits {
        max_frame_bytes: frame.len() - 1,
    };
    assert!(!EventDecoder::new().decode_streamed(frame, limits, &mut events));
    assert!(events.is_empty());
}
