//! The room an upstream answer's body is read into ([`BodyBuf`]): exact
//! and shared from the start when the head announces the length, so the
//! finished body is handed on without a copy; grown by doubling when it
//! does not.

use std::sync::Arc;

/// A body's room: `len()` bytes, zeroed until read into.
#[derive(Debug)]
pub enum BodyBuf {
    /// No length announced: grown as bytes come.
    Growing(Vec<u8>),
    /// The announced length, allocated once as the shared slice the
    /// answer carries (`UpstreamResponse::body`).
    Exact(Arc<[u8]>),
}

impl Default for BodyBuf {
    fn default() -> BodyBuf {
        BodyBuf::Growing(Vec::new())
    }
}

impl BodyBuf {
    /// Room for exactly `n` bytes, zeroed (one allocation; `repeat_n` has
    /// a trusted length, so the shared slice is written in place).
    pub fn exact(n: usize) -> BodyBuf {
        BodyBuf::Exact(std::iter::repeat_n(0u8, n).collect())
    }

    /// Bytes of room.
    pub fn len(&self) -> usize {
        match self {
            BodyBuf::Growing(v) => v.len(),
            BodyBuf::Exact(a) => a.len(),
        }
    }

    /// Whether there is no room.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Grows a growing room to `n` bytes (zeroed); an exact room stays.
    pub fn grow_to(&mut self, n: usize) {
        if let BodyBuf::Growing(v) = self {
            if n > v.len() {
                v.resize(n, 0);
            }
        }
    }

    /// The room from `from` to `to` (clamped to the room), to read into.
    pub fn room(&mut self, from: usize, to: usize) -> &mut [u8] {
        let all: &mut [u8] = match self {
            BodyBuf::Growing(v) => v,
            // The reader holds the only reference until it hands the
            // body on; were it shared, there would be no room.
            BodyBuf::Exact(a) => Arc::get_mut(a).map_or(&mut [], |b| b),
        };
        let to = to.min(all.len());
        all.get_mut(from.min(to)..to).unwrap_or_default()
    }

    /// The first `filled` bytes as the shared body: without a copy when
    /// the room was exact and is full.
    pub fn into_shared(self, filled: usize) -> Arc<[u8]> {
        match self {
            BodyBuf::Exact(a) if a.len() == filled => a,
            BodyBuf::Exact(a) => Arc::from(a.get(..filled).unwrap_or(&a)),
            BodyBuf::Growing(mut v) => {
                v.truncate(filled);
                v.into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BodyBuf;
    use proptest::prelude::*;

    proptest! {
        /// Whatever is written into the room, in any pieces, is the body
        /// handed on: exact or grown, full or not.
        #[test]
        fn the_shared_body_is_what_was_written(
            body in prop::collection::vec(any::<u8>(), 0..3000),
            exact in any::<bool>(),
            pieces in prop::collection::vec(1usize..700, 1..20),
            short in 0usize..3,
        ) {
            let want = &body[..body.len().saturating_sub(short)];
            let mut room = if exact { BodyBuf::exact(body.len()) } else { BodyBuf::default() };
            let mut filled = 0;
            for p in pieces.iter().cycle() {
                if filled >= want.len() {
                    break;
                }
                let end = (filled + p).min(want.len());
                room.grow_to(end);
                let dst = room.room(filled, end);
                prop_assert_eq!(dst.len(), end - filled);
                dst.copy_from_slice(&want[filled..end]);
                filled = end;
            }
            if exact {
                prop_assert_eq!(room.len(), body.len());
            }
            prop_assert_eq!(&*room.into_shared(filled), want);
        }
    }

    #[test]
    fn an_exact_full_room_is_handed_on_without_a_copy() {
        let mut room = BodyBuf::exact(4);
        room.room(0, 4).copy_from_slice(b"abcd");
        let BodyBuf::Exact(a) = &room else {
            panic!("exact")
        };
        let at = a.as_ptr();
        let shared = room.into_shared(4);
        assert_eq!(shared.as_ptr(), at);
        assert_eq!(&*shared, b"abcd");
    }
}
