//! Property checks shared by the cargo-fuzz targets in `fuzz/` and the
//! stable regression harness `tests/fuzz_regressions.rs`.
//!
//! Each `check_*` function takes arbitrary bytes, drives one part of the
//! server with them, and panics when a property does not hold (not only on
//! a crash). The fuzz targets are one-line calls to these functions, and the
//! regression harness replays every file of `fuzz/regressions/<target>/` and
//! `fuzz/seeds/<target>/` through the same function, so a crash found once
//! stays fixed on stable Rust.
//!
//! Nothing here touches the network: upstream answers come from in-process
//! fakes ([`upstream`]) over the recorded FxTwitter fixtures.

mod hostile;
mod http;
mod mcp;
mod render;
pub mod upstream;
mod upstream_reader;

pub use hostile::{check_expand, check_syndication};
pub use http::{check_chunked, check_http_conn, check_parse_head};
pub use mcp::{check_header_b64, check_mcp_dispatch};
pub use render::check_render;
pub use upstream_reader::check_upstream_reader;

/// A fuzz target: its directory name under `fuzz/` and its property check.
pub struct Target {
    /// Name of the cargo-fuzz target and of its seed/regression folders.
    pub name: &'static str,
    /// The property check; panics on a violation.
    pub check: fn(&[u8]),
}

/// Every fuzz target, in `fuzz/Cargo.toml` order.
pub const TARGETS: [Target; 8] = [
    Target {
        name: "http_conn",
        check: check_http_conn,
    },
    Target {
        name: "header_b64",
        check: check_header_b64,
    },
    Target {
        name: "mcp_dispatch",
        check: check_mcp_dispatch,
    },
    Target {
        name: "chunked",
        check: check_chunked,
    },
    Target {
        name: "render",
        check: check_render,
    },
    Target {
        name: "syndication",
        check: check_syndication,
    },
    Target {
        name: "expand",
        check: check_expand,
    },
    Target {
        name: "upstream_reader",
        check: check_upstream_reader,
    },
];

/// Reads the control bytes at the front of a fuzz input. Past the end every
/// read yields zero, so any input is a valid plan.
pub(crate) struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Input<'a> {
        Input { data }
    }

    /// The next byte, or 0 when the input is exhausted.
    pub(crate) fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    /// The next `n` bytes (fewer when the input is shorter).
    pub(crate) fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    /// Whether everything was read.
    pub(crate) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Everything not read yet.
    pub(crate) fn rest(self) -> &'a [u8] {
        self.data
    }
}

/// 64-bit FNV-1a, for short digests of requests in test handlers.
pub(crate) fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        // Separator so ("ab","c") and ("a","bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
