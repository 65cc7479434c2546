//! xmd: a small, fast MCP server (and client) that reads public X content.
//!
//! Data flows one way:
//!
//! ```text
//! socket ─► server (mio event loop, connection state machine)
//!        ─► http (httparse head parsing, body framing, responses)
//!        ─► app (routes, Accept/Content-Type/Origin, JSON or SSE framing)
//!        ─► mcp (state-free JSON-RPC dispatcher, both protocol eras)
//!        ─► x::tools (argument validation, tool runs on a worker thread)
//!        ─► x::upstream (FxTwitter over ureq) ─► x::render (Markdown)
//! ```
//!
//! Imports only point down this list: `server` never names MCP, `mcp` never
//! names HTTP types, and `x` knows nothing of either.
#![forbid(unsafe_code)]

pub mod app;
pub mod calendar;
pub mod cli;
/// `xmd client` (a general MCP client), only with the `client` feature (on
/// by default; the shipped static serving build turns it off for size).
#[cfg(feature = "client")]
pub mod client;
pub mod config;
pub mod connect;
pub mod docs;
/// The fuzz targets' property checks (`fuzz/harness/`), only with the
/// `fuzzing` feature: the fuzz crate and the tests enable it, the shipped
/// build neither compiles it nor needs `fuzz/` and `tests/` to be present.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
#[path = "../fuzz/harness/mod.rs"]
pub mod fuzzing;
pub mod heap;
pub mod http;
pub mod json;
pub mod mcp;
pub mod metrics;
/// `xmd probe` (a conformance and hardening harness for any MCP server),
/// with the `client` feature: it settles eras through [`client`].
#[cfg(feature = "client")]
pub mod probe;
pub mod server;
pub mod text;
pub mod x;
