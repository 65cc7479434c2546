//! `x_md_get_post`: fetching, thread assembly (upstream.md §3) and the
//! result (§2.8).

use std::collections::HashSet;

use serde_json::{json, Value};

use super::args::{Context, Format, PostArgs, Replies, Thread};
use super::budget::{self, Cut, Run};
use super::cursor::{self, CursorKind, Position};
use super::error::XError;
use super::escape::escape_inline;
use super::model;
use super::model::status::Status;
use super::post_cut::{cut_note, cut_post, json_text, keep_max, reduced_json};
pub use super::post_fetch::MAX_REPLIES;
use super::post_fetch::{fall_back, fetch_focal, fetch_replies, fetch_thread, Assembly};
use super::registry::POST_ROUTE_PARAMS;
use super::render::fenced::fenced_json;
use super::render::post::{join_posts, post_blocks, status_text};
use super::render::RenderOptions;
use super::structured::Structured;
use super::syndication;
use super::upstream::Upstream;

/// What a successful run produced.
#[derive(Debug, Clone)]
pub struct PostResult {
    /// Text content (Markdown, or fenced JSON for `format=json`).
    pub text: String,
    /// `structuredContent`.
    pub structured: Structured,
}

fn same_author(p: &Status, focal: &Status, requested_handle: &str) -> bool {
    if let (Some(x), Some(y)) = (p.author_id(), focal.author_id()) {
        return x == y;
    }
    let want = focal.handle().unwrap_or(requested_handle);
    p.handle().is_some_and(|h| h.eq_ignore_ascii_case(want))
}

