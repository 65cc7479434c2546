//! `upstream_reader`: see `xmd::fuzzing::check_upstream_reader` for the
//! properties asserted.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xmd::fuzzing::check_upstream_reader(data));
