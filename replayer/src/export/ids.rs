//! [`IdSeed`]: deterministic OpenTelemetry ids, derived from the recording, so exporting a
//! log twice gives the same bytes and two recordings get different ids.

use reel_recorder::wire_log::WireEntry;

/// FNV-1a, 64 bits: small, stable across Rust versions and platforms (unlike the standard
/// library's hasher, whose algorithm may change), and good enough to spread ids.
#[derive(Debug, Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new() -> Self {
        Fnv(Self::OFFSET)
    }

    fn bytes(mut self, bytes: &[u8]) -> Self {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(Self::PRIME);
        }
        self
    }

    fn number(self, n: u64) -> Self {
        self.bytes(&n.to_le_bytes())
    }
}

/// What every id of one export is derived from: a hash of the recording's setup frame (its
/// sequence number, time and bytes).
///
/// ```
/// use reel_recorder::wire_log::{Direction, WireEntry};
/// use reel_replayer::export::IdSeed;
///
/// let setup = WireEntry::frame(1, Direction::Out, 1_000, &br#"{"setup":{}}"#[..], None, false);
/// let seed = IdSeed::of_setup(&setup);
/// assert_eq!(seed.trace_id().len(), 32);
/// assert_eq!(seed.span_id("turn", &[0]), IdSeed::of_setup(&setup).span_id("turn", &[0]));
/// assert_ne!(seed.span_id("turn", &[0]), seed.span_id("turn", &[1]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdSeed(u64);

impl IdSeed {
    /// The seed of a recording whose setup frame is `setup`.
    pub fn of_setup(setup: &WireEntry) -> Self {
        IdSeed(
            Fnv::new()
                .number(setup.seq)
                .number(setup.ts_ms)
                .bytes(&setup.payload)
                .0,
        )
    }

    /// The seed of a recording that is not a wire log (a cassette): a hash of its bytes.
    pub fn of_bytes(bytes: &[u8]) -> Self {
        IdSeed(Fnv::new().bytes(bytes).0)
    }

    /// The trace id: 32 lowercase hex digits, never all zero.
    pub fn trace_id(&self) -> String {
        let high = self.id("trace", &[0]);
        let low = self.id("trace", &[1]);
        format!("{high:016x}{low:016x}")
    }

    /// The id of the span of `kind` at position `path` (a turn's index; a turn's index and
    /// a tool call's): 16 lowercase hex digits, never all zero.
    pub fn span_id(&self, kind: &str, path: &[u64]) -> String {
        format!("{:016x}", self.id(kind, path))
    }

    fn id(&self, kind: &str, path: &[u64]) -> u64 {
        let hash = path
            .iter()
            .fold(Fnv::new().number(self.0).bytes(kind.as_bytes()), |h, n| {
                h.number(*n)
            })
            .0;
        // An all-zero id is invalid in OpenTelemetry.
        hash.max(1)
    }
}
