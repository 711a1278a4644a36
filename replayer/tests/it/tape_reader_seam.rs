//! The tape reader stands on the transport seam and on nothing else of the tree (issue 28
//! item 2, decision 0046): its source names `reel_actors` only through
//! `reel_actors::transport::seam`, and reaches no field of the tree (`peers`) nor the
//! router's messages.

/// The tape reader's source, as compiled.
const SOURCE: &str = include_str!("../../src/replay_transport.rs");

/// Every path into `reel_actors` the source names, each from the crate name to the end of
/// its path (`reel_actors::transport::seam::{`), in order.
fn paths_into_the_tree(source: &str) -> Vec<String> {
    source
        .match_indices("reel_actors::")
        .map(|(at, _)| {
            source[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect()
        })
        .collect()
}

#[test]
fn the_tape_reader_names_only_the_transport_seam() {
    let paths = paths_into_the_tree(SOURCE);
    let outside: Vec<&String> = paths
        .iter()
        .filter(|path| {
            let rest = path.strip_prefix("reel_actors::transport::seam");
            !rest.is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        })
        .collect();
    assert_eq!(outside, Vec::<&String>::new());
    // The seam itself is named (the check would pass vacuously on a renamed crate).
    assert!(
        paths
            .iter()
            .any(|path| path == "reel_actors::transport::seam::"),
        "{paths:?}"
    );
}

#[test]
fn the_tape_reader_reaches_no_tree_internals() {
    let reached: Vec<&str> = [".peers", "RouterMsg", "wait_finished", "tool_input."]
        .into_iter()
        .filter(|name| SOURCE.contains(name))
        .collect();
    assert_eq!(reached, Vec::<&str>::new());
}

#[test]
fn the_path_reader_reads_whole_paths() {
    let source = "use reel_actors::mailbox::RouterMsg;\nlet x = reel_actors::transport::LinkFrame::new(k, p);";
    assert_eq!(
        paths_into_the_tree(source),
        [
            "reel_actors::mailbox::RouterMsg",
            "reel_actors::transport::LinkFrame::new"
        ]
    );
}
