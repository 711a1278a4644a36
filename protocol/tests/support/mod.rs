//! Shared by the short readers' differential tests: a deterministic generator and JSON
//! whitespace.

/// A small deterministic generator (xorshift64*), seeded per case so that a failure names
/// the seed that reproduces it.
pub struct Rng(u64);

impl Rng {
    /// The generator of case `seed` (any number; mixed so that neighbouring seeds differ).
    pub fn seeded(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// JSON whitespace, usually none.
pub fn ws(rng: &mut Rng) -> &'static str {
    if rng.chance(85) {
        ""
    } else {
        rng.pick(&[" ", "\n", "\t", "\r\n  "])
    }
}

/// A piece of a JSON string's contents: words, UTF-8, the short escapes, `\u` escapes (one
/// a surrogate pair) and, three times in a hundred, what JSON forbids or a reader must
/// refuse (a raw tab or control character, a lone quote, an unknown escape, a lone
/// surrogate).
pub fn string_piece(rng: &mut Rng) -> &'static str {
    if rng.chance(97) {
        rng.pick(&[
            "The weather",
            "London",
            "call-1",
            " ",
            "a",
            "21°",
            "é",
            "😀",
            "'",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\t",
            "\\b\\f\\r",
            "\\u00e9",
            "\\ud83d\\ude00",
        ])
    } else {
        rng.pick(&["\t", "\"", "\\x", "\\ud800", "\u{1}"])
    }
}
