//! Code blocks of the project's markdown, for the tests that prove them: each fenced block
//! with its info string (`rust`, `toml`, `sh`, …), the line its fence opens on, and its text.

/// The getting-started guide, as the tests read it.
pub const GUIDE: &str = include_str!("../../docs/getting-started.md");

/// One fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// What follows the opening fence: `rust`, `toml`, `sh`, `text`, `rust,ignore`, …
    pub info: String,
    /// The 1-based line of the opening fence.
    pub line: usize,
    /// The block's lines, each ending in a newline.
    pub text: String,
}

impl Block {
    /// The info string's first word: the language.
    pub fn lang(&self) -> &str {
        self.info.split([',', ' ']).next().unwrap_or("")
    }
}

/// Every fenced (```) block of `markdown`, in order. An unclosed fence is a bug in the
/// document: this panics naming its line.
pub fn blocks(markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (index, line) in markdown.lines().enumerate() {
        match open.as_mut() {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some(Block {
                        info: info.trim().to_owned(),
                        line: index + 1,
                        text: String::new(),
                    });
                }
            }
            Some(block) => {
                if line.trim_end() == "```" {
                    found.extend(open.take());
                } else {
                    block.text.push_str(line);
                    block.text.push('\n');
                }
            }
        }
    }
    if let Some(block) = open {
        panic!(
            "the code block opened on line {} is never closed",
            block.line
        );
    }
    found
}

/// The text of the one block of `markdown` whose first line names `file` (`// src/lib.rs`,
/// `# Cargo.toml`), that first line included.
pub fn block_for_file(markdown: &str, file: &str) -> String {
    let named: Vec<Block> = blocks(markdown)
        .into_iter()
        .filter(|block| {
            let first = block.text.lines().next().unwrap_or("");
            first == format!("// {file}") || first == format!("# {file}")
        })
        .collect();
    match named.as_slice() {
        [block] => block.text.clone(),
        _ => panic!(
            "expected one code block naming {file}, found {}",
            named.len()
        ),
    }
}
