//! Browse Markdown (upstream.md §2.9): post lines, user lines, the profile,
//! search and connections layouts, and the continuation links.
//!
//! User text goes through `escape.rs` (one line each: whitespace runs
//! collapse, nothing in it becomes structure); bios are body text. Dates
//! are ISO 8601 and counts use one format (`1,234 followers`, `1 like`).

use super::date::{iso, status_date};
use super::num::count as counted;
use super::post::status_text;
use crate::x::escape::{
    at_handle, escape_block, escape_heading, escape_inline, push_inline, push_inline_text,
    push_link, push_profile_url,
};
use crate::x::model::status::Status;
use crate::x::model::user::{AboutAccount, User};
use crate::x::url::push_form_encoded;

/// The placeholder shown for a post without any text.
pub const NO_TEXT: &str = "(no text)";

/// One line of user text, inert in Markdown (see `escape.rs`).
pub fn inline_text(text: &str) -> String {
    escape_inline(text)
}

/// A post line: `- [@h](https://x.com/h): text[ (ISO date)][ · Replying to
/// @p][ — N likes, N reposts, N replies] [Source](url)`; counts only with
/// `full`.
pub fn post_line(post: &Status, full: bool) -> String {
    // Written into one buffer (no `format!` and no escaped copy per piece:
    // this runs for every row of a list).
    let mut line = String::with_capacity(160 + post.text.len());
    let author = post.author.as_deref();
    match author.and_then(User::handle) {
        Some(h) => {
            line.push_str("- [");
            line.push_str(&at_handle(h, escape_inline));
            line.push_str("](");
            push_profile_url(&mut line, h);
            line.push_str("): ");
        }
        None => {
            let name = author
                .and_then(|a| a.name.as_deref())
                .filter(|n| !n.trim().is_empty())
                .unwrap_or("unknown");
            line.push_str("- ");
            push_inline(&mut line, name);
            line.push_str(": ");
        }
    }
    let before = line.len();
    let text = post.text.trim();
    if text.is_empty() {
        push_inline_text(&mut line, &status_text(post));
    } else {
        push_inline_text(&mut line, text);
    }
    if line.len() == before {
        line.push_str(NO_TEXT);
    }
    match status_date(post) {
        Some(d) => {
            line.push_str(" (");
            line.push_str(&d);
            line.push(')');
        }
        None => {
            if let Some(d) = post.created_at.as_deref() {
                let before = line.len();
                line.push_str(" (");
                push_inline(&mut line, d);
                if line.len() == before + 2 {
                    line.truncate(before);
                } else {
                    line.push(')');
                }
            }
        }
    }
    // A row is a post shown without its thread: a reply says whom it answers.
    if let Some(h) = post.replying_to_handle() {
        line.push_str(" · Replying to ");
        line.push_str(&at_handle(&h, escape_inline));
    }
    if full {
        let reposts = post.retweets.or(post.reposts);
        if let (Some(l), Some(r), Some(p)) = (post.likes, reposts, post.replies) {
            line.push_str(" — ");
            line.push_str(&counted(l, "like", "likes"));
            line.push_str(", ");
            line.push_str(&counted(r, "repost", "reposts"));
            line.push_str(", ");
            line.push_str(&counted(p, "reply", "replies"));
        }
    }
    line.push(' ');
    match post.url.as_deref().filter(|u| !u.is_empty()) {
        Some(u) => push_link(&mut line, "Source", u),
        None => push_link(
            &mut line,
            "Source",
            &post.link().unwrap_or_else(|| "https://x.com/".into()),
        ),
    }
    line
}

/// Appends the name to show: the display name, else `@handle`.
fn push_shown_name(out: &mut String, user: &User) {
    match user.name.as_deref().filter(|n| !n.trim().is_empty()) {
        Some(n) => push_inline(out, n),
        None => out.push_str(&at_handle(
            user.screen_name.as_deref().unwrap_or(""),
            escape_inline,
        )),
    }
}

/// `[Name (@h)](https://x.com/h)` appended to `out`.
fn push_account_link(out: &mut String, user: &User) {
    let handle = user.screen_name.as_deref().unwrap_or("");
    out.push('[');
    push_shown_name(out, user);
    out.push_str(" (");
    out.push_str(&at_handle(handle, escape_inline));
    out.push_str(")](");
    push_profile_url(out, handle);
    out.push(')');
}

