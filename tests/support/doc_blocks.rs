//! The Rust code blocks of the README, `docs/` and the packages' READMEs, and how each is
//! proven. The getting-started guide's project files (`// src/lib.rs`, `// src/main.rs`,
//! `// tests/replay.rs`) are built and run as a project (`tests/it/guide.rs`); every other
//! Rust block is a fragment a reader completes in their head, so it is compiled here inside
//! a context — the names it uses but does not define, as `use` lines, stubs and parameters —
//! as an example of the guide's project, in the same build. The contexts live here, not in
//! the markdown: hidden doc-test lines would show on every page that renders it
//! ([decision 0027](../../docs/decisions/0027-markdown-code-blocks-proven-by-extraction.md)).
//! A block fenced `rust,ignore` is not compiled; none is today.

use std::path::Path;

use crate::markdown::{Block, blocks};

/// The documents whose code blocks are proven, relative to the checkout: the README, every
/// `docs/*.md` and the packages' READMEs.
pub fn documents(checkout: &Path) -> Vec<String> {
    let mut found = vec!["README.md".to_owned()];
    for dir in ["docs", "packages"] {
        let mut names: Vec<String> = std::fs::read_dir(checkout.join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter_map(|path| {
                let file = if dir == "packages" {
                    path.join("README.md")
                } else {
                    path
                };
                let is_md = file.extension().is_some_and(|ext| ext == "md") && file.is_file();
                is_md.then(|| file.strip_prefix(checkout).unwrap().display().to_string())
            })
            .collect();
        names.sort();
        found.extend(names);
    }
    found
}

/// A Rust block the guide's project compiles, with what it needs around it.
pub struct Context {
    /// The document, relative to the checkout.
    pub document: &'static str,
    /// The block's first line, which names it.
    pub first_line: &'static str,
    /// Module-level items before the block: `use` lines and stubs.
    pub prelude: &'static str,
    /// The function the block is the body of (it ends with `Ok(())` added).
    pub signature: &'static str,
}

/// Every Rust fragment of the documents, with its context.
pub const CONTEXTS: [Context; 6] = [
    Context {
        document: "README.md",
        first_line: "use reel_protocol::{decode_server, EventDecoder, Platform, SessionConfig};",
        prelude: "use reel::protocol as reel_protocol;",
        signature: "fn block() -> Result<(), reel::Failure>",
    },
    Context {
        document: "docs/getting-started.md",
        first_line: "use std::sync::Arc;",
        prelude: "use reel::tools::{InputStreamingTool, StreamingTool, ToolFunction};\n\
                  use reel::fluent::Live;\n\
                  async fn ask_the_user(message: &str) -> reel::tools::ToolConfirmation {\n\
                  \x20   todo!()\n\
                  }",
        signature: "fn block<R: ToolFunction, E: ToolFunction, S: StreamingTool, I: InputStreamingTool>(\n\
                    \x20   get_rate: R,\n\
                    \x20   send_email: E,\n\
                    \x20   TrackOrder: S,\n\
                    \x20   ListenForCode: I,\n\
                    ) -> Result<(), reel::Failure>",
    },
    Context {
        document: "docs/record-and-replay.md",
        first_line: "let builder = LiveSessionBuilder::new(config, endpoint)",
        prelude: "use std::sync::Arc;\n\
                  use reel::actors::LiveSessionBuilder;\n\
                  use reel::protocol::{ApiEndpoint, SessionConfig};\n\
                  use reel::recorder::FileWireRecorder;\n\
                  use reel::recorder::journal::FileJournalSink;",
        signature: "fn block(config: SessionConfig, endpoint: ApiEndpoint) -> Result<(), reel::Failure>",
    },
    Context {
        document: "docs/record-and-replay.md",
        first_line: "let builder = LiveSessionBuilder::new(config, ApiEndpoint::offline())",
        prelude: "use reel::actors::LiveSessionBuilder;\n\
                  use reel::actors::phases::PhaseMachine;\n\
                  use reel::tools::ToolDispatcher;\n\
                  use reel::protocol::{ApiEndpoint, SessionConfig};\n\
                  use reel::replayer::{Pacing, ReplayOptions, Tape, replay_session};\n\
                  fn my_tools() -> ToolDispatcher {\n\
                  \x20   todo!()\n\
                  }\n\
                  fn my_phases() -> PhaseMachine {\n\
                  \x20   todo!()\n\
                  }",
        signature: "async fn block(config: SessionConfig) -> Result<(), reel::Failure>",
    },
    Context {
        document: "docs/record-and-replay.md",
        first_line: "let recorder = TraceRecorder::new(\"extractor\", \"my-app\", clock).save_on_drop(\"calls.trace.json\");",
        prelude: "use std::sync::Arc;\n\
                  use reel::llm::{GeminiLlm, TraceRecorder, TraceReplayLlm};\n\
                  use reel::recorder::clock::SharedClock;",
        signature: "fn block(clock: SharedClock) -> Result<(), reel::Failure>",
    },
    Context {
        document: "docs/record-and-replay.md",
        first_line: "#[derive(serde::Deserialize, schemars::JsonSchema)]",
        prelude: "use std::sync::Arc;\n\
                  use reel::fluent::{Live, LiveBuilder};\n\
                  use reel::llm::{BaseLlm, CassetteMode, GeminiLlm};\n\
                  use reel::recorder::journal::read_journal;",
        signature: "async fn block(model: Arc<dyn BaseLlm>) -> Result<(), reel::Failure>",
    },
];

/// Whether `block` is one of the getting-started guide's project files, proven by building
/// and running that project.
pub fn is_guide_project_file(document: &str, block: &Block) -> bool {
    let first = block.text.lines().next().unwrap_or("");
    document == "docs/getting-started.md"
        && ["// src/lib.rs", "// src/main.rs", "// tests/replay.rs"].contains(&first)
}

/// The Rust blocks of `document` (text) that neither the guide's project nor a context
/// proves: `(line, first line)` each.
pub fn unproven(document: &str, text: &str) -> Vec<(usize, String)> {
    blocks(text)
        .into_iter()
        .filter(|block| block.lang() == "rust" && !block.info.contains("ignore"))
        .filter(|block| !is_guide_project_file(document, block))
        .filter(|block| {
            let first = block.text.lines().next().unwrap_or("");
            !CONTEXTS
                .iter()
                .any(|context| context.document == document && context.first_line == first)
        })
        .map(|block| {
            (
                block.line,
                block.text.lines().next().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// The one block `context` names, in its document's `text`.
pub fn block_of(context: &Context, text: &str) -> Block {
    let named: Vec<Block> = blocks(text)
        .into_iter()
        .filter(|block| block.lang() == "rust")
        .filter(|block| block.text.lines().next() == Some(context.first_line))
        .collect();
    match named.as_slice() {
        [block] => block.clone(),
        _ => panic!(
            "{}: expected one rust block starting `{}`, found {}",
            context.document,
            context.first_line,
            named.len()
        ),
    }
}

/// The example file that compiles `block` in `context`: `examples/NAME.rs` of the guide's
/// project. Never run: stubs are `todo!()`.
pub fn example_source(context: &Context, block: &Block) -> String {
    let body: String = block
        .text
        .lines()
        .map(|line| format!("    {line}\n").replace("    \n", "\n"))
        .collect();
    format!(
        "//! {}, line {}: compiled in its context (tests/support/doc_blocks.rs).\n\
         #![allow(unused, dead_code, non_snake_case, unreachable_code)]\n\n{}\n\n{} {{\n{body}    Ok(())\n}}\n\nfn main() {{}}\n",
        context.document, block.line, context.prelude, context.signature
    )
}

/// Writes every context's example into the project at `project`, reading the documents
/// from `checkout`; returns the examples' names.
pub fn write_examples(checkout: &Path, project: &Path) -> Vec<String> {
    let dir = project.join("examples");
    std::fs::create_dir_all(&dir).unwrap();
    CONTEXTS
        .iter()
        .enumerate()
        .map(|(index, context)| {
            let text = std::fs::read_to_string(checkout.join(context.document)).unwrap();
            let block = block_of(context, &text);
            let name = format!("doc_block_{}", index + 1);
            std::fs::write(
                dir.join(format!("{name}.rs")),
                example_source(context, &block),
            )
            .unwrap();
            name
        })
        .collect()
}