/// Keeps the focal post first, then ancestors (nearest first) and the
/// author's continuation, then replies; restores the original order.
fn truncate<T>(posts: &mut Vec<(T, &'static str)>, cap: usize) -> bool {
    if posts.len() <= cap {
        return false;
    }
    let focal_pos = posts.iter().position(|(_, r)| *r == "post").unwrap_or(0);
    let mut order: Vec<usize> = (0..posts.len()).collect();
    order.sort_by_key(|&i| {
        let (_, role) = &posts[i];
        match *role {
            "post" => (0, 0),
            "parent" => (1, focal_pos.saturating_sub(i)),
            "thread" => (1, i + posts.len()),
            _ => (2, i),
        }
    });
    let keep: HashSet<usize> = order.into_iter().take(cap).collect();
    let mut i = 0;
    posts.retain(|_| {
        i += 1;
        keep.contains(&(i - 1))
    });
    true
}

/// What a thread cursor is bound to: the requested post (written) and
/// the arguments that choose the thread's posts (covered by its tag).
fn thread_scope(args: &PostArgs) -> cursor::Bound {
    cursor::Bound {
        scope: args.target.id.clone(),
        args: format!(
            "thread={}&replies={}&context={}&max_posts={}",
            args.thread.as_str(),
            args.replies.as_str(),
            args.context.as_str(),
            args.max_posts
        ),
    }
}

/// Runs `x_md_get_post`.
pub fn get_post(up: &dyn Upstream, args: &PostArgs, run: &Run) -> Result<PostResult, XError> {
    let resume = match &args.cursor {
        Some(c) => Some(
            cursor::decode(
                &run.settings.cursor_key,
                c,
                CursorKind::Thread,
                &thread_scope(args),
            )
            .map_err(|m| XError::new(400, super::error::code::INVALID_CURSOR, m))?,
        ),
        None => None,
    };
    // Fetching runs in its own frame, beside (not under) the answer's:
    // worker stacks are small (`WORKER_STACK_BYTES`) and unoptimised
    // builds give both large frames.
    let (a, fell_back) = assemble(up, args)?;
    answer(a, fell_back.as_ref(), resume.as_ref(), args, run)
}

/// The posts of an `x_md_get_post` call: the post, its thread and replies
/// as asked, deduplicated and cut to `max_posts`; and the FxTwitter
/// failure that sent the read to the syndication fallback, if any.
fn assemble(up: &dyn Upstream, args: &PostArgs) -> Result<(Assembly, Option<XError>), XError> {
    let focal_id = args.target.id.as_str();
    // The translation is asked for the requested post only.
    let lang = args
        .lang
        .as_deref()
        .map(|l| format!("?lang={l}"))
        .unwrap_or_default();
    let lang = lang.as_str();
    let mut a = Assembly {
        posts: Vec::new(),
        warnings: Vec::new(),
        complete: true,
    };
    let mut fell_back = None;
    if args.thread == Thread::Off {
        let (post, fx) = fetch_focal(up, focal_id, lang)?;
        fell_back = fx;
        a.posts.push((post, "post"));
    } else {
        let mut probe = Assembly {
            posts: Vec::new(),
            warnings: Vec::new(),
            complete: true,
        };
        match fetch_thread(up, focal_id, lang, args.max_posts, &mut probe) {
            Ok(rows) => {
                a.warnings = probe.warnings;
                a.complete = probe.complete;
                let pos = rows.iter().position(|r| r.id() == Some(focal_id));
                for (i, r) in rows.into_iter().enumerate() {
                    let role = match pos {
                        Some(p) if i == p => "post",
                        Some(p) if i < p => "parent",
                        _ => "thread",
                    };
                    a.posts.push((r, role));
                }
            }
            // FxTwitter is out: asking it for the post alone is pointless.
            Err(e) if e.is_final() && syndication::is_outage_error(&e) => {
                let (post, fx) = fall_back(up, focal_id, e)?;
                fell_back = fx;
                a.posts.push((post, "post"));
            }
            Err(e) if e.is_final() => return Err(e),
            Err(e) => {
                let (single, fx) = fetch_focal(up, focal_id, lang)?;
                if fx.is_none() {
                    a.warnings.push(format!(
                        "The thread could not be loaded ({e}); showing the post alone."
                    ));
                }
                fell_back = fx;
                a.complete = false;
                a.posts.push((single, "post"));
            }
        }
        let focal = a
            .posts
            .iter()
            .find(|(_, r)| *r == "post")
            .map(|(v, _)| v.clone());
        if fell_back.is_some() {
            // The fallback has no thread and no replies.
            a.complete = false;
        } else if args.context == Context::Thread {
            if let Some(f) = &focal {
                a.posts
                    .retain(|(p, r)| *r == "post" || same_author(p, f, &args.target.handle));
            }
        } else if args.replies != Replies::Off {
            match fetch_replies(up, focal_id, args.replies == Replies::Recent) {
                Ok(replies) => a.posts.extend(replies.into_iter().map(|r| (r, "reply"))),
                Err(e) => {
                    a.warnings.push(format!("Replies could not be loaded: {e}"));
                    a.complete = false;
                }
            }
        }
    }
    if let Some(fx) = &fell_back {
        a.warnings.insert(0, syndication::note(fx));
        if a.posts.iter().any(|(p, _)| p.text_partial) {
            a.warnings
                .insert(1, super::render::post::PARTIAL_TEXT_NOTE.to_string());
            a.complete = false;
        }
    }
    if let Some(l) = &args.lang {
        let translated = a.posts.iter().any(|(p, r)| {
            *r == "post"
                && p.translation
                    .as_ref()
                    .is_some_and(|t| !t.text.trim().is_empty())
        });
        if !translated {
            a.warnings.push(untranslated_note(
                l,
                a.posts.iter().find(|(_, r)| *r == "post").map(|(p, _)| p),
            ));
        }
    }
    let mut seen = HashSet::new();
    a.posts
        .retain(|(p, _)| p.id().is_none_or(|i| seen.insert(i.to_string())));
    if truncate(&mut a.posts, args.max_posts) {
        a.warnings
            .push(format!("Thread truncated to {} posts.", args.max_posts));
        a.complete = false;
    }
    Ok((a, fell_back))
}

/// The note when `lang` was asked and the requested post came without a
/// translation (FxTwitter translates only a post whose language X knows and
/// that differs from `lang`, and only when a translation is available).
pub fn untranslated_note(lang: &str, post: Option<&Status>) -> String {
    let why = match post.and_then(|p| p.lang.as_deref()) {
        Some(l) if l.eq_ignore_ascii_case(lang) => format!("the post is already in {l}"),
        Some(l) => format!("FxTwitter gave none for this post (its language: {l})"),
        None => "X gives no language for this post".to_string(),
    };
    format!("No translation into {lang}: {why}; the original is shown.")
}

/// The result of an `x_md_get_post` call from its posts, fitted to the
/// result budget from `resume` on.
fn answer(
    a: Assembly,
    fell_back: Option<&XError>,
    resume: Option<&Position>,
    args: &PostArgs,
    run: &Run,
) -> Result<PostResult, XError> {
    let focal_id = args.target.id.as_str();
    let canonical = args.target.canonical_url();
    let posts: Vec<Status> = a
        .posts
        .into_iter()
        .map(|(mut p, role)| {
            p.normalize(0);
            p.fill_url((role == "post").then_some(canonical.as_str()));
            p.context = Some(role);
            if !args.full {
                lean(&mut p);
            }
            p
        })
        .collect();
    let url = posts
        .iter()
        .find(|p| p.context == Some("post"))
        .and_then(|p| p.url.as_deref())
        .filter(|u| *u != model::MISSING_IDENTITY)
        .map(str::to_string)
        .unwrap_or(canonical);
    // Where a continuation starts: after the last post shown before.
    let start = resume.map_or(0, |pos| {
        posts
            .iter()
            .position(|p| p.id() == Some(pos.upstream.as_str()))
            .map_or(pos.offset, |i| i + 1)
            .min(posts.len())
    });
    let opts = RenderOptions {
        format: args.format,
        full: args.full,
        userinfo: args.userinfo,
    };
    let total = posts.len();
    if resume.is_some() && start >= total {
        return Err(XError::new(
            400,
            super::error::code::INVALID_CURSOR,
            format!("The cursor points past the end of this thread ({total} posts now); omit `cursor` to start at the first post."),
        ));
    }
    let rest = &posts[start..];
    let (head, blocks) = post_blocks(&values(rest), &opts, start, total);
    // The largest inside cut of the first post (see post_cut).
    let first_len = || {
        rest.first().map_or(0, |p| match args.format {
            Format::Json => json_text(p).chars().count(),
            _ => keep_max(p),
        })
    };
    let mut build = |cut: Cut| {
        let mut shown: Vec<Status> = rest[..cut.items].to_vec();
        let mut shown_blocks: Vec<String> = blocks[..cut.items].to_vec();
        // The notes as data (structuredContent) and as Markdown: upstream
        // warnings can echo upstream text, so they are escaped like user
        // text; xmd's own continuation note is written as Markdown.
        let mut notes = a.warnings.clone();
        let mut md_notes: Vec<String> = a.warnings.iter().map(|w| escape_inline(w)).collect();
        // A JSON text is reduced, never cut like prose (render::fenced);
        // the data keeps the whole post.
        let json_cut = cut.inside.filter(|_| args.format == Format::Json);
        if let Some(keep) = cut.inside.filter(|_| json_cut.is_none()) {
            let kept = cut_post(&mut shown[0], keep);
            let (_, b) = post_blocks(&values(&shown[..1]), &opts, start, total);
            let link = shown[0].url.clone().unwrap_or_default();
            shown_blocks[0] = format!(
                "{}\n\n{}",
                b[0],
                cut_note(kept, &super::render::attached::url_text(&link))
            );
        }
        let end = start + cut.items;
        // After a post cut inside, the continuation starts at the next one.
        let next = (end < total).then(|| {
            let last = shown.last().and_then(Status::id).unwrap_or("").to_string();
            cursor::encode(
                &run.settings.cursor_key,
                CursorKind::Thread,
                &thread_scope(args),
                &Position {
                    upstream: last,
                    offset: end,
                    seen: Vec::new(),
                },
            )
        });
        if let Some(c) = &next {
            let left_out = format!(
                "{} reached: this result shows posts {}–{end} of {total}; posts {}–{total} were left out.",
                super::budget::budget_phrase(run.max_chars()),
                start + 1,
                end + 1
            );
            let canonical = run.args();
            let mut link = format!("/{}/status/{focal_id}?", args.target.handle);
            for k in POST_ROUTE_PARAMS.iter().filter(|k| **k != "cursor") {
                if let Some(v) = canonical.get(*k) {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    link.push_str(&format!("{k}={}&", cursor::form_encode(&v)));
                }
            }
            let mut call = canonical;
            call.remove("url");
            call.insert("handle".into(), json!(args.target.handle));
            call.insert("id".into(), json!(focal_id));
            let note = run.continue_note(&left_out, call, c, &link);
            md_notes.push(note.clone());
            notes.push(note);
        }
        let mut markdown = join_posts(&head, &shown_blocks);
        if !md_notes.is_empty() {
            markdown.push_str("\n\n");
            let lines: Vec<String> = md_notes
                .iter()
                .map(|w| format!("> **Note:** {w}"))
                .collect();
            markdown.push_str(&lines.join("\n"));
            if !a.complete {
                markdown.push_str("\n> The thread may be incomplete.");
            }
        }
        let text = if args.format == Format::Json {
            let mut t = match json_cut {
                Some(chars) => reduced_json(&shown[0], chars, run.max_chars()),
                None => fenced_json(&shown),
            };
            // The fallback's note says which fields the posts lack, so it
            // travels with the JSON too (its first warning).
            if let Some(fx) = fell_back {
                t.push_str("\n\n");
                t.push_str(&format!("> **Note:** {}", syndication::note(fx)));
            }
            if next.is_some() {
                t.push_str("\n\n");
                t.push_str(&format!(
                    "> **Note:** {}",
                    md_notes.last().map_or("", String::as_str)
                ));
            }
            t
        } else {
            markdown
        };
        let mut structured = Structured::default();
        structured.insert("url", json!(url));
        structured.insert("format", json!(args.format.as_str()));
        structured.insert("post_count", json!(shown.len()));
        structured.insert(
            "compact",
            json!(!args.full && args.format != Format::Obsidian),
        );
        let source = if fell_back.is_some() {
            syndication::SOURCE
        } else {
            "fxtwitter"
        };
        structured.insert("source", json!(source));
        structured.insert("warnings", json!(notes));
        structured.insert("thread_complete", json!(a.complete));
        structured.insert("truncated", json!(next.is_some() || cut.inside.is_some()));
        structured.insert_written("posts", &shown);
        if let Some(c) = next {
            structured.insert("next_cursor", json!(c));
        }
        (text, structured, ())
    };
    let (_, text, structured, ()) =
        budget::fit(rest.len(), &first_len, run.max_chars(), &mut build);
    Ok(PostResult { text, structured })
}

/// A post row of a list result: unless `full`, `raw_text` dropped (in the
/// post and its quotes, `text` filled from it when empty) and the author
/// reduced to what identifies it (`id`, `screen_name`, `name`): the row
/// shows no more, and a profile result carries the whole account once.
pub fn lean_status_row(p: &mut Status, full: bool) {
    if full {
        return;
    }
    lean(p);
    if let Some(a) = &mut p.author {
        **a = std::mem::take(&mut **a).into_identity();
    }
}

/// Drops the upstream's second copy of a post's text (`raw_text`, kept
/// only with `full`) and of its author's bio (`raw_description`), in the
/// post and its quotes; the shown text stays in `text` (filled from
/// `raw_text` when the upstream left it empty).
fn lean(p: &mut Status) {
    let mut cur = Some(&mut *p);
    let mut depth = 0;
    while let Some(s) = cur.take() {
        if let Some(a) = &mut s.author {
            a.raw_description = None;
        }
        if s.raw_text.is_some() {
            if s.text.trim().is_empty() {
                s.text = status_text(s);
            }
            s.raw_text = None;
        }
        depth += 1;
        if depth > 8 {
            break;
        }
        cur = s.quote.as_deref_mut();
    }
}

/// Posts as the renderer reads them.
fn values(posts: &[Status]) -> Vec<Value> {
    posts
        .iter()
        .map(|p| serde_json::to_value(p).unwrap_or_default())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_prefers_focal_and_near_parents() {
        let mk = |i: u32, r| (json!({"id": i.to_string()}), r);
        let mut posts = vec![
            mk(1, "parent"),
            mk(2, "parent"),
            mk(3, "post"),
            mk(4, "thread"),
            mk(5, "reply"),
        ];
        assert!(truncate(&mut posts, 3));
        let ids: Vec<&str> = posts
            .iter()
            .map(|(p, _)| p["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["1", "2", "3"]);
        assert!(!truncate(&mut posts, 3));
        assert!(truncate(&mut posts, 2));
        let ids: Vec<&str> = posts
            .iter()
            .map(|(p, _)| p["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["2", "3"]);
    }
}
