//! `x_md_search_posts`: `latest`/`top` through `/2/search`, `photos` and
//! `videos` (and `media`, an alias of `photos`) through
//! `/2/search?feed=media` filtered by media kind, and `users` through
//! `/2/typeahead` (one page, no counts).

use serde_json::{json, Value};

use super::browse::{
    base_structured, continuation, cursor_error, other_errors, page_path, walk_list, BrowseArgs,
    BrowseResult, ListPage,
};
use super::budget::{fit_rows, Run};
use super::cache::Fetcher;
use super::cursor::{self, form_encode, CursorKind};
use super::error::{check_transport, code, parse_object, XError};
use super::model::{self, is_status, s};
use super::render::browse::search_markdown;
use super::upstream::Upstream;

/// The note on every `feed=users` result.
pub const USERS_NOTE: &str = "Accounts come from X's typeahead: follower and post counts are not available from this source, and there is a single page of results.";

/// Why a `cursor` given with `feed=users` is refused: the one cursor that
/// feed takes continues a result cut by the result budget.
pub const USERS_CURSOR_REFUSED: &str = "feed=users has a single page and issues no cursor; omit `cursor`. (Its only cursor continues a result cut by the result budget: pass that result's `next_cursor` unchanged.)";

/// The search feed actually served (`media` is served as `photos`).
pub fn effective_feed(feed: &str) -> &'static str {
    match feed {
        "top" => "top",
        "photos" | "media" => "photos",
        "videos" => "videos",
        "users" => "users",
        _ => "latest",
    }
}

