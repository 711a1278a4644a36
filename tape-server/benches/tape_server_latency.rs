//! The tape server under 500 concurrent clients: the latency it adds per frame. Target:
//! p99 ≤ 1 ms.
//!
//! One `TapeServer::replay` (strict matching, `Pace::AtOnce`) serves a library of 10 tapes
//! (10 setups differing by their system instruction). 500 tokio-tungstenite clients on
//! loopback WebSockets, 50 per tape, each replay their tape: the setup, then 200 exchanges.
//! An exchange is one client frame — 100 ms of 16 kHz input audio (`realtimeInput`, a
//! 4.3 KB frame) or, every tenth, a `clientContent` text turn — and the 3 server frames the
//! tape has after it (transcriptions and 40 ms of output audio, or text and
//! `turnComplete`). The latency of an exchange is the time from the client starting to
//! send its frame to the client receiving the first server frame after it: the server's
//! read, strict match (decode, re-encode, compare with the recording) and write, plus
//! loopback and the client's own WebSocket work. Every latency of every client is kept.
//!
//! Three loads, one after the other:
//!
//! - `solo`: one client, 2,000 exchanges back to back: the floor (nothing else to wait
//!   for);
//! - `paced` (the figure): each client sends a frame every 100 ms (as a client streaming
//!   100 ms audio chunks does), the 500 clients spread evenly over the 100 ms: 5,000
//!   exchanges/s in all, 100,000 exchanges;
//! - `flood`: each client sends its next frame as soon as it has the replies to the last,
//!   40 exchanges each: the server's throughput limit, and the latency under saturation
//!   (mostly queueing).
//!
//! The server runs on its own tokio runtime (2 workers), the clients on another (2
//! workers), as a second process would; both share the machine's 2 cores. Every
//! connection's report is checked: replayed to the end, closed by the client.
//!
//! ```sh
//! cargo bench -p reel-tape-server --bench tape_server_latency
//! cargo bench -p reel-tape-server --bench tape_server_latency -- --clients 200 --exchanges 100
//! # also: --flood-exchanges N, --solo-exchanges N, --period-ms N
//! ```

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use reel_protocol::Base64Data;
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use reel_tape_server::{End, Outcome, Pace, TapeLibrary, TapeServer};
use serde_json::json;
use tokio::net::TcpStream;
use tokio::sync::Barrier;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_tungstenite::tungstenite::protocol::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use support::{T0, cpu_times, load_average, quantile, runtime};

/// Tapes in the library (distinct setups).
const TAPES: usize = 10;

/// Server frames after each client frame.
const REPLIES: usize = 3;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What one client plays: its setup and its exchanges' client frames.
struct Script {
    setup: Utf8Bytes,
    frames: Vec<Utf8Bytes>,
}

/// One client's measurements, in nanoseconds.
struct Measured {
    setup_ns: u64,
    exchanges_ns: Vec<u64>,
}

fn pcm(samples: usize, rate: f64, phase: usize) -> Bytes {
    let mut pcm = Vec::with_capacity(samples * 2);
    for i in 0..samples {
        let t = (phase * samples + i) as f64 / rate;
        let sample = ((t * 220.0 * std::f64::consts::TAU).sin() * 6_000.0) as i16;
        pcm.extend_from_slice(&sample.to_le_bytes());
    }
    Bytes::from(pcm)
}

