//! [`Flow::to_mermaid`]: the DAG as a Mermaid flowchart.

use std::fmt::Write;

use crate::flow::Flow;

/// A label with the characters Mermaid reads specially written as its entities.
fn label(text: &str) -> String {
    text.replace('"', "#quot;")
        .replace('<', "#lt;")
        .replace('>', "#gt;")
}

impl Flow {
    /// The flow as a Mermaid flowchart: one node per step (`s0`, `s1`, … in declaration
    /// order; a terminal step rounded), labelled with its name, the tools it allows and
    /// its done guard; `after` edges solid, `before` edges dotted; the cross-cutting
    /// constraints (`once`, `never…until`, `commit`, `require`) as a note.
    pub fn to_mermaid(&self) -> String {
        let mut out = String::from("flowchart TD\n");
        let node = |id: &str| {
            self.steps
                .iter()
                .position(|s| s.id == id)
                .map_or_else(|| "missing".to_owned(), |i| format!("s{i}"))
        };
        for (i, step) in self.steps.iter().enumerate() {
            let mut text = label(&step.id);
            if !step.allow.is_empty() {
                let _ = write!(text, "<br/>allow: {}", label(&step.allow.join(", ")));
            }
            if let Some(done) = &step.done {
                let _ = write!(text, "<br/>done: {}", label(&done.to_string()));
            }
            let (open, close) = if step.terminal {
                ("([", "])")
            } else {
                ("[", "]")
            };
            let _ = writeln!(out, "    s{i}{open}\"{text}\"{close}");
        }
        for (i, step) in self.steps.iter().enumerate() {
            for dep in &step.after {
                let _ = writeln!(out, "    {} --> s{i}", node(dep));
            }
        }
        for before in &self.before {
            let _ = writeln!(
                out,
                "    {} -.->|before| {}",
                node(&before.first),
                node(&before.then)
            );
        }
        let mut notes = Vec::new();
        notes.extend(self.once.iter().map(|t| format!("once: {t}")));
        notes.extend(
            self.never
                .iter()
                .map(|n| format!("never {} until {}", n.tool, n.until)),
        );
        notes.extend(
            self.commit
                .iter()
                .map(|c| format!("commit {} until {}", c.tool, c.until)),
        );
        if !self.require.is_empty() {
            notes.push(format!("require: {}", self.require.join(", ")));
        }
        if !notes.is_empty() {
            let notes: Vec<String> = notes.iter().map(|n| label(n)).collect();
            let _ = writeln!(out, "    constraints[\"{}\"]", notes.join("<br/>"));
        }
        out
    }
}
