//! `http_conn`: see `xmd::fuzzing::check_http_conn` for the properties asserted.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xmd::fuzzing::check_http_conn(data));
