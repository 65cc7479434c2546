//! The author block of a post and the facts an account's fields state
//! (verification, protection, avatar, banner).

use serde_json::Value;

use crate::x::escape::{at_handle, escape_inline, escape_inline_text};
use crate::x::model::{count, s};
use crate::x::render::date::iso;
use crate::x::render::num::grouped;

pub(super) fn author_block(author: &Value) -> Vec<String> {
    let mut l = vec!["### Author".to_string(), String::new()];
    let field = |k: &str| s(author, k).map(escape_inline).filter(|v| !v.is_empty());
    if let Some(v) = field("name") {
        l.push(format!("- **Name:** {v}"));
    }
    if let Some(v) = s(author, "screen_name").filter(|v| !v.trim().is_empty()) {
        l.push(format!("- **Handle:** {}", at_handle(v, escape_inline)));
    }
    if let Some(v) = s(author, "description")
        .map(escape_inline_text)
        .filter(|v| !v.is_empty())
    {
        l.push(format!("- **Bio:** {v}"));
    }
    if let Some(v) = field("location") {
        l.push(format!("- **Location:** {v}"));
    }
    if let Some(w) = author
        .get("website")
        .and_then(|w| s(w, "display_url").or_else(|| s(w, "url")))
        .map(escape_inline)
        .filter(|w| !w.is_empty())
    {
        l.push(format!("- **Website:** {w}"));
    }
    if let Some(n) = count(author, "followers") {
        l.push(format!("- **Followers:** {}", grouped(n)));
    }
    if let Some(n) = count(author, "following") {
        l.push(format!("- **Following:** {}", grouped(n)));
    }
    for (k, label) in [
        ("statuses", "Posts"),
        ("likes", "Likes"),
        ("media_count", "Media"),
    ] {
        if let Some(n) = count(author, k) {
            l.push(format!("- **{label}:** {}", grouped(n)));
        }
    }
    if let Some(v) = s(author, "joined").filter(|v| !v.trim().is_empty()) {
        let d = iso(v).unwrap_or_else(|| escape_inline(v));
        l.push(format!("- **Joined:** {d}"));
    }
    l.extend(account_facts(author).into_iter().map(|f| format!("- {f}")));
    l
}

/// What an account's `verification`, `protected`, `avatar_url` and
/// `banner_url` say, one fact a line: `**Verified:** yes (business, since
/// <ISO date>)`, `**Protected:** yes`, `**Avatar:** ![avatar](…)`.
pub fn account_facts(user: &Value) -> Vec<String> {
    let mut l = Vec::new();
    if let Some(v) = user.get("verification").filter(|v| v.is_object()) {
        if let Some(yes) = v.get("verified").and_then(Value::as_bool) {
            let mut how: Vec<String> = Vec::new();
            how.extend(s(v, "type").map(escape_inline).filter(|t| !t.is_empty()));
            if let Some(at) = s(v, "verified_at").filter(|t| !t.trim().is_empty()) {
                how.push(format!(
                    "since {}",
                    iso(at).unwrap_or_else(|| escape_inline(at))
                ));
            }
            let how = if how.is_empty() {
                String::new()
            } else {
                format!(" ({})", how.join(", "))
            };
            l.push(format!(
                "**Verified:** {}{how}",
                if yes { "yes" } else { "no" }
            ));
        }
    }
    if let Some(p) = user.get("protected").and_then(Value::as_bool) {
        l.push(format!(
            "**Protected:** {}",
            if p {
                "yes (only approved followers see its posts)"
            } else {
                "no"
            }
        ));
    }
    for (k, label) in [("avatar_url", "Avatar"), ("banner_url", "Banner")] {
        if let Some(u) = s(user, k).filter(|u| !u.trim().is_empty()) {
            l.push(format!(
                "**{label}:** {}",
                crate::x::escape::image(&label.to_ascii_lowercase(), u)
            ));
        }
    }
    l
}
