//! `x_md_search_posts`: `latest`/`top` through `/2/search`, `photos` and
//! `videos` (and `media`, an alias of `photos`) through
//! `/2/search?feed=media` filtered by media kind, and `users` through
//! `/2/typeahead` (one page, no counts).

use serde_json::json;

use super::browse::{
    answer_errors, base_structured, continuation, cursor_error, page_path, walk_list, BrowseArgs,
    BrowseResult, ListPage, Row as _,
};
use super::budget::{fit_rows, Run};
use super::cursor::{self, form_encode, CursorKind};
use super::error::{code, XError};
use super::fetcher::Fetcher;
use super::model::media::MediaItem;
use super::model::parse::Authors;
use super::model::status::{Page, Status};
use super::model::user::User;
use super::render::browse::search_markdown;
use super::typed_read::fetch_typed;
use super::upstream::Upstream;

/// The note on every `feed=users` result.
pub const USERS_NOTE: &str = "Accounts come from X's typeahead: follower and post counts, join dates and bios are not available from this source, and it answers one list, which limit, page and next_cursor page through.";

/// Why a `cursor` given with `feed=users` is refused: the one cursor that
/// feed takes continues a result cut by the result budget.
pub const USERS_CURSOR_REFUSED: &str = "this cursor is not a feed=users cursor; pass a feed=users result's `next_cursor` unchanged, or omit `cursor`.";

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

fn list(l: Option<&Vec<MediaItem>>) -> &[MediaItem] {
    l.map(Vec::as_slice).unwrap_or_default()
}

fn media_kinds(post: &Status) -> impl Iterator<Item = &str> {
    let m = post.media.as_ref();
    let all = m.map_or(&[][..], |m| list(m.all.as_ref()));
    let items: Vec<&MediaItem> = if !all.is_empty() {
        all.iter().collect()
    } else {
        m.map(|m| {
            list(m.photos.as_ref())
                .iter()
                .chain(list(m.videos.as_ref()))
                .collect()
        })
        .unwrap_or_default()
    };
    items.into_iter().filter_map(|i| i.kind.as_deref())
}

/// True when the post carries a photo.
pub fn has_photo(post: &Status) -> bool {
    media_kinds(post).any(|k| k == "photo")
}

