//! What the CommonMark property tests compare rendered text by.

/// Whitespace runs (control characters count as whitespace) as one space,
/// trimmed: what a renderer's reflowed text compares by.
pub fn norm(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// True for a UAX #9 explicit formatting character (§2.1–2.4): LRE, RLE,
/// PDF, LRO, RLO (U+202A–U+202E), LRI, RLI, FSI, PDI (U+2066–U+2069).
pub fn bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` without bidi controls: the visible text, as the renderer closes
/// what a field opens with invisible closers.
pub fn plain(s: &str) -> String {
    s.chars().filter(|c| !bidi(*c)).collect()
}

/// The first line of `md` that ends with an embedding, override or
/// isolate still open, by the directional status stack of UAX #9 rules
/// X1–X8 (paragraph level left out, no overflow at these depths), kept
/// per line; `None` when every line closes what it opens.
pub fn bidi_left_open(md: &str) -> Option<&str> {
    md.lines().find(|line| {
        // One entry per open embedding (false) or isolate (true).
        let mut stack: Vec<bool> = Vec::new();
        for c in line.chars() {
            match c {
                // X2–X5: LRE, RLE, LRO, RLO.
                '\u{202A}' | '\u{202B}' | '\u{202D}' | '\u{202E}' => stack.push(false),
                // X5a–X5c: LRI, RLI, FSI.
                '\u{2066}' | '\u{2067}' | '\u{2068}' => stack.push(true),
                // X6a: PDI pops through the last isolate; without one it
                // does nothing.
                '\u{2069}' => {
                    if let Some(i) = stack.iter().rposition(|isolate| *isolate) {
                        stack.truncate(i);
                    }
                }
                // X7: PDF pops an embedding, not an isolate.
                '\u{202C}' if stack.last() == Some(&false) => {
                    stack.pop();
                }
                _ => {}
            }
        }
        !stack.is_empty()
    })
}
