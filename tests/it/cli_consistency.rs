//! What every command's output has in common: the verdicts coloured on a terminal and
//! plain otherwise. Real processes on the bundled tape.

use std::process::Command;

/// The bundled weather tape, which replays CLEAN.
const TAPE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/tapes/weather.wire.jsonl"
);

/// `reel replay TAPE`'s last line with these variables set (and the others that decide
/// colour removed).
fn last_line_with(env: &[(&str, &str)]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reel"));
    command
        .args(["replay", TAPE])
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout.lines().last().unwrap().to_owned()
}

#[test]
fn the_verdict_is_coloured_on_a_terminal_and_plain_in_a_pipe_or_with_no_color() {
    const PLAIN: &str = "  CLEAN — every runtime frame as recorded; no journal given to compare.";
    // Standard output is a pipe here: plain.
    assert_eq!(last_line_with(&[]), PLAIN);
    // As a terminal would get it (CLICOLOR_FORCE stands for the terminal): green, bold.
    assert_eq!(
        last_line_with(&[("CLICOLOR_FORCE", "1")]),
        "  \u{1b}[1;32mCLEAN\u{1b}[0m — every runtime frame as recorded; no journal given to compare."
    );
    // NO_COLOR wins; an empty NO_COLOR is no request; CLICOLOR_FORCE=0 forces nothing.
    assert_eq!(
        last_line_with(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
        PLAIN
    );
    assert_eq!(
        last_line_with(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")]),
        last_line_with(&[("CLICOLOR_FORCE", "1")])
    );
    assert_eq!(last_line_with(&[("CLICOLOR_FORCE", "0")]), PLAIN);
}
