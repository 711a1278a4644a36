//! The pending bytes of a line-oriented log, written out so that only whole lines land.
//!
//! A `BufWriter` hands a write larger than its buffer straight to the file; if the disk
//! fills halfway through, half a line is on disk, the rest is gone, and the next entry is
//! glued onto the torn one: corruption in the middle of the file. [`LineBuffer`] instead
//! keeps every byte not yet accepted by the file and tries again on the next write, so a
//! log that hit a full disk resumes with whole lines once space frees up. What it holds is
//! capped; past the cap new lines are refused (the caller counts them as lost).

use std::io::{self, Write};

/// How many pending bytes a [`LineBuffer`] holds at most before refusing new lines: about
/// three minutes of a voice session's wire log while the disk is full.
pub(crate) const DEFAULT_MAX_PENDING_BYTES: usize = 16 * 1024 * 1024;

/// Pending lines in front of a writer.
#[derive(Debug)]
pub(crate) struct LineBuffer<W: Write> {
    out: W,
    pending: Vec<u8>,
    max_pending: usize,
}

/// A line the buffer refused: it was full, the writer having failed to take its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Full;

impl<W: Write> LineBuffer<W> {
    /// Pending lines in front of `out`, holding at most `max_pending` bytes (a single line
    /// longer than that is still accepted when nothing else is pending).
    pub(crate) fn new(out: W, max_pending: usize) -> Self {
        LineBuffer {
            out,
            pending: Vec::new(),
            max_pending,
        }
    }

    /// Appends one whole line (ending in `\n`), unless the buffer is full.
    pub(crate) fn push(&mut self, line: &[u8]) -> Result<(), Full> {
        let room = self.max_pending.saturating_sub(self.pending.len());
        if line.len() > room && !self.pending.is_empty() {
            return Err(Full);
        }
        self.pending.extend_from_slice(line);
        Ok(())
    }

    /// How many bytes wait to be written.
    pub(crate) fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Writes out everything pending, then flushes the writer. On an error, what the writer
    /// took is dropped from the buffer and the rest stays for the next call.
    pub(crate) fn write_out(&mut self) -> io::Result<()> {
        let mut written = 0;
        let result = loop {
            if written == self.pending.len() {
                break Ok(());
            }
            match self.out.write(&self.pending[written..]) {
                Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => written += n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => break Err(error),
            }
        };
        self.pending.drain(..written);
        result?;
        self.out.flush()
    }

    /// The writer.
    pub(crate) fn get_ref(&self) -> &W {
        &self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes at most `budget` bytes in total, then fails like a full disk until given more.
    #[derive(Debug, Default)]
    struct Disk {
        data: Vec<u8>,
        budget: usize,
    }

    impl Write for Disk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.budget == 0 {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            let n = buf.len().min(self.budget);
            self.budget -= n;
            self.data.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_line_cut_by_a_full_disk_is_completed_once_space_frees_up() {
        let mut buffer = LineBuffer::new(
            Disk {
                budget: 5,
                ..Disk::default()
            },
            1024,
        );
        buffer.push(b"first line\n").unwrap();
        let error = buffer.write_out().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
        assert_eq!(buffer.get_ref().data, b"first");
        assert_eq!(buffer.pending_len(), 6);

        buffer.push(b"second\n").unwrap();
        buffer.out.budget = usize::MAX;
        buffer.write_out().unwrap();
        assert_eq!(buffer.get_ref().data, b"first line\nsecond\n");
        assert_eq!(buffer.pending_len(), 0);
    }

    #[test]
    fn a_full_buffer_refuses_lines_but_takes_one_long_line_when_empty() {
        let mut buffer = LineBuffer::new(Disk::default(), 8);
        buffer.push(b"0123456789\n").unwrap();
        assert_eq!(buffer.push(b"a\n"), Err(Full));
        assert_eq!(buffer.pending_len(), 11);

        let mut buffer = LineBuffer::new(Disk::default(), 8);
        buffer.push(b"abc\n").unwrap();
        buffer.push(b"def\n").unwrap();
        assert_eq!(buffer.push(b"g\n"), Err(Full));
        assert_eq!(buffer.pending_len(), 8);
    }

    #[test]
    fn a_writer_that_takes_nothing_is_an_error() {
        struct Zero;
        impl Write for Zero {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Ok(0)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut buffer = LineBuffer::new(Zero, 8);
        buffer.push(b"x\n").unwrap();
        assert_eq!(
            buffer.write_out().unwrap_err().kind(),
            io::ErrorKind::WriteZero
        );
        assert_eq!(buffer.pending_len(), 2);
    }
}
