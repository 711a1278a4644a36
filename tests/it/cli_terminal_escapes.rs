//! Issue 25, §4: terminal escapes in recorded text are shown, never obeyed. A recording
//! whose model text and user text carry `ESC ] 0 ; pwned BEL ESC [ 2 J` (retitle the window,
//! clear the screen) goes through `reel replay`, `show`, `diff` and `trace show`: no control
//! character reaches standard output; each is printed as its escape.

use crate::cli_support;

use cli_support::{TempDir, arg, reel, tamper_frame};

const WEATHER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/tapes/weather.wire.jsonl"
);

/// The hostile text, as JSON writes it inside a string.
const HOSTILE_JSON: &str = r"\u001b]0;pwned\u0007\u001b[2J";
/// How the commands print it.
const SHOWN: &str = r"\u{1b}]0;pwned\u{7}\u{1b}[2J";

/// Asserts `stdout` holds no control character but line breaks, and shows the hostile
/// text at least `times` times.
fn assert_shown(command: &str, stdout: &str, times: usize) {
    let controls: Vec<char> = stdout
        .chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect();
    assert_eq!(
        controls,
        Vec::<char>::new(),
        "{command} printed control characters:\n{stdout}"
    );
    assert_eq!(
        stdout.matches(SHOWN).count(),
        times,
        "{command} does not show the text as escapes:\n{stdout}"
    );
}

#[test]
fn recorded_control_characters_are_printed_as_escapes() {
    let dir = TempDir::new("terminal-escapes");
    let log = dir.join("hostile.wire.jsonl");
    std::fs::copy(WEATHER, &log).unwrap();
    // The model's first words and the user's first message.
    tamper_frame(&log, 5, |payload| {
        payload.replacen("Hi!", &format!("Hi!{HOSTILE_JSON}"), 1)
    });
    tamper_frame(&log, 4, |payload| {
        payload.replacen("Hello!", &format!("Hello!{HOSTILE_JSON}"), 1)
    });

    let (code, stdout, stderr) = reel(&["show", arg(&log)]);
    assert_eq!(code, 0, "{stderr}");
    assert_shown("show", &stdout, 2);
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("5 "))
        .unwrap();
    assert_eq!(
        row,
        format!(
            "    5  ←  +0.360s  serverContent.text                \"Hi!{SHOWN} I'm your weather \
             assistant.\""
        )
    );

    let (code, stdout, stderr) = reel(&["replay", arg(&log)]);
    assert_eq!(code, 0, "{stderr}");
    assert_shown("replay", &stdout, 2);

    let (code, stdout, stderr) = reel(&["diff", WEATHER, arg(&log)]);
    assert_eq!(code, 1, "{stderr}");
    assert_shown("diff", &stdout, 1);

    let trace = dir.join("hostile.trace.json");
    let (code, _, stderr) = reel(&["export", arg(&log), "--format", "trace", "-o", arg(&trace)]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = reel(&["trace", "show", arg(&trace)]);
    assert_eq!(code, 0, "{stderr}");
    assert_shown("trace show", &stdout, 2);
}
