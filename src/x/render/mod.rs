//! Markdown rendering of posts and threads (pure functions, golden-tested).

pub mod article;
pub mod attached;
pub mod browse;
pub mod choice;
pub mod date;
pub mod fenced;
pub mod media;
pub mod post;
pub mod styled;

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

    /// A count with its noun, grouped, singular for exactly one:
    /// `count(1, "repost", "reposts")` → `1 repost`, `24110` → `24,110 views`.
    /// The one number format of every rendered count.
    pub fn count(n: u64, one: &str, many: &str) -> String {
        format!("{} {}", grouped(n), if n == 1 { one } else { many })
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn grouping() {
            assert_eq!(super::grouped(0), "0");
            assert_eq!(super::grouped(999), "999");
            assert_eq!(super::grouped(24110), "24,110");
            assert_eq!(super::grouped(1234567), "1,234,567");
            assert_eq!(super::count(1, "repost", "reposts"), "1 repost");
            assert_eq!(super::count(0, "repost", "reposts"), "0 reposts");
            assert_eq!(super::count(24110, "view", "views"), "24,110 views");
        }
    }
}
