//! Helpers shared by integration tests (`mod common;`).
#![allow(dead_code)]

pub mod browse;
pub mod cmark;
pub mod fake_upstream;
pub mod post;
pub mod readers;
pub mod status_lists;
pub mod syndication;
pub mod timeline;
