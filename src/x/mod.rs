//! Everything about X data: the FxTwitter upstream, the five tools (their
//! schemas, argument validation and runs), and the Markdown renderer.
//!
//! This module knows nothing of HTTP serving or MCP framing.

pub mod args;
pub mod error;
pub mod model;
pub mod post;
pub mod render;
pub mod schema;
pub mod tools;
pub mod upstream;
pub mod url;
