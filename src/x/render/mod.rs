//! Markdown rendering of posts and threads (pure functions, golden-tested).

pub mod browse;
pub mod escape;
pub mod media;
pub mod post;

pub use post::{render_posts, RenderOptions};

/// Number formatting shared by the renderers.
pub mod num {
    /// `24110` → `24,110` (en-US grouping, as `toLocaleString()`).
    pub fn grouped(n: u64) -> String {
        let digits = n.to_string();
        let mut out = String::with_capacity(digits.len() + digits.len() / 3);
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    /// A link label from upstream text (brackets escaped).
    pub fn label(s: &str) -> String {
        super::escape::escape_inline(s)
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn grouping() {
            assert_eq!(super::grouped(0), "0");
            assert_eq!(super::grouped(999), "999");
            assert_eq!(super::grouped(24110), "24,110");
            assert_eq!(super::grouped(1234567), "1,234,567");
        }
    }
}
