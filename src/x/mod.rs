//! Everything about X data: the FxTwitter upstream, the tools of the
//! registry (`registry.rs`: their schemas, argument validation and runs),
//! and the Markdown renderer.
//!
//! This module knows nothing of HTTP serving or MCP framing.
//!
//! Its files stand in layers, each naming only those below it
//! (tests/architecture.rs holds the table and fails on any other import,
//! and on any import circle in `src/`):
//! - leaves: `escape` and `linkify` (Markdown escaping), `url`, `error`
//!   (the error type and its codes; it names `escape`);
//! - `model`: the typed FxTwitter data (names the leaves only);
//! - the upstream: `upstream`, `answer`, `retry_after`, `cache`,
//!   `cacheable`, `fetcher`, `memory`, `resolve`, `side`, `syndication`,
//!   `typed_read` (fetch, cache, fallback; model and leaves below);
//! - `render`: Markdown from the model (model and leaves below);
//! - the tools on top: `registry`, `args`, `schema`, `cursor`, `budget`
//!   (a call's text budget, holding the typed `registry::Call`),
//!   `structured`, `browse`, `post`, `post_cut`, `post_fetch`, `profile`,
//!   `search`, `status_lists`, `tools`.

pub mod answer;
pub mod args;
pub mod browse;
pub mod budget;
pub mod cache;
pub mod cacheable;
pub mod cursor;
pub mod error;
pub mod escape;
pub mod fetcher;
pub mod linkify;
pub mod loopio;
pub mod memory;
pub mod model;
pub mod post;
mod post_cut;
mod post_fetch;
pub mod profile;
pub mod registry;
pub mod render;
pub mod resolve;
pub mod restart;
pub mod retry_after;
pub mod schema;
pub mod search;
pub mod side;
pub mod status_lists;
pub mod structured;
pub mod syndication;
pub mod tools;
pub mod trends;
pub mod typed_read;
pub mod upstream;
pub mod url;
