//! The connection table: slots addressed by a dense index, stored in
//! fixed-size chunks so that growing it never moves (or copies) a slot.
//!
//! A `Vec` of slots doubles its capacity as connections arrive; each
//! doubling copies every slot into a fresh allocation and, under an
//! allocator that keeps freed memory (mimalloc, the static build's), the
//! old block stays resident. Chunks cost at most one partly used chunk.

use std::ops::{Index, IndexMut};

/// Slots per chunk.
///
/// Default is 128 (about 54 KiB at the current slot size). A larger chunk
/// wastes more on a partly used last chunk; a smaller one means more chunk
/// pointers. Nothing is visible to peers.
pub const SLAB_CHUNK_SLOTS: usize = 128;

/// Slots that hold a `T` or nothing.
pub struct Slab<T> {
    chunks: Vec<Box<[Option<T>]>>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Slots made so far (empty or not).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no slot was made yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends an empty slot and returns its index.
    pub fn push_vacant(&mut self) -> usize {
        if self.len == self.chunks.len() * SLAB_CHUNK_SLOTS {
            self.chunks
                .push((0..SLAB_CHUNK_SLOTS).map(|_| None).collect());
        }
        self.len += 1;
        self.len - 1
    }

    /// The slot at `index`, if it was made.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut Option<T>> {
        if index >= self.len {
            return None;
        }
        self.chunks
            .get_mut(index / SLAB_CHUNK_SLOTS)?
            .get_mut(index % SLAB_CHUNK_SLOTS)
    }
}

impl<T> Index<usize> for Slab<T> {
    type Output = Option<T>;

    fn index(&self, index: usize) -> &Option<T> {
        assert!(index < self.len, "slot {index} of {}", self.len);
        &self.chunks[index / SLAB_CHUNK_SLOTS][index % SLAB_CHUNK_SLOTS]
    }
}

impl<T> IndexMut<usize> for Slab<T> {
    fn index_mut(&mut self, index: usize) -> &mut Option<T> {
        assert!(index < self.len, "slot {index} of {}", self.len);
        &mut self.chunks[index / SLAB_CHUNK_SLOTS][index % SLAB_CHUNK_SLOTS]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_dense_stable_and_bounded() {
        let mut slab: Slab<String> = Slab::default();
        assert!(slab.is_empty());
        assert!(slab.get_mut(0).is_none());
        for i in 0..(2 * SLAB_CHUNK_SLOTS + 3) {
            assert_eq!(slab.push_vacant(), i);
            assert!(slab[i].is_none());
            slab[i] = Some(format!("c{i}"));
        }
        let n = slab.len();
        assert_eq!(n, 2 * SLAB_CHUNK_SLOTS + 3);
        assert_eq!(slab.chunks.len(), 3);
        // Growing never moved a slot: its address is the same after.
        let before: *const Option<String> = &slab[5];
        for _ in 0..SLAB_CHUNK_SLOTS {
            slab.push_vacant();
        }
        assert!(std::ptr::eq(before, &slab[5]));
        assert_eq!(slab[SLAB_CHUNK_SLOTS].as_deref(), Some("c128"));
        assert_eq!(slab.get_mut(n - 1).unwrap().take().as_deref(), Some("c258"));
        assert!(slab[n - 1].is_none());
        assert!(
            slab.get_mut(slab.len()).is_none(),
            "past the last made slot"
        );
    }
}
