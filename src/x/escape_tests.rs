//! Unit tests of `escape.rs`.

use super::*;

#[test]
fn bidi_openers_are_closed_where_the_fragment_ends() {
    // A name ending in RLO reversed the `(@handle)` written after it.
    assert_eq!(escape_inline("abc\u{202E}"), "abc\u{202E}\u{202C}");
    // Innermost first; a PDI closes the embeddings inside its isolate.
    assert_eq!(
        escape_line("\u{2067}a\u{202B}b"),
        "\u{2067}a\u{202B}b\u{202C}\u{2069}"
    );
    assert_eq!(
        escape_line("\u{2068}a\u{202A}b\u{2069}c"),
        "\u{2068}a\u{202A}b\u{2069}c"
    );
    // A PDF inside an isolate does not close the embedding outside it.
    assert_eq!(
        escape_line("\u{202D}a\u{2066}b\u{202C}"),
        "\u{202D}a\u{2066}b\u{202C}\u{2069}\u{202C}"
    );
    // Balanced or unmatched closers add nothing.
    assert_eq!(
        escape_line("a\u{202E}b\u{202C}\u{2069}"),
        "a\u{202E}b\u{202C}\u{2069}"
    );
    // A heading's final `}` is still written as an entity.
    assert_eq!(escape_heading("a}\u{202E}"), "a&#125;\u{202E}\u{202C}");
    // Link destinations and YAML never carry one raw.
    assert_eq!(
        link_url("https://e.example/\u{202E}x").as_deref(),
        Some("https://e.example/%E2%80%AEx")
    );
    assert_eq!(yaml_string("a\u{2066}"), "\"a\\u2066\"");
}

#[test]
fn line_starts() {
    assert_eq!(escape_line("# not a heading"), "\\# not a heading");
    assert_eq!(escape_line("---"), "\\---");
    assert_eq!(escape_line("> fake quote"), "\\> fake quote");
    assert_eq!(escape_line("    code?"), "code?");
    assert_eq!(escape_line("2026. was a year"), "2026\\. was a year");
    assert_eq!(escape_line("1) first"), "1\\) first");
    assert_eq!(escape_line("[x]: https://evil"), "\\[x\\]: <https://evil>");
    assert_eq!(
        escape_line("a <script>alert(1)</script>"),
        "a \\<script>alert(1)\\</script>"
    );
    assert_eq!(
        escape_line("@demo_author Agree, except for CI files. #ci 3."),
        "@demo_author Agree, except for CI files. #ci 3."
    );
    assert_eq!(escape_line("Context 🧪"), "Context 🧪");
    assert_eq!(escape_line("\0# not a heading"), "\\# not a heading");
    assert_eq!(escape_line("\u{2003}- item"), "\\- item");
    assert_eq!(escape_line("#tag ## # x"), "#tag ## # x");
    assert_eq!(escape_line("###"), "\\###");
}

#[test]
fn inline_constructs() {
    assert_eq!(
        escape_line("![](https://tracker.example/p.gif)"),
        "!\\[\\](<https://tracker.example/p.gif>)"
    );
    assert_eq!(
        escape_line("*a* _b_ __VA_ARGS__ `c` ~~d~~ a|b snake_case"),
        "\\*a\\* \\_b\\_ \\_\\_VA_ARGS\\_\\_ \\`c\\` \\~\\~d\\~\\~ a\\|b snake_case"
    );
    assert_eq!(
        escape_line("&amp; &#60; AT&T &x"),
        "\\&amp; \\&#60; AT&T &x"
    );
    assert_eq!(escape_line("ends with \\"), "ends with \\\\");
}

#[test]
fn running_text_keeps_urls_and_mentions_exact() {
    // Issue 27 item 5: `https://example.com/a\_b\_` was linked to
    // `…a%5C_b%5C_`, and `@cobalt\_wren\_` copied back was refused.
    assert_eq!(
        escape_line("see https://example.com/a_b_ and ask @cobalt_wren_"),
        "see <https://example.com/a_b>\\_ and ask `@cobalt_wren_`"
    );
    assert_eq!(
        escape_inline_text("(https://e.org/x_(1)) @demo_author, x_https://e.org"),
        "(<https://e.org/x_%281%29>) @demo_author, x\\_<https://e.org>"
    );
    // Not a URL or a mention: escaped as before.
    assert_eq!(
        escape_line("a@b_c_ https:// *x*"),
        "a@b_c\\_ https:// \\*x\\*"
    );
    // Names, headings and labels never link.
    assert_eq!(escape_inline("https://e.org/a_b_"), "https://e.org/a_b\\_");
}

#[test]
fn block_keeps_paragraphs() {
    assert_eq!(escape_block("  a\n\n---\nb  "), vec!["a", "", "\\---", "b"]);
    assert_eq!(escape_block("\0\n \u{2028}\na\n\u{1}"), vec!["a"]);
    assert!(escape_block("\0\n\n").is_empty());
}

#[test]
fn inline() {
    assert_eq!(
        escape_inline("Notes on *parsers* [draft]"),
        "Notes on \\*parsers\\* \\[draft\\]"
    );
    assert_eq!(escape_inline("Evil\n## Name <b>"), "Evil ## Name \\<b>");
    assert_eq!(
        escape_inline("Name\u{2028}injected:\u{85}- x"),
        "Name injected: - x"
    );
    assert_eq!(escape_heading("C# #1 \\#"), "C\\# \\#1 \\\\\\#");
    assert_eq!(escape_heading("T {#id}"), "T {\\#id&#125;");
    assert_eq!(escape_inline(": x^2^"), "\\: x\\^2\\^");
    assert_eq!(escape_inline("demo_author"), "demo_author");
    assert_eq!(escape_inline("bad*handle"), "bad\\*handle");
    assert_eq!(escape_inline("_x_"), "\\_x\\_");
    assert_eq!(escape_inline("__init__"), "\\_\\_init\\_\\_");
    assert_eq!(escape_inline("Ⓐ_a_Ⓐ é_é"), "Ⓐ\\_a\\_Ⓐ é_é");
}

#[test]
fn urls() {
    assert_eq!(
        link_url("https://a.b/x (1)<\\"),
        Some("https://a.b/x%20%281%29%3C%5C".into())
    );
    assert_eq!(link_url("HTTP://a.b/"), Some("HTTP://a.b/".into()));
    assert_eq!(link_url("javascript:alert(1)"), None);
    assert_eq!(link_url("https://"), None);
    assert_eq!(link_url("//evil.example/x"), None);
    assert_eq!(
        link("video", "data:text/html,<b>"),
        "video: data:text/html,\\<b>"
    );
    assert_eq!(
        image("image", "https://p/x.jpg"),
        "![image](https://p/x.jpg)"
    );
}

#[test]
fn yaml() {
    assert_eq!(yaml_string("Demo Author"), "\"Demo Author\"");
    assert_eq!(
        yaml_string("Name\u{2028}injected:\u{2029}- x\u{85}\"q\"\\"),
        "\"Name\\u2028injected:\\u2029- x\\u0085\\\"q\\\"\\\\\""
    );
    assert_eq!(yaml_string("a\tb\0"), "\"a\\u0009b\\u0000\"");
    // No raw `<` (an HTML tag in a renderer that reads front matter as
    // Markdown); YAML's `\x3C` reads back as `<`.
    assert_eq!(
        yaml_string("https://x.com/a/status/1<script>"),
        "\"https://x.com/a/status/1\\x3Cscript>\""
    );
}
