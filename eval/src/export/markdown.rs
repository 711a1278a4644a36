//! The report as Markdown, for a pull-request comment: a headline with the verdict, a
//! table of every case on every recording, then the details of what did not pass.

use std::fmt::Write as _;

use crate::report::{CaseOutcome, EvaluationReport};

/// Text from a recording, safe in a table cell: one line, `|`, backticks, emphasis and
/// link brackets escaped, HTML
/// specials as entities (GitHub renders HTML in comments), control characters dropped.
pub fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '`' => out.push_str("\\`"),
            '*' => out.push_str("\\*"),
            '_' => out.push_str("\\_"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '(' => out.push_str("\\("),
            ')' => out.push_str("\\)"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' | '\t' => out.push(' '),
            // Control characters and the bidirectional overrides: text from a recording is
            // shown, never obeyed, in a terminal or a rendered comment.
            c if c.is_control()
                || ('\u{202A}'..='\u{202E}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c) => {}
            c => out.push(c),
        }
    }
    out
}

fn mark(outcome: CaseOutcome) -> &'static str {
    match outcome {
        CaseOutcome::Passed => "✅ pass",
        CaseOutcome::Failed => "❌ fail",
        CaseOutcome::Error => "⚠️ error",
    }
}

/// `report` as Markdown, ending with a newline.
pub fn to_markdown(report: &EvaluationReport) -> String {
    let s = &report.summary;
    let mut out = String::new();
    // Writing to a String cannot fail; the results of `writeln!` are ignored below.
    let _ = writeln!(
        out,
        "## {} reel eval: {} — {} of {} cases passed",
        if report.passed { "✅" } else { "❌" },
        cell(&report.suite),
        s.passed,
        s.cases
    );
    out.push('\n');
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut counts = format!(
        "{} · {} passed · {} failed · {}",
        plural(s.recordings, "recording", "recordings"),
        s.passed,
        s.failed,
        plural(s.errors, "error", "errors")
    );
    if s.unreadable > 0 {
        counts.push_str(&format!(" · **{} unreadable**", s.unreadable));
    }
    if let Some(cost) = &s.cost {
        // The figure is ours; the currency and the models' names come from files.
        let mut text = format!(" · cost {:.6} {}", cost.amount, cell(&cost.currency));
        if cost.unpriced_answers > 0 {
            text.push_str(&format!(
                " (at least: {} unpriced{})",
                plural(cost.unpriced_answers as usize, "answer", "answers"),
                if cost.unpriced_models.is_empty() {
                    String::new()
                } else {
                    let models: Vec<String> =
                        cost.unpriced_models.iter().map(|m| cell(m)).collect();
                    format!(", no price for {}", models.join(", "))
                }
            ));
        }
        counts.push_str(&text);
    }
    let _ = writeln!(out, "{counts}\n");
    out.push_str("| recording | case | criterion | score | threshold | result |\n");
    out.push_str("|---|---|---|---:|---:|---|\n");
    for recording in &report.recordings {
        if let Some(error) = &recording.error {
            let _ = writeln!(
                out,
                "| {} | — | — | — | — | ⚠️ unreadable: {} |",
                cell(&recording.name),
                cell(error)
            );
        }
        for result in &recording.cases {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                cell(&recording.name),
                cell(&result.case),
                cell(&result.criterion),
                result
                    .score
                    .map_or_else(|| "—".to_owned(), |v| format!("{v:.2}")),
                format_args!("{:.2}", result.threshold),
                mark(result.outcome)
            );
        }
    }
    let details: Vec<String> = report
        .recordings
        .iter()
        .flat_map(|r| {
            r.cases
                .iter()
                .filter(|c| c.outcome != CaseOutcome::Passed)
                .map(move |c| {
                    format!(
                        "- **{}** · {}: {}",
                        cell(&r.name),
                        cell(&c.case),
                        cell(&c.detail)
                    )
                })
        })
        .collect();
    if !details.is_empty() {
        out.push_str("\n<details><summary>What did not pass</summary>\n\n");
        for line in details {
            let _ = writeln!(out, "{line}");
        }
        out.push_str("\n</details>\n");
    }
    out
}
