//! Helpers shared by integration tests (`mod common;`).
#![allow(dead_code)]

pub mod fake_upstream;
