//! `syndication`: see `xmd::fuzzing::check_syndication` for the properties asserted.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xmd::fuzzing::check_syndication(data));