fn media_items(post: &Value) -> Vec<&Value> {
    let m = post.get("media");
    let list = |k: &str| {
        m.and_then(|m| m.get(k))
            .and_then(Value::as_array)
            .map(|a| a.iter().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let all = list("all");
    if !all.is_empty() {
        return all;
    }
    let mut v = list("photos");
    v.extend(list("videos"));
    v
}

/// True when the post carries a photo.
pub fn has_photo(post: &Value) -> bool {
    media_items(post)
        .iter()
        .any(|i| s(i, "type") == Some("photo"))
}

/// True when the post carries a video or GIF.
pub fn has_video(post: &Value) -> bool {
    media_items(post)
        .iter()
        .any(|i| matches!(s(i, "type"), Some("video" | "gif" | "animated_gif")))
}

/// The `search_unavailable` error for `what` (an X search that answered
/// no timeline).
pub fn unavailable(what: &str) -> XError {
    XError::new(
        503,
        code::SEARCH_UNAVAILABLE,
        format!("X {what} is temporarily unavailable upstream. Retry shortly."),
    )
}

/// Maps a `/2/search` answer: its `code: 404` is an outage (FxEmbed#2303),
/// not "no results" (that is a 200 with `[]`).
fn check_search(up: &dyn Upstream, path: &str) -> Result<ListPage, XError> {
    let resp = up.get(path).map_err(|e| XError::from_fetch(&e))?;
    check_transport(&resp)?;
    let body = parse_object(&resp)?;
    if resp.status == 404 || body.get("code").and_then(Value::as_u64) == Some(404) {
        return Err(unavailable("search"));
    }
    other_errors(resp.status, &body)?;
    ListPage::from_body(body)
}

fn typeahead(up: &dyn Upstream, query: &str) -> Result<Vec<Value>, XError> {
    let path = format!("/2/typeahead?q={}&result_type=users", form_encode(query));
    let resp = up.get(&path).map_err(|e| XError::from_fetch(&e))?;
    check_transport(&resp)?;
    let body = parse_object(&resp)?;
    let failed = !(200..300).contains(&resp.status)
        || body
            .get("code")
            .and_then(Value::as_u64)
            .is_some_and(|c| c >= 400);
    if failed {
        return Err(unavailable("user search"));
    }
    match body.get("users") {
        Some(Value::Array(a)) => Ok(a.iter().filter(|u| u.is_object()).cloned().collect()),
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(_) => Err(XError::unexpected_response()),
    }
}

/// A post of a list result as served: normalised, with its link, and
/// lean unless `full`.
pub fn list_row(mut p: Value, full: bool) -> Value {
    model::normalize(&mut p, 0);
    model::fill_url(&mut p, None);
    super::post::lean_row(&mut p, full);
    p
}

/// Runs `x_md_search_posts` for `q` (trimmed here) and `feed`.
pub fn search(
    f: &Fetcher,
    args: &BrowseArgs,
    q: &str,
    feed: &str,
    run: &Run,
) -> Result<BrowseResult, XError> {
    let query = q.trim();
    let feed = effective_feed(feed);
    let scope = cursor::search_scope(feed, query);
    let mut users = None;
    let mut notes_top = Vec::new();
    let mut walk = super::browse::Walk::default();
    // Accounts of the one typeahead page already served (a `feed=users`
    // result cut by the budget continues after them).
    let mut users_skip = 0;
    if feed == "users" {
        if let Some(c) = &args.cursor {
            users_skip = cursor::decode(c, CursorKind::Search, &scope)
                .ok()
                .filter(|p| p.offset > 0 && p.upstream.is_empty())
                .map(|p| p.offset)
                .ok_or_else(|| cursor_error(USERS_CURSOR_REFUSED.into()))?;
        }
        notes_top.push(USERS_NOTE.to_string());
        let mut list = if args.page == 1 || args.cursor.is_some() {
            typeahead(f, query)?
        } else {
            Vec::new()
        };
        list.drain(..users_skip.min(list.len()));
        list.truncate(args.limit);
        users = Some(list);
    } else {
        let start = match &args.cursor {
            Some(c) => Some(cursor::decode(c, CursorKind::Search, &scope).map_err(cursor_error)?),
            None => None,
        };
        let upstream_feed = match feed {
            "photos" | "videos" => "media",
            other => other,
        };
        let base = format!("/2/search?q={}&feed={upstream_feed}", form_encode(query));
        let keep: &dyn Fn(&Value) -> bool = match feed {
            "photos" => &|p: &Value| is_status(p) && has_photo(p),
            "videos" => &|p: &Value| is_status(p) && has_video(p),
            _ => &|p: &Value| is_status(p),
        };
        let mut fetch = |c: &str| check_search(f, &page_path(&base, c, ""));
        walk = walk_list(&mut fetch, keep, start, args.page, args.limit)?;
    }
    let posts: Vec<Value> = std::mem::take(&mut walk.items)
        .into_iter()
        .map(|p| list_row(p, args.full))
        .collect();
    walk.items = posts;
    let next_cursor = walk
        .next
        .as_ref()
        .map(|p| cursor::encode(CursorKind::Search, &scope, p));
    let extra = vec![("q", query.to_string()), ("feed", feed.to_string())];
    let rows = users.as_ref().map_or(walk.items.len(), Vec::len);
    let cursor_at = |k: usize| {
        let at = if users.is_some() {
            cursor::Position {
                offset: users_skip + k,
                ..Default::default()
            }
        } else {
            walk.cut_at(k)
        };
        cursor::encode(CursorKind::Search, &scope, &at)
    };
    let (text, structured) = fit_rows(
        run,
        rows,
        &walk.notes,
        next_cursor,
        &cursor_at,
        &mut |k, next, walk_notes| {
            let cont = continuation(
                run.settings.link("/search"),
                args,
                extra.clone(),
                next,
                k < rows,
            );
            let shown_users = users.as_ref().map(|u| &u[..k]);
            let shown_posts = if users.is_some() {
                &walk.items[..0]
            } else {
                &walk.items[..k]
            };
            let markdown = search_markdown(
                query,
                shown_posts,
                shown_users,
                args.full,
                &notes_top,
                walk_notes,
                cont.as_ref(),
            );
            let mut m = base_structured("search", args);
            m.insert("query".into(), json!(query));
            m.insert("feed".into(), json!(feed));
            match shown_users {
                Some(u) => {
                    m.insert("users".into(), Value::Array(u.to_vec()));
                }
                None => {
                    m.insert("posts".into(), Value::Array(shown_posts.to_vec()));
                }
            }
            if let Some(c) = next {
                m.insert("next_cursor".into(), json!(c));
            }
            let mut warnings = notes_top.clone();
            warnings.extend(walk_notes.iter().cloned());
            if !warnings.is_empty() {
                m.insert("warnings".into(), json!(warnings));
            }
            (markdown, Value::Object(m))
        },
    );
    Ok(BrowseResult { text, structured })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_kinds() {
        let photo = json!({"media":{"all":[{"type":"photo"}]}});
        let video = json!({"media":{"videos":[{"type":"gif"}]}});
        assert!(has_photo(&photo) && !has_video(&photo));
        assert!(has_video(&video) && !has_photo(&video));
        assert!(!has_photo(&json!({})));
        assert_eq!(effective_feed("media"), "photos");
        assert_eq!(effective_feed("latest"), "latest");
    }
}
