//! Every relative link in the repository's markdown — the README, `docs/` with the decision
//! records and the benchmark notebook, the crates' and packages' READMEs — leads to a file
//! that exists, and a link with a `#fragment` into a markdown file to one of its headings
//! (GitHub's anchors). Links to other sites are not followed. `scripts/check-doc-links`
//! runs this module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::markdown::blocks;

#[test]
fn every_relative_link_in_the_markdown_leads_somewhere() {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
    let broken = broken_links(checkout);
    assert!(
        broken.is_empty(),
        "broken links in the markdown ({}):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn a_missing_file_and_a_missing_heading_are_named_with_their_line() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("doc_links_fixture");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("docs/decisions")).unwrap();
    std::fs::write(
        dir.join("docs/decisions/0001-one.md"),
        "# One\n\n## The `Child` enum\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("README.md"),
        "# Read me\n\
         [one](docs/decisions/0001-one.md#the-child-enum) and [gone](docs/decisions/0002-two.md)\n\
         ```text\n[not a link](nowhere.md)\n```\n\
         `[in code](nowhere.md)` [top](#read-me) [lost](#nowhere) [site](https://example.com/x)\n\
         [1.2, 3.4]: a paragraph's line, not a definition\n\
         \n\
         [ref]: docs/decisions/0001-one.md#one-1\n",
    )
    .unwrap();
    assert_eq!(
        broken_links(&dir),
        [
            "README.md:2: docs/decisions/0002-two.md: no such file",
            "README.md:6: #nowhere: no heading has this anchor in README.md",
            "README.md:9: docs/decisions/0001-one.md#one-1: no heading has this anchor in \
             docs/decisions/0001-one.md",
        ]
    );
}

#[test]
fn anchors_are_githubs() {
    let headings = "# A\n## 3. Write a session with `Live::builder()`\n## A\n\
                    ### Issue 25, §3: flushing — when [the queue](x.md) empties\n## 1.5M frames/s\n";
    assert_eq!(
        anchors(headings),
        BTreeSet::from(
            [
                "a",
                "3-write-a-session-with-livebuilder",
                "a-1",
                "issue-25-3-flushing--when-the-queue-empties",
                "15m-framess",
            ]
            .map(str::to_owned)
        )
    );
}

/// Every broken relative link under `checkout`, as `file:line: target: why`, in file order.
fn broken_links(checkout: &Path) -> Vec<String> {
    let mut files = Vec::new();
    markdown_files(checkout, &mut files);
    files.sort();
    let mut headings: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = shown(checkout, file);
        for (line, target) in links(&text) {
            if is_external(&target) {
                continue;
            }
            let (path, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path.replace("%20", " "))
            };
            if !resolved.exists() {
                broken.push(format!("{name}:{line}: {target}: no such file"));
                continue;
            }
            let Some(fragment) = fragment else { continue };
            if resolved.extension().is_none_or(|ext| ext != "md") {
                continue;
            }
            let known = headings.entry(resolved.clone()).or_insert_with(|| {
                anchors(&std::fs::read_to_string(&resolved).unwrap_or_default())
            });
            if !known.contains(fragment) {
                let into = shown(checkout, &resolved);
                broken.push(format!(
                    "{name}:{line}: {target}: no heading has this anchor in {into}"
                ));
            }
        }
    }
    broken
}

/// The markdown files under `dir`, leaving out build output, dependencies and hidden folders.
fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                markdown_files(&path, found);
            }
        } else if name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// `path` relative to the checkout, with `/` between its parts.
fn shown(checkout: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(checkout).unwrap_or(path);
    let parts: Vec<_> = relative.iter().map(|part| part.to_string_lossy()).collect();
    parts.join("/")
}

/// A link with a scheme (`https:`, `mailto:`) leaves the repository.
fn is_external(target: &str) -> bool {
    target
        .split(['/', '#'])
        .next()
        .is_some_and(|first| first.contains(':'))
}

/// The lines of `markdown` outside fenced code blocks, numbered from 1.
fn prose(markdown: &str) -> impl Iterator<Item = (usize, &str)> {
    let code: BTreeSet<usize> = blocks(markdown)
        .iter()
        .flat_map(|block| block.line..=block.line + block.text.lines().count() + 1)
        .collect();
    (1..)
        .zip(markdown.lines())
        .filter(move |(number, _)| !code.contains(number))
}

/// The targets of the inline links (`[text](target)`, images too) and reference definitions
/// (`[label]: target`, which start a paragraph) of `markdown`, with their lines; code spans
/// and blocks are not prose.
fn links(markdown: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut after_blank = true;
    for (number, line) in prose(markdown) {
        // Outside code spans: the even pieces between backticks.
        let text: String = line.split('`').step_by(2).collect();
        let trimmed = text.trim_start();
        if after_blank
            && trimmed.starts_with('[')
            && let Some((_, target)) = trimmed.split_once("]: ")
        {
            found.extend(
                target
                    .split_whitespace()
                    .next()
                    .map(|t| (number, t.to_owned())),
            );
        }
        after_blank = trimmed.is_empty();
        let mut rest = text.as_str();
        while let Some(start) = rest.find("](") {
            rest = &rest[start + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = rest[..end].split_whitespace().next().unwrap_or("");
            let target = target.trim_start_matches('<').trim_end_matches('>');
            if !target.is_empty() {
                found.push((number, target.to_owned()));
            }
            rest = &rest[end..];
        }
    }
    found
}

/// The anchors GitHub gives the headings of `markdown`: the text lowercased, links reduced
/// to their text, spaces turned into `-`, every other character but letters, digits, `-`
/// and `_` left out; a repeated anchor gets `-1`, `-2`, …
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut found = BTreeSet::new();
    for (_, line) in prose(markdown) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        let Some(title) = line[hashes..].strip_prefix(' ') else {
            continue;
        };
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let mut slug = String::new();
        let mut rest = title.trim();
        // A link's target is not part of its heading's anchor.
        while let Some(start) = rest.find("](") {
            slug.push_str(&slugged(&rest[..start]));
            rest = rest[start..].split_once(')').map_or("", |(_, after)| after);
        }
        slug.push_str(&slugged(rest));
        let count = seen.entry(slug.clone()).or_insert(0);
        found.insert(match *count {
            0 => slug,
            n => format!("{slug}-{n}"),
        });
        *count += 1;
    }
    found
}

fn slugged(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}
