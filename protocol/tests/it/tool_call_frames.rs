//! `toolCall` frames: the short reader inside `decode_server` and `decode_server_partial`
//! against the general decoder (the wire structs' own `Deserialize`), frame by frame.
//!
//! Generated frames — one to three calls, `id`, `name` and `args` in any order and either
//! spelling, now and then `partialArgs`, `willContinue`, `null` or an unknown key; `args` of
//! every JSON kind with escapes, `\u` escapes and lone surrogates, big and odd numbers,
//! repeated keys, and nesting around both depth limits; damaged bytes — must decode to the
//! same message as the general decoder reads (and encode to the same bytes, so key order
//! is the same), or fail where it fails. Each call's `args`, kept as text by the short
//! reader (decision 0073), must read back — as a value and into a typed map, straight from
//! the text — to what serde_json makes of the general decoder's value, errors included.

use std::collections::BTreeMap;

use reel_protocol::{Args, ServerMessage, decode_server, decode_server_partial, encode};
use serde_json::Value;

use crate::support;

use support::{Rng, string_piece, ws};

fn string(rng: &mut Rng) -> String {
    let mut out = String::from("\"");
    for _ in 0..rng.below(5) {
        out.push_str(string_piece(rng));
    }
    out.push('"');
    out
}

/// A number with a fraction (`-?int.frac`, now and then an exponent), of 1 to 20 digits:
/// the short decimals the short reader computes itself (up to 15 digits) and the longer
/// ones it leaves to serde_json, with leading zeros (`0.000123`) and a bad one now and then
/// (`01.5`).
fn decimal(rng: &mut Rng) -> String {
    let digits = |rng: &mut Rng, len: usize| -> String {
        (0..len)
            .map(|_| char::from(b'0' + rng.below(10) as u8))
            .collect()
    };
    let sign = if rng.chance(30) { "-" } else { "" };
    let whole = match rng.below(4) {
        0 => "0".to_owned(),
        1 => {
            let len = 1 + rng.below(3);
            digits(rng, len)
        }
        _ => {
            let len = rng.below(10);
            format!("{}{}", 1 + rng.below(9), digits(rng, len))
        }
    };
    let len = 1 + rng.below(10);
    let fraction = digits(rng, len);
    let exponent = if rng.chance(12) {
        format!("e{}", rng.below(40) as i64 - 20)
    } else {
        String::new()
    };
    format!("{sign}{whole}.{fraction}{exponent}")
}

/// A JSON value of up to `depth` levels.
fn value(rng: &mut Rng, depth: usize) -> String {
    let kind = if depth == 0 {
        rng.below(3)
    } else {
        rng.below(5)
    };
    match kind {
        0 => string(rng),
        1 if rng.chance(50) => decimal(rng),
        1 => rng
            .pick(&[
                "0",
                "-1",
                "21.5",
                "1e3",
                "-0.0",
                "1E-2",
                "12345678901234567890",
                "-9223372036854775809",
                "1.7976931348623157e309",
                "01",
                "-0",
                "7",
                "-9223372036854775808",
                "18446744073709551615",
                "18446744073709551616",
            ])
            .to_owned(),
        2 => rng.pick(&["true", "false", "null"]).to_owned(),
        3 => {
            let items: Vec<String> = (0..rng.below(4)).map(|_| value(rng, depth - 1)).collect();
            format!("[{}{}]", items.join(","), ws(rng))
        }
        _ => {
            let members: Vec<String> = (0..rng.below(4))
                .map(|_| {
                    let key = rng.pick(&["city", "unit", "n", "é", "city"]);
                    format!("{}\"{key}\"{}:{}", ws(rng), ws(rng), value(rng, depth - 1))
                })
                .collect();
            format!("{{{}{}}}", members.join(","), ws(rng))
        }
    }
}