/// A user line: `- [Name (@h)](https://x.com/h)[ — N followers[ — bio]]`;
/// details only with `full`, and the count only when `counts` are real.
pub fn user_line(user: &User, full: bool, counts: bool) -> String {
    let mut line = String::with_capacity(96);
    line.push_str("- ");
    push_account_link(&mut line, user);
    if full {
        if counts {
            if let Some(n) = user.followers {
                line.push_str(" — ");
                line.push_str(&counted(n, "follower", "followers"));
            }
        }
        let before = line.len();
        line.push_str(" — ");
        push_inline_text(&mut line, user.description.as_deref().unwrap_or(""));
        if line.len() == before + " — ".len() {
            line.truncate(before);
        }
    }
    line
}

/// Where the continuation links point and what they carry.
#[derive(Debug, Clone)]
pub struct Continuation {
    /// `/search`, `/<handle>` or `/<handle>/followers|following`.
    pub path: String,
    /// Parameters before the cursor/page (already in order).
    pub params: Vec<(&'static str, String)>,
    /// The `next_cursor`.
    pub next_cursor: String,
    /// The page number for the "Next page" link, if one is offered.
    pub next_page: Option<usize>,
}

/// `[Continue →](path?params&cursor=c)[ · [Next page (n) →](path?params&page=n)]`.
pub fn continuation_line(c: &Continuation) -> String {
    let mut base = String::with_capacity(c.path.len() + 64);
    base.push_str(&c.path);
    base.push('?');
    for (k, v) in &c.params {
        base.push_str(k);
        base.push('=');
        push_form_encoded(&mut base, v);
        base.push('&');
    }
    let mut line = String::with_capacity(2 * base.len() + c.next_cursor.len() + 48);
    line.push_str("[Continue →](");
    line.push_str(&base);
    line.push_str("cursor=");
    push_form_encoded(&mut line, &c.next_cursor);
    line.push(')');
    if let Some(n) = c.next_page {
        let n = n.to_string();
        line.push_str(" · [Next page (");
        line.push_str(&n);
        line.push_str(") →](");
        line.push_str(&base);
        line.push_str("page=");
        line.push_str(&n);
        line.push(')');
    }
    line
}

/// Joins blocks of lines into browse Markdown: trimmed, one final `\n`.
pub fn finish(lines: Vec<String>) -> String {
    let mut md = lines.join("\n");
    md.truncate(md.trim_end().len());
    let start = md.len() - md.trim_start().len();
    md.drain(..start);
    md.push('\n');
    md
}

/// Appends the notes (as quotes) and the continuation line.
pub fn push_tail(lines: &mut Vec<String>, notes: &[String], cont: Option<&Continuation>) {
    if !notes.is_empty() {
        lines.push(String::new());
        lines.extend(notes.iter().map(|n| {
            let mut q = String::with_capacity(n.len() + 8);
            q.push_str("> ");
            push_inline(&mut q, n);
            q
        }));
    }
    if let Some(c) = cont {
        lines.push(String::new());
        lines.push(continuation_line(c));
        lines.push(String::new());
        lines.push(cursor_line(&c.next_cursor));
    }
}

/// The raw `next_cursor`, as the agent passes it back in `cursor`, in a
/// code span (a cursor holds no backtick, and no renderer changes a code
/// span's text).
pub fn cursor_line(next_cursor: &str) -> String {
    format!("next_cursor: `{next_cursor}` (pass it as `cursor`, with the same other arguments, to continue)")
}

/// The bio with any t.co link the upstream left unexpanded replaced by its
/// facet's target, in one pass ([`crate::x::model::expand`]): the facets'
/// offsets index `raw_description.text`, so in `description` they hold
/// only when it is that text; else each link is found by its text.
pub fn bio_text(user: &User) -> String {
    use crate::x::model::expand::{expand, raw_indices, Edit};
    let bio = user.description.as_deref().unwrap_or_default();
    let facets = user.raw_description.as_ref().map(|r| &r.facets);
    let edits: Vec<Edit> = facets
        .into_iter()
        .flatten()
        .filter_map(
            |f| match (f.original.as_deref(), f.replacement.as_deref()) {
                (Some(o), Some(r)) if o.starts_with("https://t.co/") => Some(Edit {
                    indices: raw_indices(f.indices.as_deref()),
                    original: o,
                    replacement: r,
                }),
                _ => None,
            },
        )
        .collect();
    if edits.is_empty() {
        return bio.to_string();
    }
    expand(bio, 0, &edits).text
}

/// The profile layout.
pub fn profile_markdown(
    user: &User,
    posts: &[Status],
    full: bool,
    notes: &[String],
    cont: Option<&Continuation>,
) -> String {
    profile_markdown_with(user, posts, full, notes, cont, &ProfileView::default())
}

/// What a profile result shows besides the account and its rows: the
/// rows' section heading, the line for no rows, and the account's
/// "About" data (with `full`).
pub struct ProfileView<'a> {
    /// The section heading (`Latest posts`).
    pub section: &'a str,
    /// The line when no row is shown.
    pub empty: &'a str,
    /// X's "About this account", when read.
    pub about: Option<&'a AboutAccount>,
}

