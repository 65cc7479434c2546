//! The renderer's choices a caller makes: the post's `format` and
//! `userinfo` (the tools' `x_md_get_post` arguments of the same names are
//! these types), and the closed-set enum they are built with.

/// A closed set of string values: the enum of one `Kind::Enum` argument.
/// `NAMES` is what the `inputSchema` lists (the first is the default), and
/// each variant's name is its index there, so the table and the type
/// cannot drift apart.
macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum $name {
            #[default]
            $($(#[$vm])* $v),+
        }
        impl $name {
            /// Every value, in schema order; the first is the default.
            pub const NAMES: &'static [&'static str] = &[$($s),+];
            const ALL: &'static [$name] = &[$($name::$v),+];
            /// The value as the argument spells it.
            pub fn as_str(self) -> &'static str {
                Self::NAMES[self as usize]
            }
            /// The variant named `s`, if any.
            pub fn parse(s: &str) -> Option<$name> {
                Self::NAMES.iter().position(|n| *n == s).map(|i| Self::ALL[i])
            }
        }
    };
}
pub(crate) use string_enum;

string_enum! {
    /// `format` of `x_md_get_post`.
    Format { /// Markdown (default).
    Markdown = "markdown", /// Markdown with YAML front matter.
    Obsidian = "obsidian", /// The raw posts as fenced JSON.
    Json = "json" }
}
string_enum! {
    /// `userinfo` of `x_md_get_post`.
    UserInfo { /// No profile blocks (default).
    Off = "off", /// For the first post.
    Author = "author", /// For the first post of each author.
    All = "all" }
}
