//! The FxTwitter data model.
//!
//! - [`status`], [`user`], [`media`]: serde-derived, tolerant structs for
//!   what FxTwitter sends (upstream.md §1.3–1.6): a status (or tombstone),
//!   its author, media, quote; the list page and the envelopes.
//! - [`attached`]: poll, link card, article, Community Note.
//! - [`article`]: an article's Draft.js body, entities and media.
//! - [`scalar`]: the tolerant leaves: an id that may arrive as a JSON
//!   string or number (exact for any u64), counts, loose strings.
//! - [`parse`]: reading a body into the model: lone UTF-16 surrogate
//!   escapes repaired to U+FFFD first, and a wrong shape reported as a
//!   distinct `upstream_invalid_response` error naming what was wrong.
//! - [`depth`]: the depth caps on upstream bodies and quotes.
//! - [`expand`]: upstream substitution lists (facets, entities) applied
//!   in one pass by offsets, bounded in output and time.
//! - [`value`]: helpers over posts still held as `serde_json::Value` (the
//!   `x_md_get_post` path).

pub mod article;
pub mod attached;
pub mod depth;
pub mod expand;
pub mod media;
pub mod parse;
pub mod scalar;
pub mod status;
pub mod user;
pub mod value;

pub use value::*;
