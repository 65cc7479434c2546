//! `header_b64`: see `xmd::fuzzing::check_header_b64` for the properties asserted.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xmd::fuzzing::check_header_b64(data));