/// True when the post carries a video or GIF.
pub fn has_video(post: &Status) -> bool {
    media_kinds(post).any(|k| matches!(k, "video" | "gif" | "animated_gif"))
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
fn check_search(
    up: &dyn Upstream,
    path: &str,
    authors: Authors,
) -> Result<ListPage<Status>, XError> {
    let (resp, page) = fetch_typed(
        up,
        path,
        "a search page",
        |p: &Page<Status>| p.code,
        authors,
    )?;
    let page = page?;
    if resp.status == 404 || page.code == Some(404) {
        return Err(unavailable("search"));
    }
    answer_errors(resp.status, page.code, page.message.as_deref())?;
    ListPage::from_page(page, "a search page")
}

/// A `/2/typeahead` answer.
#[derive(Default, serde::Deserialize)]
#[serde(default, expecting = "a typeahead answer object")]
struct Typeahead {
    #[serde(deserialize_with = "super::model::parse::rows")]
    users: Vec<User>,
    #[serde(deserialize_with = "super::model::scalar::count")]
    code: Option<u64>,
}

fn typeahead(up: &dyn Upstream, query: &str) -> Result<Vec<User>, XError> {
    let path = format!("/2/typeahead?q={}&result_type=users", form_encode(query));
    let (resp, body) = fetch_typed(
        up,
        &path,
        "a typeahead answer",
        |b: &Typeahead| b.code,
        Authors::Whole,
    )?;
    let body = body?;
    let failed = !(200..300).contains(&resp.status) || body.code.is_some_and(|c| c >= 400);
    if failed {
        return Err(unavailable("user search"));
    }
    // An account the list repeats is shown once, where it first appears.
    let mut ids = std::collections::HashSet::new();
    Ok(body
        .users
        .into_iter()
        .filter(User::is_account_row)
        .filter(|u| u.row_id().is_none_or(|id| ids.insert(id.to_string())))
        .map(unknowns_absent)
        .collect())
}

/// A typeahead account as known: X's typeahead gives no counts, join date
/// or bio, and FxTwitter fills them with zeros and empty strings, which
/// would read as an account with no followers. Absent (`null`) instead.
fn unknowns_absent(mut u: User) -> User {
    for count in [
        &mut u.followers,
        &mut u.following,
        &mut u.likes,
        &mut u.media_count,
        &mut u.statuses,
    ] {
        *count = None;
    }
    for text in [&mut u.joined, &mut u.description] {
        if text.as_deref().is_some_and(str::is_empty) {
            *text = None;
        }
    }
    if u.raw_description
        .as_ref()
        .is_some_and(|r| r.text.is_empty())
    {
        u.raw_description = None;
    }
    u
}

/// A post of a list result as served: normalised, with its link, and
/// lean unless `full`.
pub fn list_row(mut p: Status, full: bool) -> Status {
    // A kept row is a status ([`Status::is_post_row`]); one sent without
    // `type` says so, as the output schema requires.
    p.kind.get_or_insert_with(|| "status".into());
    p.normalize(0);
    p.fill_url(None);
    super::post::lean_status_row(&mut p, full);
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
    // Accounts of the one typeahead list before this result's first (from
    // `page`, or from a `feed=users` cursor).
    let mut users_skip = 0;
    let mut users_next = None;
    if feed == "users" {
        if let Some(c) = &args.cursor {
            users_skip = cursor::decode(&run.settings.cursor_key, c, CursorKind::Search, &scope)
                .ok()
                .filter(|p| p.offset > 0 && p.upstream.is_empty())
                .map(|p| p.offset)
                .ok_or_else(|| cursor_error(USERS_CURSOR_REFUSED.into()))?;
        }
        notes_top.push(USERS_NOTE.to_string());
        // The one list, paged here: `page` (or the cursor's offset) picks
        // the first row, and a list longer than `limit` continues with a
        // cursor, never silently cut.
        if args.cursor.is_none() {
            users_skip = (args.page - 1) * args.limit;
        }
        let mut list = typeahead(f, query)?;
        list.drain(..users_skip.min(list.len()));
        if list.len() > args.limit {
            list.truncate(args.limit);
            users_next = Some(cursor::encode(
                &run.settings.cursor_key,
                CursorKind::Search,
                &scope,
                &cursor::Position {
                    offset: users_skip + args.limit,
                    ..Default::default()
                },
            ));
        }
        users = Some(
            list.into_iter()
                .map(|u| u.lean(args.full))
                .collect::<Vec<_>>(),
        );
    } else {
        let start = match &args.cursor {
            Some(c) => Some(
                cursor::decode(&run.settings.cursor_key, c, CursorKind::Search, &scope)
                    .map_err(cursor_error)?,
            ),
            None => None,
        };
        let upstream_feed = match feed {
            "photos" | "videos" => "media",
            other => other,
        };
        let base = format!("/2/search?q={}&feed={upstream_feed}", form_encode(query));
        let keep: &dyn Fn(&Status) -> bool = match feed {
            "photos" => &|p: &Status| p.is_post_row() && has_photo(p),
            "videos" => &|p: &Status| p.is_post_row() && has_video(p),
            _ => &|p: &Status| p.is_post_row(),
        };
        let authors = Authors::for_rows(args.full);
        let mut fetch = |c: &str| check_search(f, &page_path(&base, c, ""), authors);
        walk = walk_list(&mut fetch, keep, start, args.page, args.limit)?;
    }
    let posts: Vec<Status> = std::mem::take(&mut walk.items)
        .into_iter()
        .map(|p| list_row(p, args.full))
        .collect();
    walk.items = posts;
    let next_cursor = walk
        .next
        .as_ref()
        .map(|p| cursor::encode(&run.settings.cursor_key, CursorKind::Search, &scope, p))
        .or(users_next);
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
        cursor::encode(&run.settings.cursor_key, CursorKind::Search, &scope, &at)
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
            m.insert("query", json!(query));
            m.insert("feed", json!(feed));
            match shown_users {
                Some(u) => m.insert_written("users", u),
                None => m.insert_written("posts", shown_posts),
            }
            if let Some(c) = next {
                m.insert("next_cursor", json!(c));
            }
            let mut warnings = notes_top.clone();
            warnings.extend(walk_notes.iter().cloned());
            if !warnings.is_empty() {
                m.insert("warnings", json!(warnings));
            }
            (markdown, m)
        },
    );
    Ok(BrowseResult { text, structured })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_kinds() {
        let st = |j: &str| serde_json::from_str::<Status>(j).unwrap();
        let photo = st(r#"{"media":{"all":[{"type":"photo"}]}}"#);
        let video = st(r#"{"media":{"videos":[{"type":"gif"}]}}"#);
        assert!(has_photo(&photo) && !has_video(&photo));
        assert!(has_video(&video) && !has_photo(&video));
        assert!(!has_photo(&st("{}")));
        assert_eq!(effective_feed("media"), "photos");
        assert_eq!(effective_feed("latest"), "latest");
    }
}