/// `args` as the model sends it, or now and then nested around the depth limit.
fn args(rng: &mut Rng) -> String {
    if rng.chance(3) {
        let levels = 95 + rng.below(40);
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    } else if rng.chance(3) {
        // Around the depth the short reader once built values to (16, before decision 0073).
        let levels = 14 + rng.below(6);
        let (open, close) = (r#"{"n":["#, "]}");
        format!("{}1{}", open.repeat(levels / 2), close.repeat(levels / 2))
    } else if rng.chance(70) {
        // An object, as Live sends.
        let members: Vec<String> = (0..rng.below(4))
            .map(|_| {
                format!(
                    "\"{}\":{}",
                    rng.pick(&["city", "unit", "days"]),
                    value(rng, 3)
                )
            })
            .collect();
        format!("{{{}}}", members.join(","))
    } else {
        value(rng, 3)
    }
}

fn call(rng: &mut Rng) -> String {
    let mut fields = Vec::new();
    if rng.chance(90) {
        fields.push(format!("\"id\":{}{}", ws(rng), string(rng)));
    }
    if rng.chance(90) {
        fields.push(format!("\"name\":{}", string(rng)));
    }
    if rng.chance(85) {
        fields.push(format!("\"args\":{}{}", ws(rng), args(rng)));
    }
    match rng.below(30) {
        0 => fields.push("\"willContinue\":true".to_owned()),
        1 => fields.push("\"partial_args\":{}".to_owned()),
        2 => fields.push("\"args\":null".to_owned()),
        3 => fields.push("\"id\":\"again\"".to_owned()),
        4 => fields.push("\"id\":7".to_owned()),
        _ => {}
    }
    for index in (1..fields.len()).rev() {
        let other = rng.below(index + 1);
        fields.swap(index, other);
    }
    format!("{{{}{}}}", fields.join(","), ws(rng))
}

fn frame(rng: &mut Rng) -> Vec<u8> {
    let calls: Vec<String> = (0..rng.below(4)).map(|_| call(rng)).collect();
    let outer = if rng.chance(80) {
        "toolCall"
    } else {
        "tool_call"
    };
    let inner = if rng.chance(80) {
        "functionCalls"
    } else {
        "function_calls"
    };
    let mut text = format!(
        "{}{{{}\"{outer}\":{}{{\"{inner}\":[{}]{}}}}}{}",
        ws(rng),
        ws(rng),
        ws(rng),
        calls.join(","),
        ws(rng),
        ws(rng)
    );
    if rng.chance(3) {
        text.insert_str(text.rfind('}').unwrap_or(0), ",\"usageMetadata\":{}");
    }
    let mut bytes = text.into_bytes();
    if rng.chance(5) && !bytes.is_empty() {
        let at = rng.below(bytes.len());
        match rng.below(3) {
            0 => {
                bytes.remove(at);
            }
            1 => bytes[at] = 0xff,
            _ => bytes.insert(at, b"{}[],:\"\\ 0"[rng.below(10)]),
        }
    }
    bytes
}

#[test]
fn tool_call_frames_decode_as_the_general_decoder_reads_them() {
    let (mut decoded, mut refused) = (0, 0);
    for seed in 1..=20_000u64 {
        let mut rng = Rng::seeded(seed);
        let frame = frame(&mut rng);
        let shown = String::from_utf8_lossy(&frame);
        let general = serde_json::from_slice::<ServerMessage>(&frame);
        match decode_server(&frame) {
            Ok(message) => {
                decoded += 1;
                let Ok(general) = &general else {
                    panic!("seed {seed}: decoded, the general decoder refuses it: {shown}");
                };
                assert_eq!(&message, general, "seed {seed}: {shown}");
                assert_eq!(encode(&message), encode(general), "seed {seed}: {shown}");
                let partial = decode_server_partial(&frame).map(|partial| partial.message);
                assert_eq!(partial.as_ref(), Ok(&message), "seed {seed}: {shown}");
                // Decoded again: the first message's values were built by the comparisons.
                let fresh = decode_server(&frame).map_err(|error| error.to_string());
                let Ok(fresh) = fresh else {
                    panic!("seed {seed}: decoded once, not twice: {shown}");
                };
                let calls = fresh.tool_call.iter().flat_map(|call| &call.function_calls);
                let general_calls = general.tool_call.iter().flat_map(|c| &c.function_calls);
                for (call, general) in calls.flatten().zip(general_calls.flatten()) {
                    if let (Some(args), Some(general)) = (&call.args, &general.args) {
                        args_read_as_the_value(args, general.value(), seed, &shown);
                    }
                }
            }
            Err(error) => {
                refused += 1;
                if let Ok(general) = &general {
                    assert!(
                        general.tool_call.is_none(),
                        "seed {seed}: refused ({error}), the general decoder reads it: {shown}"
                    );
                }
            }
        }
    }
    assert!(
        decoded > 8_000 && refused > 1_000,
        "{decoded} decoded, {refused} refused"
    );
}

/// `args` (no value built yet) gives `value` back and reads into a typed map as `value`
/// does through `serde_json::from_value`: the same map or the same error.
fn args_read_as_the_value(args: &Args, value: &Value, seed: u64, shown: &str) {
    let text: Value = serde_json::from_str(args.json()).unwrap_or(Value::Null);
    assert_eq!(&text, value, "seed {seed}: {shown}");
    assert_eq!(
        serde_json::to_string(&text).ok(),
        serde_json::to_string(value).ok(),
        "seed {seed}: {shown}"
    );
    assert_eq!(
        args.deserialize::<Value>().ok().as_ref(),
        Some(value),
        "seed {seed}: {shown}"
    );
    type Typed = BTreeMap<String, Vec<Option<i64>>>;
    let typed = args
        .deserialize::<Typed>()
        .map_err(|error| error.to_string());
    let expected =
        serde_json::from_value::<Typed>(value.clone()).map_err(|error| error.to_string());
    assert_eq!(typed, expected, "seed {seed}: {shown}");
}
