//! Encoded response bytes waiting for the socket, kept as a queue of
//! chunks so that large shared bodies (the pre-serialized `tools/list`
//! result, embedded documents) are written with `writev` straight from
//! their one shared copy instead of being copied per response.

use std::collections::VecDeque;
use std::io::{self, IoSlice, Write};
use std::sync::Arc;

/// Shared or static byte runs at least this long are queued by reference;
/// shorter ones are copied into the current owned chunk (fewer iovecs).
///
/// Default is 1 KiB.
pub const SHARE_THRESHOLD_BYTES: usize = 1024;

/// An owned chunk shorter than this grows in place; a longer one is left
/// as it is and a new chunk started.
const GROW_IN_PLACE_BYTES: usize = 8 * 1024;

/// How far the heap held by an [`Outgoing`] may run ahead of its pending
/// bytes: one chunk growing in place (below [`GROW_IN_PLACE_BYTES`], so at
/// most twice that), up to 512 bytes of headroom per fresh chunk, and the
/// chunk queue itself.
///
/// Default is 64 KiB.
pub const MAX_SLACK_BYTES: usize = 64 * 1024;

/// Most chunks handed to one `writev` call.
const MAX_IOVECS: usize = 16;

#[derive(Debug)]
enum Chunk {
    Owned(Vec<u8>),
    Shared(Arc<[u8]>),
    Static(&'static [u8]),
}

impl Chunk {
    fn bytes(&self) -> &[u8] {
        match self {
            Chunk::Owned(v) => v,
            Chunk::Shared(a) => a,
            Chunk::Static(s) => s,
        }
    }
}

/// The pending output of one connection.
#[derive(Debug, Default)]
pub struct Outgoing {
    chunks: VecDeque<Chunk>,
    /// Bytes of the front chunk already written.
    offset: usize,
    /// Bytes not yet written.
    len: usize,
}

impl Outgoing {
    /// An empty queue (no allocation).
    pub fn new() -> Outgoing {
        Outgoing::default()
    }

    /// Bytes not yet written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether everything has been written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes held by owned chunks (shared ones are not counted: they
    /// belong to the process, not the connection).
    pub fn capacity(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| match c {
                Chunk::Owned(v) => v.capacity(),
                _ => 0,
            })
            .sum::<usize>()
            + self.chunks.capacity() * std::mem::size_of::<Chunk>()
    }

    /// Appends a copy of `bytes`.
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.len += bytes.len();
        if let Some(Chunk::Owned(v)) = self.chunks.back_mut() {
            // Append in place while it fits, or while the chunk is small;
            // otherwise start a new chunk, so capacity never runs far
            // ahead of the pending bytes (no doubling of a large buffer).
            if v.capacity() - v.len() >= bytes.len() || v.len() < GROW_IN_PLACE_BYTES {
                v.extend_from_slice(bytes);
                return;
            }
        }
        let mut v = Vec::with_capacity(bytes.len().max(512));
        v.extend_from_slice(bytes);
        self.chunks.push_back(Chunk::Owned(v));
    }

    /// Appends shared bytes, by reference when large.
    pub fn push_shared(&mut self, bytes: &Arc<[u8]>) {
        if bytes.len() < SHARE_THRESHOLD_BYTES {
            self.push_bytes(bytes);
        } else {
            self.len += bytes.len();
            self.chunks.push_back(Chunk::Shared(Arc::clone(bytes)));
        }
    }

    /// Appends static bytes, by reference when large.
    pub fn push_static(&mut self, bytes: &'static [u8]) {
        if bytes.len() < SHARE_THRESHOLD_BYTES {
            self.push_bytes(bytes);
        } else {
            self.len += bytes.len();
            self.chunks.push_back(Chunk::Static(bytes));
        }
    }

    /// Appends an owned buffer without copying when large.
    pub fn push_owned(&mut self, bytes: Vec<u8>) {
        if bytes.len() < SHARE_THRESHOLD_BYTES {
            self.push_bytes(&bytes);
        } else {
            self.len += bytes.len();
            self.chunks.push_back(Chunk::Owned(bytes));
        }
    }

    /// One `write_vectored` of the pending bytes; returns how many were
    /// written. Fully written chunks are dropped.
    ///
    /// # Errors
    /// Whatever the writer returns.
    pub fn write_once(&mut self, dst: &mut impl Write) -> io::Result<usize> {
        let mut slices: [IoSlice<'_>; MAX_IOVECS] = [IoSlice::new(&[]); MAX_IOVECS];
        let mut count = 0;
        for (i, chunk) in self.chunks.iter().take(MAX_IOVECS).enumerate() {
            let b = chunk.bytes();
            slices[i] = IoSlice::new(if i == 0 { &b[self.offset..] } else { b });
            count += 1;
        }
        let written = dst.write_vectored(&slices[..count])?;
        self.advance(written);
        Ok(written)
    }

    fn advance(&mut self, mut n: usize) {
        self.len -= n;
        while n > 0 {
            let Some(front) = self.chunks.front() else {
                break;
            };
            let left = front.bytes().len() - self.offset;
            if n >= left {
                n -= left;
                self.chunks.pop_front();
                self.offset = 0;
            } else {
                self.offset += n;
                n = 0;
            }
        }
        if self.chunks.is_empty() {
            *self = Outgoing::new();
        }
    }

    /// Every pending byte, copied (for tests and small one-off writes).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for (i, c) in self.chunks.iter().enumerate() {
            let b = c.bytes();
            out.extend_from_slice(if i == 0 { &b[self.offset..] } else { b });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepts at most `budget` bytes per call, honouring every slice.
    struct Trickle {
        out: Vec<u8>,
        budget: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(self.budget);
            self.out.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            let mut left = self.budget;
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(left);
                self.out.extend_from_slice(&b[..take]);
                n += take;
                left -= take;
                if left == 0 {
                    break;
                }
            }
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn mixed_chunks_come_out_in_order_for_any_write_size() {
        let shared: Arc<[u8]> = Arc::from(vec![b'S'; 3000]);
        let big_static: &'static [u8] = &[b'T'; 2048];
        for budget in [1, 7, 100, 1500, 5000, 100_000] {
            let mut o = Outgoing::new();
            o.push_bytes(b"head;");
            o.push_shared(&shared);
            o.push_bytes(b";mid;");
            o.push_static(big_static);
            o.push_owned(vec![b'O'; 1500]);
            o.push_bytes(b";end");
            let want = o.to_vec();
            assert_eq!(want.len(), o.len());
            let mut w = Trickle {
                out: Vec::new(),
                budget,
            };
            while !o.is_empty() {
                o.write_once(&mut w).unwrap();
            }
            assert_eq!(w.out, want, "budget {budget}");
            assert_eq!(o.capacity(), 0);
        }
    }

    #[test]
    fn small_shared_runs_are_copied_large_ones_referenced() {
        let small: Arc<[u8]> = Arc::from(&b"tiny"[..]);
        let large: Arc<[u8]> = Arc::from(vec![0u8; 4096]);
        let mut o = Outgoing::new();
        o.push_shared(&small);
        o.push_shared(&large);
        assert_eq!(o.chunks.len(), 2);
        assert_eq!(Arc::strong_count(&large), 2, "queued by reference");
        assert!(o.capacity() < 4096);
    }
}
