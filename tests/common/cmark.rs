//! What the CommonMark property tests compare rendered text by.

/// Whitespace runs (control characters count as whitespace) as one space,
/// trimmed: what a renderer's reflowed text compares by.
pub fn norm(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
