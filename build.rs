//! Build script: embeds `docs/openapi.json` without its indentation.
//!
//! The document is kept pretty-printed in the repository (one source, easy to
//! review and diff); the binary serves it minified: the same JSON value, 38 KB
//! smaller (107,643 bytes pretty, 69,197 minified when this was written). Only
//! whitespace outside strings is dropped (RFC 8259 section 2: insignificant
//! whitespace), so `{{PUBLIC_URL}}` and every string stay byte for byte.
//! `docs::tests` checks that the served text parses to the same value.

use std::path::Path;

fn minify(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

fn main() {
    let src = "docs/openapi.json";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(src).expect("docs/openapi.json is readable");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("openapi.min.json"), minify(&text))
        .expect("OUT_DIR is writable");
}
