//! `mcp_dispatch`: see `xmd::fuzzing::check_mcp_dispatch` for the properties asserted.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xmd::fuzzing::check_mcp_dispatch(data));
