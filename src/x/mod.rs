//! Everything about X data: the FxTwitter upstream, the tools of the
//! registry (`registry.rs`: their schemas, argument validation and runs),
//! and the Markdown renderer.
//!
//! This module knows nothing of HTTP serving or MCP framing.

pub mod args;
pub mod browse;
pub mod budget;
pub mod cache;
pub mod cacheable;
pub mod cursor;
pub mod error;
pub mod fetcher;
pub mod memory;
pub mod model;
pub mod post;
mod post_cut;
pub mod profile;
pub mod registry;
pub mod render;
pub mod resolve;
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
