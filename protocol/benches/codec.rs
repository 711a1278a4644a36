//! Frame codec benchmarks for `reel-protocol`.
//!
//! The three figures the project tracks (see `docs/BENCHMARKS.md`):
//!
//! - `decode_server/text_camel`: a text `serverContent` frame, target ≤ 1.0 µs;
//! - `decode_server/audio_100ms_24k`: 100 ms of 24 kHz output audio, base64 included,
//!   target ≤ 6 µs;
//! - `encode_command/send_audio_100ms_16k`: 100 ms of 16 kHz input audio through
//!   `CommandEncoder::encode`, target ≤ 4 µs.
//!
//! `decode_server/tool_call` (a 111-byte call) and `decode_server/tool_call_2_nested` (the
//! realistic 392-byte frame of two calls, see [`TOOL_CALL_2_NESTED_FRAME`]) are compared
//! with gemini-rs's own decoder of the same frames: `protocol/benches/gemini-compare` and
//! `protocol/examples/decode_loop.rs` run the same loop over them (instructions with
//! callgrind, see `docs/bench-log/protocol-codec.md`). `decode_server/tool_call_2_typed`
//! decodes that frame and reads each call's `args` into its tool's struct, as a typed
//! tool's dispatch does (decision 0073): the work `args` no longer does while decoding is
//! counted where it went.
//!
//! The other benchmarks break those down or cover neighbouring paths; `decode_server_partial`
//! is what the Router calls (the same cost on a good frame, plus its slow path on a frame
//! with a bad field).
//!
//! Run with `cargo bench -p reel-protocol --bench codec`.

use std::f64::consts::TAU;
use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use reel_protocol::{
    Base64Data, CommandEncoder, DecodeLimits, EventDecoder, Platform, SessionCommand,
    SessionConfig, SessionEvent, decode_server, decode_server_partial,
};

/// The text frame of figure 1, as the server writes it (lowerCamelCase).
const TEXT_FRAME: &[u8] = br#"{"serverContent":{"modelTurn":{"role":"model","parts":[{"text":"The weather in London is 21 degrees and sunny."}]}}}"#;

/// The same frame in snake_case, as the Python SDK's recordings have it.
const TEXT_FRAME_SNAKE: &[u8] = br#"{"server_content":{"model_turn":{"role":"model","parts":[{"text":"The weather in London is 21 degrees and sunny."}]}}}"#;

/// A `toolCall` with one call and two arguments, as Live sends it (111 bytes;
/// `benches/frames/tool_call_1.json`, which `gemini-compare` and `examples/decode_loop.rs`
/// decode too).
const TOOL_CALL_FRAME: &[u8] = include_bytes!("frames/tool_call_1.json");

/// The realistic `toolCall` of issue 32 (`benches/frames/tool_call_2_nested.json`, 392
/// bytes): two calls with Live's long ids, `args` nested two levels with strings, an
/// integer, an array and two decimal fractions. Exactly:
///
/// ```text
/// {"toolCall":{"functionCalls":[{"id":"function-call-8150137249162581104","name":"book_table","args":{"guest":{"name":"Ada Lovelace","phone":"+44 20 7946 0958"},"slot":{"date":"2026-12-03","time":"19:30"},"party":4,"tags":["window","quiet","vegan"]}},{"id":"function-call-8150137249162581105","name":"get_weather","args":{"location":{"lat":51.5072,"lng":-0.1276},"units":"celsius","days":3}}]}}
/// ```
const TOOL_CALL_2_NESTED_FRAME: &[u8] = include_bytes!("frames/tool_call_2_nested.json");

/// A frame with one bad field (base64 that is not) beside a transcription and
/// `turnComplete`: the partial decoder's slow path.
const BAD_FIELD_FRAME: &[u8] = br#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"!!not base64"}}]},"outputTranscription":{"text":"Hello"},"turnComplete":true}}"#;

/// `samples` of PCM16LE mono at `rate` Hz: a 440 Hz sine at about half scale, so the base64
/// text is not one repeated pattern.
fn sine_pcm16(rate: u32, samples: usize) -> Vec<u8> {
    let mut pcm = Vec::with_capacity(samples * 2);
    for n in 0..samples {
        let t = n as f64 / f64::from(rate);
        let sample = (16_000.0 * (TAU * 440.0 * t).sin()) as i16;
        pcm.extend_from_slice(&sample.to_le_bytes());
    }
    pcm
}

