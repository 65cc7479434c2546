//! One post that alone exceeds the result budget, cut inside it.
//!
//! The class this closes: a post is more than its text. Its media's alt
//! texts, card, community note and quoted post can exceed a small budget
//! by themselves; the cut shortened only the text (to nothing, "…") and
//! the budget's last guard then cut the Markdown mid-image, or the
//! `format=json` block mid-member with its fence left open.
//!
//! A cut is one number, `keep`, from 0 to [`keep_max`], so the budget's
//! search ([`crate::x::budget::fit`]) finds the largest that fits: up to the
//! text's length it is how much of the text is kept, with every
//! attachment text emptied; past it the text is whole and each attachment
//! text keeps `keep − text length` characters. The text goes last.
//! For `format=json` the post is reduced instead ([`reduced_json`]).

use super::budget;
use super::model::status::Status;
use super::render::fenced::{fenced_json, reduced_post};
use super::render::post::status_text;

/// The largest `keep` of `post`: its text length plus its longest
/// attachment text (see [`attachment_texts`]).
pub fn keep_max(post: &Status) -> usize {
    let mut longest = 0;
    let mut p = post.clone();
    attachment_texts(&mut p, &mut |s| longest = longest.max(s.chars().count()));
    status_text(post).chars().count() + longest
}

/// Calls `f` on every attachment text of `p` a reader sees: alt texts
/// (every media list), the card's title and description, the community
/// note, an article's title and preview, and the quoted post's text and
/// the same of its own attachments.
fn attachment_texts(p: &mut Status, f: &mut dyn FnMut(&mut String)) {
    if let Some(m) = &mut p.media {
        for list in [&mut m.all, &mut m.photos, &mut m.videos, &mut m.animated] {
            for item in list.iter_mut().flatten() {
                for alt in [&mut item.alt, &mut item.alt_text].into_iter().flatten() {
                    f(alt);
                }
            }
        }
    }
    if let Some(c) = &mut p.card {
        for s in [&mut c.title, &mut c.description].into_iter().flatten() {
            f(s);
        }
    }
    if let Some(n) = &mut p.community_note {
        if let Some(t) = &mut n.text {
            f(t);
        }
    }
    if let Some(a) = &mut p.article {
        for s in [&mut a.title, &mut a.preview_text].into_iter().flatten() {
            f(s);
        }
    }
    if let Some(q) = &mut p.quote {
        if q.text.is_empty() {
            q.text = status_text(q);
        }
        f(&mut q.text);
        attachment_texts(q, f);
    }
}

/// `s` cut to `chars` characters with `…`, when longer.
fn cap(s: &mut String, chars: usize) {
    if s.chars().count() > chars {
        *s = format!("{}…", budget::cut_text(s, chars));
    }
}

/// What a cut at `keep` kept of a post: `(text characters shown, of the
/// text's, attachment characters each)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kept {
    /// Characters of the text shown.
    pub text: usize,
    /// Characters of the whole text.
    pub whole: usize,
    /// Characters each attachment text keeps at most; `None` when the
    /// post has none.
    pub attachments: Option<usize>,
}

/// Cuts `p` at `keep` (see the module): the text to `keep` characters when
/// shorter than it (`text_truncated: true`), else every attachment text to
/// `keep − text length`; an article's body and a quote's quote are always
/// dropped, and a community note's facets with its text cut (their
/// offsets would point past it).
pub fn cut_post(p: &mut Status, keep: usize) -> Kept {
    let text = status_text(p);
    let whole = text.chars().count();
    let shown = keep.min(whole);
    let each = keep.saturating_sub(whole);
    if shown < whole {
        p.text = format!("{}…", budget::cut_text(&text, shown));
        p.raw_text = None;
        p.text_truncated = true;
    }
    if let Some(art) = &mut p.article {
        art.content = None;
    }
    if let Some(q) = &mut p.quote {
        q.raw_text = None;
        q.quote = None;
        if let Some(art) = &mut q.article {
            art.content = None;
        }
    }
    let (mut any, mut cut_any) = (false, false);
    attachment_texts(p, &mut |s| {
        any |= !s.is_empty();
        cut_any |= s.chars().count() > each;
        cap(s, each);
    });
    if cut_any {
        if let Some(n) = &mut p.community_note {
            n.facets = None;
        }
    }
    Kept {
        text: shown,
        whole,
        attachments: any.then_some(each),
    }
}

/// The cut note of a Markdown post cut at `kept`, naming where the whole
/// post is.
pub fn cut_note(kept: Kept, link: &str) -> String {
    let what = match kept.attachments {
        Some(each) if kept.text == kept.whole => format!(
            "its text is whole; the texts of its media, card, note and quoted post are cut to {each} characters each"
        ),
        Some(_) => format!(
            "{} of {} characters of its text are shown, without the texts of its media, card, note and quoted post",
            kept.text, kept.whole
        ),
        None => format!(
            "{} of {} characters of its text are shown",
            kept.text, kept.whole
        ),
    };
    format!("**[Cut: this post alone exceeds the result budget; {what}. The whole post: {link}]**")
}

/// A post's text as its JSON shows it: `text` as sent (white space
/// included), or the text expanded from `raw_text` when `text` is empty.
pub fn json_text(post: &Status) -> String {
    if post.text.is_empty() {
        status_text(post)
    } else {
        post.text.clone()
    }
}

/// The `format=json` text of a post that alone exceeds the budget: its
/// reduced form ([`reduced_post`]) with its text cut to `keep` characters
/// when longer, fenced, then a cut note naming what was left out and where
/// the whole post is.
pub fn reduced_json(post: &Status, keep: usize, max_chars: usize) -> String {
    let text = json_text(post);
    let whole = text.chars().count();
    let cut = (keep < whole).then(|| format!("{}…", budget::cut_text(&text, keep)));
    let (reduced, left_out) = reduced_post(post, cut);
    let mut t = fenced_json(&[reduced]);
    let text_part = if keep < whole {
        format!(" and {keep} of the {whole} characters of its text")
    } else {
        " and its whole text".to_string()
    };
    let left_out = if left_out.is_empty() {
        "nothing else".to_string()
    } else {
        left_out.join(", ")
    };
    t.push_str(&format!(
        "\n\n**[Cut: this post alone exceeds the result budget of {max_chars} characters; the JSON above keeps its identity, author, dates and counts{text_part}, and leaves out {left_out}. `structuredContent.posts[0]` holds the whole post.]**"
    ));
    t
}
