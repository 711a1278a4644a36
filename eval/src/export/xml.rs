//! XML text for the exporters: escaping, and ids derived from names.

/// `text` for an XML attribute or element: `& < > " '` as entities, characters XML 1.0
/// cannot hold (control characters but tab, line feed and carriage return; U+FFFE, U+FFFF)
/// dropped, so text from a recording can never break the document.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// [`escape`] for an attribute's value: line breaks and tabs as character references too,
/// since a parser turns them into spaces in an attribute (XML's value normalization).
pub fn escape_attr(text: &str) -> String {
    escape(text)
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

/// A GUID-shaped id derived from `parts` (FNV-1a, twice): the same names give the same id
/// on every run, so a TRX file is reproducible.
pub fn guid(parts: &[&str]) -> String {
    let hash = |seed: u64| {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
        for part in parts {
            for byte in part.bytes().chain([0xff]) {
                h ^= u64::from(byte);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h
    };
    let (a, b) = (hash(0), hash(0x9e37_79b9_7f4a_7c15));
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        // Version 5 (name-based), as RFC 4122 marks it.
        (a & 0x0fff) | 0x5000,
        ((b >> 48) & 0x3fff) | 0x8000,
        b & 0xffff_ffff_ffff
    )
}