impl Default for ProfileView<'_> {
    fn default() -> Self {
        ProfileView {
            section: "Latest posts",
            empty: "No original posts on this page.",
            about: None,
        }
    }
}

/// The "About this account" line: where it is based, how it connects,
/// its username changes; `None` when X gave nothing to show.
pub fn about_line(a: &AboutAccount) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(b) = a.based_in.as_deref().filter(|b| !b.trim().is_empty()) {
        let accurate = match a.location_accurate {
            Some(true) => " (accurate)",
            _ => "",
        };
        parts.push(format!("Based in: {}{accurate}", inline_text(b)));
    }
    if let Some(s) = a.source.as_deref().filter(|s| !s.trim().is_empty()) {
        parts.push(format!("Connected via: {}", inline_text(s)));
    }
    if let Some(u) = &a.username_changes {
        if let Some(n) = u.count {
            let mut p = format!("Username changes: {}", super::num::grouped(n));
            if let Some(d) = u
                .last_changed_at
                .as_deref()
                .filter(|d| !d.trim().is_empty())
            {
                p.push_str(&format!(
                    " (last {})",
                    iso(d).unwrap_or_else(|| inline_text(d))
                ));
            }
            parts.push(p);
        }
    }
    (!parts.is_empty()).then(|| format!("About: {}", parts.join(" · ")))
}

/// [`profile_markdown`] with a [`ProfileView`].
pub fn profile_markdown_with(
    user: &User,
    posts: &[Status],
    full: bool,
    notes: &[String],
    cont: Option<&Continuation>,
    view: &ProfileView<'_>,
) -> String {
    let mut heading = String::with_capacity(96);
    heading.push_str("# ");
    push_account_link(&mut heading, user);
    let mut lines = vec![heading, String::new()];
    let bio = escape_block(&bio_text(user));
    if !bio.is_empty() {
        lines.extend(bio);
        lines.push(String::new());
    }
    if full {
        let n = |c: Option<u64>| c.map_or("?".to_string(), super::num::grouped);
        let mut counts = format!(
            "Followers: {} · Following: {} · Posts: {}",
            n(user.followers),
            n(user.following),
            n(user.statuses)
        );
        for (c, label) in [(user.likes, "Likes"), (user.media_count, "Media")] {
            if let Some(c) = c {
                counts.push_str(&format!(" · {label}: {}", super::num::grouped(c)));
            }
        }
        lines.push(counts);
        let mut facts = Vec::new();
        if let Some(l) = user.location.as_deref().filter(|l| !l.trim().is_empty()) {
            facts.push(format!("Location: {}", inline_text(l)));
        }
        if let Some(w) = user.website.as_ref().and_then(|w| w.url.as_deref()) {
            facts.push(format!("Website: {}", crate::x::escape::autolink(w)));
        }
        if let Some(j) = user.joined.as_deref().filter(|j| !j.trim().is_empty()) {
            facts.push(format!(
                "Joined: {}",
                iso(j).unwrap_or_else(|| inline_text(j))
            ));
        }
        let v = user.verification.as_ref();
        if v.and_then(|v| v.verified) == Some(true) {
            match v.and_then(|v| v.kind.as_deref()) {
                Some(t) => facts.push(format!("Verified ({})", inline_text(t))),
                None => facts.push("Verified".into()),
            }
        }
        if user.protected == Some(true) {
            facts.push("Protected (only approved followers see its posts)".into());
        }
        if !facts.is_empty() {
            lines.push(facts.join(" · "));
        }
        if let Some(line) = view.about.and_then(about_line) {
            lines.push(line);
        }
        for (url, label) in [(&user.avatar_url, "avatar"), (&user.banner_url, "banner")] {
            if let Some(u) = url.as_deref().filter(|u| !u.trim().is_empty()) {
                lines.push(crate::x::escape::image(label, u));
            }
        }
        lines.push(String::new());
    }
    lines.push(format!("## {}", view.section));
    if posts.is_empty() {
        lines.push(view.empty.into());
    }
    lines.extend(posts.iter().map(|p| post_line(p, full)));
    push_tail(&mut lines, notes, cont);
    finish(lines)
}

