//! Exhaustive check of the intraword `_` rule of `x/escape.rs` against
//! the CommonMark oracle (pulldown-cmark, tables and strikethrough on): for
//! every character Rust calls alphanumeric (the only neighbours for which
//! an `_` is left unescaped), text with that character around or inside
//! underscores parses as one plain paragraph whose visible text is the input.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use xmd::x::escape::escape_inline;

/// The events of `md` other than the paragraph around it, and its text.
fn parse(md: &str) -> (Vec<String>, String) {
    let mut other = Vec::new();
    let mut text = String::new();
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph) => {}
            Event::Text(t) => text.push_str(&t),
            e => other.push(format!("{e:?}")),
        }
    }
    (other, text)
}

#[test]
fn intraword_underscore_never_emphasis_for_any_neighbour() {
    let mut bad = Vec::new();
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        if !c.is_alphanumeric() {
            continue;
        }
        for input in [
            format!("{c}_a_{c}"),
            format!("a_{c}_a"),
            format!("{c}__a__{c}"),
            format!("a{c}_{c}_{c}a"),
        ] {
            let md = escape_inline(&input);
            let (other, text) = parse(&md);
            if !other.is_empty() || text != input {
                bad.push(format!("U+{:04X}: {input:?} -> {md:?} {other:?}", c as u32));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} failures, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}