/// Tape `n`: its setup, then `exchanges` client frames each followed by [`REPLIES`] server
/// frames, 20 ms apart; the client closes at the end. Returns the script and the entries.
fn tape(n: usize, exchanges: usize) -> (Script, Vec<WireEntry>) {
    let setup = json!({"setup": {
        "model": "models/gemini-live-2.5-flash",
        "generationConfig": {"responseModalities": ["AUDIO"]},
        "systemInstruction": {"parts": [{"text": format!("You are bench agent number {n}.")}]},
        "outputAudioTranscription": {},
        "inputAudioTranscription": {}
    }})
    .to_string();
    let out_audio = Base64Data(pcm(960, 24_000.0, n)).encode();
    let mut entries = Vec::new();
    let mut seq = 0u64;
    let mut push = |entries: &mut Vec<WireEntry>, dir: Direction, payload: String| {
        seq += 1;
        entries.push(WireEntry::frame(
            seq,
            dir,
            T0 + seq * 20,
            Bytes::from(payload),
            None,
            false,
        ));
    };
    push(&mut entries, Direction::Out, setup.clone());
    push(
        &mut entries,
        Direction::In,
        r#"{"setupComplete":{}}"#.to_owned(),
    );
    let mut frames = Vec::with_capacity(exchanges);
    for k in 0..exchanges {
        let (client, replies) = if k % 10 == 9 {
            let client = json!({"clientContent": {
                "turns": [{"role": "user", "parts": [{"text": format!("Question {k} for agent {n}?")}]}],
                "turnComplete": true
            }});
            let replies = [
                json!({"serverContent": {"modelTurn": {"parts": [{"text": format!("Answer {k}, ")}]}}}),
                json!({"serverContent": {"modelTurn": {"parts": [{"text": "and that is all."}]}}}),
                json!({"serverContent": {"turnComplete": true}, "usageMetadata": {"totalTokenCount": 100 + k}}),
            ];
            (client, replies)
        } else {
            let data = Base64Data(pcm(1_600, 16_000.0, k)).encode();
            let client = json!({"realtimeInput": {"audio": {"mimeType": "audio/pcm;rate=16000", "data": data}}});
            let replies = [
                json!({"serverContent": {"inputTranscription": {"text": format!("word{k} ")}}}),
                json!({"serverContent": {"outputTranscription": {"text": format!("reply{k} ")}}}),
                json!({"serverContent": {"modelTurn": {"parts": [
                    {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": out_audio}}
                ]}}}),
            ];
            (client, replies)
        };
        let client = client.to_string();
        frames.push(Utf8Bytes::from(client.clone()));
        push(&mut entries, Direction::Out, client);
        for reply in replies {
            push(&mut entries, Direction::In, reply.to_string());
        }
    }
    seq += 1;
    let mark = CloseMark {
        code: Some(1000),
        reason: None,
        client: true,
    };
    entries.push(WireEntry::close_mark(seq, T0 + seq * 20, None, mark));
    let script = Script {
        setup: Utf8Bytes::from(setup),
        frames,
    };
    (script, entries)
}

/// The next data frame (pings and pongs skipped).
async fn next_data(ws: &mut Ws) -> Message {
    loop {
        match ws.next().await {
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            Some(Ok(message)) => return message,
            Some(Err(error)) => panic!("client: {error}"),
            None => panic!("client: the server dropped the connection"),
        }
    }
}

async fn exchange(ws: &mut Ws, frame: Utf8Bytes) -> u64 {
    let started = Instant::now();
    if let Err(error) = ws.send(Message::Text(frame)).await {
        panic!("client: cannot send: {error}");
    }
    let first = next_data(ws).await;
    let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    assert!(first.is_text(), "a recorded text frame comes back");
    for _ in 1..REPLIES {
        next_data(ws).await;
    }
    ns
}

async fn client(
    url: String,
    script: Arc<Script>,
    ready: Arc<Barrier>,
    pace: Option<(Duration, Duration)>,
) -> Measured {
    // Nagle off, as the server has it (and as reel's own WebSocket client has it).
    let connected = tokio_tungstenite::connect_async_with_config(url.as_str(), None, true).await;
    let (mut ws, _) = match connected {
        Ok(connected) => connected,
        Err(error) => panic!("client: cannot connect: {error}"),
    };
    let setup_ns = {
        let started = Instant::now();
        if let Err(error) = ws.send(Message::Text(script.setup.clone())).await {
            panic!("client: cannot send the setup: {error}");
        }
        next_data(&mut ws).await;
        u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX)
    };
    ready.wait().await;
    let mut exchanges_ns = Vec::with_capacity(script.frames.len());
    match pace {
        Some((period, offset)) => {
            tokio::time::sleep(offset).await;
            let mut ticks = tokio::time::interval(period);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            for frame in &script.frames {
                ticks.tick().await;
                exchanges_ns.push(exchange(&mut ws, frame.clone()).await);
            }
        }
        None => {
            for frame in &script.frames {
                exchanges_ns.push(exchange(&mut ws, frame.clone()).await);
            }
        }
    }
    let _ = ws.close(None).await;
    while let Some(Ok(_)) = ws.next().await {}
    Measured {
        setup_ns,
        exchanges_ns,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str, default: usize| -> usize {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let clients = value("--clients", 500);
    let exchanges = value("--exchanges", 200);
    let flood_exchanges = value("--flood-exchanges", 40);
    let solo_exchanges = value("--solo-exchanges", 2_000);
    let period = Duration::from_millis(value("--period-ms", 100) as u64);

    let started = Instant::now();
    let server_rt = runtime();
    let client_rt = runtime();
    for (load, clients, per_client, pace) in [
        ("solo", 1, solo_exchanges, None),
        ("paced", clients, exchanges, Some(period)),
        ("flood", clients, flood_exchanges, None),
    ] {
        let mut library = TapeLibrary::new();
        let mut scripts = Vec::new();
        for n in 0..TAPES {
            let (script, entries) = tape(n, per_client);
            library.add_entries(format!("bench-{n}"), entries);
            scripts.push(Arc::new(script));
        }
        let mut server =
            match server_rt.block_on(TapeServer::replay(library).pace(Pace::AtOnce).start()) {
                Ok(server) => server,
                Err(error) => panic!("the tape server did not start: {error}"),
            };
        let url = server.live_url();
        let load_before = load_average().unwrap_or_default();
        let run_started = Instant::now();
        let cpu_before = cpu_times();
        let measured: Vec<Measured> = client_rt.block_on(async {
            let ready = Arc::new(Barrier::new(clients));
            let tasks: Vec<_> = (0..clients)
                .map(|i| {
                    let pace = pace.map(|period| {
                        // Spread the clients evenly over one period.
                        let offset = period.mul_f64(i as f64 / clients as f64);
                        (period, offset)
                    });
                    tokio::spawn(client(
                        url.clone(),
                        Arc::clone(&scripts[i % TAPES]),
                        Arc::clone(&ready),
                        pace,
                    ))
                })
                .collect();
            let mut all = Vec::with_capacity(clients);
            for task in tasks {
                match task.await {
                    Ok(measured) => all.push(measured),
                    Err(error) => panic!("a client failed: {error}"),
                }
            }
            all
        });
        let wall = run_started.elapsed();
        let cpu_after = cpu_times();
        let (user, system) = (cpu_after.0 - cpu_before.0, cpu_after.1 - cpu_before.1);
        let load_after = load_average().unwrap_or_default();

        // Every connection replayed to its end and was closed by its client.
        server_rt.block_on(server.shutdown());
        let mut replayed = 0;
        while let Some(report) = server.try_next_report() {
            match report.outcome {
                Outcome::Replayed {
                    frames,
                    end: End::ClientClosed { .. },
                    ..
                } if frames as usize == per_client + 1 => replayed += 1,
                other => panic!("connection {} ended unexpectedly: {other:?}", report.conn),
            }
        }
        assert_eq!(replayed, clients, "every client replayed its whole tape");

        let mut setup: Vec<u64> = measured.iter().map(|m| m.setup_ns).collect();
        let mut all: Vec<u64> = measured
            .iter()
            .flat_map(|m| m.exchanges_ns.iter().copied())
            .collect();
        setup.sort_unstable();
        all.sort_unstable();
        let us = |ns: u64| ns as f64 / 1_000.0;
        let pace_text = match pace {
            Some(period) => format!("one frame per client every {} ms", period.as_millis()),
            None => "no think time".to_owned(),
        };
        println!(
            "{load}: {clients} clients × {per_client} exchanges ({pace_text}); {} exchanges in {:.1} s = {:.0} exchanges/s; load before {load_before}, after {load_after}",
            all.len(),
            wall.as_secs_f64(),
            all.len() as f64 / wall.as_secs_f64()
        );
        println!(
            "  latency per exchange: p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs, p99.9 {:.0} µs, max {:.0} µs",
            us(quantile(&all, 0.50)),
            us(quantile(&all, 0.90)),
            us(quantile(&all, 0.99)),
            us(quantile(&all, 0.999)),
            us(all.last().copied().unwrap_or(0)),
        );
        println!(
            "  CPU (server and clients): user {user:.1} s + system {system:.1} s = {:.0} µs per exchange ({:.0} % system)",
            (user + system) / all.len() as f64 * 1e6,
            system / (user + system).max(f64::EPSILON) * 100.0
        );
        println!(
            "  setup exchange (tape selection among {TAPES} tapes): p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs ({} setups)",
            us(quantile(&setup, 0.50)),
            us(quantile(&setup, 0.99)),
            us(setup.last().copied().unwrap_or(0)),
            setup.len()
        );
    }
    println!("total {:.1} s", started.elapsed().as_secs_f64());
}