/// The search layout (`users` set for the users feed).
pub fn search_markdown(
    query: &str,
    posts: &[Status],
    users: Option<&[User]>,
    full: bool,
    notes_top: &[String],
    notes: &[String],
    cont: Option<&Continuation>,
) -> String {
    let mut lines = vec![
        format!("# X search: {}", escape_heading(query)),
        String::new(),
    ];
    for n in notes_top {
        lines.push(format!("> {}", inline_text(n)));
        lines.push(String::new());
    }
    match users {
        Some(users) => {
            if users.is_empty() {
                lines.push("No accounts found.".into());
            }
            lines.extend(users.iter().map(|u| user_line(u, full, false)));
        }
        None => {
            if posts.is_empty() {
                lines.push("No results on this page.".into());
            }
            lines.extend(posts.iter().map(|p| post_line(p, full)));
        }
    }
    push_tail(&mut lines, notes, cont);
    finish(lines)
}

/// The followers/following layout.
pub fn connections_markdown(
    handle: &str,
    which: &str,
    users: &[User],
    full: bool,
    notes: &[String],
    cont: Option<&Continuation>,
) -> String {
    let mut lines = vec![
        format!("# {} {which}", at_handle(handle, escape_heading)),
        String::new(),
    ];
    if users.is_empty() {
        lines.push("No accounts on this page.".into());
    }
    lines.extend(users.iter().map(|u| user_line(u, full, true)));
    push_tail(&mut lines, notes, cont);
    finish(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status(v: serde_json::Value) -> Status {
        serde_json::from_value(v).unwrap()
    }

    fn user(v: serde_json::Value) -> User {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn inline_text_is_inert() {
        assert_eq!(
            inline_text("a  [x](javascript:1)\n# h <b> `c` *e* \\"),
            "a \\[x\\](javascript:1) # h \\<b> \\`c\\` \\*e\\* \\\\"
        );
        assert_eq!(
            inline_text("#buildtools & @demo_author"),
            "#buildtools & @demo_author"
        );
    }

    #[test]
    fn lines() {
        let p = status(
            json!({"id":"5","url":"https://x.com/a/status/5","text":"hi\n\nthere","created_at":"Mon Aug 10 12:41:03 +0000 2026","likes":1,"reposts":2,"replies":3000,"author":{"screen_name":"a"}}),
        );
        assert_eq!(
            post_line(&p, false),
            "- [@a](https://x.com/a): hi there (2026-08-10T12:41:03Z) [Source](https://x.com/a/status/5)"
        );
        assert_eq!(post_line(&p, true), "- [@a](https://x.com/a): hi there (2026-08-10T12:41:03Z) — 1 like, 2 reposts, 3,000 replies [Source](https://x.com/a/status/5)");
        let odd = status(
            json!({"id":"5","url":"javascript:alert(1)","text":"t","created_at":"D","author":{"screen_name":"a"}}),
        );
        assert_eq!(
            post_line(&odd, false),
            "- [@a](https://x.com/a): t (D) Source: javascript:alert(1)"
        );
        let anon = status(json!({"id":"6","text":"","author":{"name":"N"}}));
        assert_eq!(
            post_line(&anon, false),
            "- N: (no text) [Source](https://x.com/i/status/6)"
        );
        let u = user(json!({"screen_name":"b_c","name":"","followers":3,"description":"x\ny"}));
        assert_eq!(
            user_line(&u, false, true),
            "- [@b_c (@b_c)](https://x.com/b_c)"
        );
        assert_eq!(
            user_line(&u, true, true),
            "- [@b_c (@b_c)](https://x.com/b_c) — 3 followers — x y"
        );
        let one = user(json!({"screen_name":"b_c","name":"N","followers":1}));
        assert_eq!(
            user_line(&one, true, true),
            "- [N (@b_c)](https://x.com/b_c) — 1 follower"
        );
        assert_eq!(
            user_line(&u, true, false),
            "- [@b_c (@b_c)](https://x.com/b_c) — x y"
        );
    }

    #[test]
    fn continuation() {
        let c = Continuation {
            path: "/search".into(),
            params: vec![
                ("limit", "2".into()),
                ("q", "fixture cache".into()),
                ("feed", "latest".into()),
            ],
            next_cursor: "a:b@2".into(),
            next_page: Some(2),
        };
        assert_eq!(continuation_line(&c), "[Continue →](/search?limit=2&q=fixture+cache&feed=latest&cursor=a%3Ab%402) · [Next page (2) →](/search?limit=2&q=fixture+cache&feed=latest&page=2)");
        let c = Continuation {
            path: "/a".into(),
            params: vec![],
            next_cursor: "x".into(),
            next_page: None,
        };
        assert_eq!(continuation_line(&c), "[Continue →](/a?cursor=x)");
    }
}