/// A server frame carrying `pcm` as 24 kHz output audio, as the server sends it.
fn audio_frame(pcm: &[u8]) -> Vec<u8> {
    let data = Base64Data::from(pcm.to_vec()).encode();
    format!(
        r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{data}"}}}}]}}}}}}"#
    )
    .into_bytes()
}

/// Checks once, outside the timed loops, that the frames decode to what they should, so the
/// benchmarks cannot silently measure an error path.
fn check_inputs(text: &[u8], snake: &[u8], audio: &[u8], output_pcm: &[u8]) {
    for frame in [text, snake] {
        let Ok(message) = decode_server(frame) else {
            panic!("the text frame does not decode");
        };
        let mut events = Vec::new();
        EventDecoder::new().decode(message, &mut events);
        assert_eq!(
            events,
            [SessionEvent::TextDelta(
                "The weather in London is 21 degrees and sunny.".into()
            )]
        );
    }
    let Ok(message) = decode_server(TOOL_CALL_FRAME) else {
        panic!("the toolCall frame does not decode");
    };
    let calls = message.tool_call.and_then(|call| call.function_calls);
    let names: Vec<_> = calls.iter().flatten().map(|c| c.name.clone()).collect();
    assert_eq!(names, [Some("get_weather".to_owned())]);
    assert_eq!(TOOL_CALL_2_NESTED_FRAME.len(), 392);
    let Ok(message) = decode_server(TOOL_CALL_2_NESTED_FRAME) else {
        panic!("the two-call toolCall frame does not decode");
    };
    let calls = message.tool_call.and_then(|call| call.function_calls);
    let names: Vec<_> = calls.iter().flatten().map(|c| c.name.clone()).collect();
    assert_eq!(
        names,
        [
            Some("book_table".to_owned()),
            Some("get_weather".to_owned())
        ]
    );
    let Ok(partial) = decode_server_partial(BAD_FIELD_FRAME) else {
        panic!("the bad-field frame does not decode partially");
    };
    assert_eq!(partial.field_errors.len(), 1);
    let Ok(message) = decode_server(audio) else {
        panic!("the audio frame does not decode");
    };
    let mut events = Vec::new();
    EventDecoder::new().decode(message, &mut events);
    assert_eq!(
        events,
        [SessionEvent::AudioData(Bytes::copy_from_slice(output_pcm))]
    );
}

#[path = "frames/typed_args.rs"]
mod typed_args;

/// What a typed tool's dispatch does with the calls of `TOOL_CALL_2_NESTED_FRAME`: each
/// call's `args` read into its tool's struct (then dropped with the message).
fn typed_dispatch(
    message: Result<reel_protocol::ServerMessage, reel_protocol::DecodeError>,
) -> (Option<typed_args::BookTable>, Option<typed_args::Weather>) {
    let mut typed = (None, None);
    let calls = message.ok().and_then(|m| m.tool_call?.function_calls);
    for call in calls.iter().flatten() {
        let Some(args) = &call.args else { continue };
        match call.name.as_deref() {
            Some("book_table") => typed.0 = args.deserialize().ok(),
            Some("get_weather") => typed.1 = args.deserialize().ok(),
            _ => {}
        }
    }
    black_box(typed)
}

fn codec(c: &mut Criterion) {
    // 100 ms of output audio: 2,400 samples at 24 kHz = 4,800 bytes = 6,400 base64 chars.
    let output_pcm = sine_pcm16(24_000, 2_400);
    assert_eq!(output_pcm.len(), 4_800);
    let audio = audio_frame(&output_pcm);
    // 100 ms of input audio: 1,600 samples at 16 kHz = 3,200 bytes.
    let input_pcm = Bytes::from(sine_pcm16(16_000, 1_600));
    assert_eq!(input_pcm.len(), 3_200);
    check_inputs(TEXT_FRAME, TEXT_FRAME_SNAKE, &audio, &output_pcm);

    let mut group = c.benchmark_group("decode_server");
    group.throughput(Throughput::Bytes(TEXT_FRAME.len() as u64));
    group.bench_function("text_camel", |b| {
        b.iter(|| decode_server(black_box(TEXT_FRAME)))
    });
    group.throughput(Throughput::Bytes(TEXT_FRAME_SNAKE.len() as u64));
    group.bench_function("text_snake", |b| {
        b.iter(|| decode_server(black_box(TEXT_FRAME_SNAKE)))
    });
    group.throughput(Throughput::Bytes(audio.len() as u64));
    group.bench_function("audio_100ms_24k", |b| {
        b.iter(|| decode_server(black_box(&audio)))
    });
    group.throughput(Throughput::Bytes(TOOL_CALL_FRAME.len() as u64));
    group.bench_function("tool_call", |b| {
        b.iter(|| decode_server(black_box(TOOL_CALL_FRAME)))
    });
    group.throughput(Throughput::Bytes(TOOL_CALL_2_NESTED_FRAME.len() as u64));
    group.bench_function("tool_call_2_nested", |b| {
        b.iter(|| decode_server(black_box(TOOL_CALL_2_NESTED_FRAME)))
    });
    group.bench_function("tool_call_2_typed", |b| {
        b.iter(|| typed_dispatch(decode_server(black_box(TOOL_CALL_2_NESTED_FRAME))))
    });
    group.finish();

    // What the Router calls: the same frames through the decoder that keeps every good
    // field of a bad frame; on a good frame it must cost what `decode_server` costs.
    let mut group = c.benchmark_group("decode_server_partial");
    group.throughput(Throughput::Bytes(TEXT_FRAME.len() as u64));
    group.bench_function("text_camel", |b| {
        b.iter(|| decode_server_partial(black_box(TEXT_FRAME)))
    });
    group.throughput(Throughput::Bytes(audio.len() as u64));
    group.bench_function("audio_100ms_24k", |b| {
        b.iter(|| decode_server_partial(black_box(&audio)))
    });
    group.throughput(Throughput::Bytes(TOOL_CALL_FRAME.len() as u64));
    group.bench_function("tool_call", |b| {
        b.iter(|| decode_server_partial(black_box(TOOL_CALL_FRAME)))
    });
    group.throughput(Throughput::Bytes(BAD_FIELD_FRAME.len() as u64));
    group.bench_function("bad_field", |b| {
        b.iter(|| decode_server_partial(black_box(BAD_FIELD_FRAME)))
    });
    group.finish();

    // Frame to events, as the Router does it: `decode_events` through the general decoder,
    // `decode_streamed` through the short reader of the frames that stream.
    let mut group = c.benchmark_group("decode_events");
    for (id, frame) in [("text_camel", TEXT_FRAME), ("audio_100ms_24k", &audio[..])] {
        group.throughput(Throughput::Bytes(frame.len() as u64));
        group.bench_function(id, |b| {
            let mut events = Vec::with_capacity(4);
            b.iter(|| {
                // A fresh decoder each time, or the turn's answer text would grow without
                // end: its first push allocates, as a turn's first text frame does.
                let mut decoder = EventDecoder::new();
                events.clear();
                if let Ok(message) = decode_server(black_box(frame)) {
                    decoder.decode(message, &mut events);
                }
                black_box(&events);
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("decode_streamed");
    for (id, frame) in [
        ("text_camel", TEXT_FRAME),
        ("text_snake", TEXT_FRAME_SNAKE),
        ("audio_100ms_24k", &audio[..]),
    ] {
        group.throughput(Throughput::Bytes(frame.len() as u64));
        group.bench_function(id, |b| {
            let mut events = Vec::with_capacity(4);
            let limits = DecodeLimits::default();
            assert!(EventDecoder::new().decode_streamed(frame, limits, &mut events));
            b.iter(|| {
                // As above: a fresh decoder each time.
                let mut decoder = EventDecoder::new();
                events.clear();
                black_box(decoder.decode_streamed(black_box(frame), limits, &mut events));
                black_box(&events);
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("base64");
    let text = Base64Data::from(output_pcm.clone()).encode();
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("decode_6400_chars", |b| {
        b.iter(|| Base64Data::decode(black_box(&text)))
    });
    group.finish();

    let mut group = c.benchmark_group("encode_command");
    let encoder = CommandEncoder::default();
    let command = SessionCommand::SendAudio(input_pcm);
    group.throughput(Throughput::Bytes(3_200));
    group.bench_function("send_audio_100ms_16k", |b| {
        b.iter(|| encoder.encode(black_box(&command)))
    });
    group.finish();

    let mut group = c.benchmark_group("encode_setup");
    let config = SessionConfig::new("gemini-live-2.5-flash-native-audio")
        .voice("Kore")
        .language("en-US")
        .system_instruction("You are a helpful assistant. Answer briefly and in English.")
        .input_transcription()
        .output_transcription()
        .session_resume(true)
        .context_compression(25_600, 12_800);
    let platform = Platform::GoogleAi;
    group.bench_function("setup_frame", |b| {
        b.iter(|| config.setup_frame(black_box(&platform)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // Each benchmark: 2 s warm-up, 4 s of 100 samples; the whole file runs in about a minute.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(4))
        .sample_size(100);
    targets = codec
}
criterion_main!(benches);
