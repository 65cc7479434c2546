//! A post's two lists (upstream.md §6.1): `x_md_get_quotes`, the posts
//! quoting it (FxTwitter `/2/status/{id}/quotes`, X's Latest search
//! `quoted_tweet_id:<id>`), and `x_md_get_reposts`, the accounts that
//! reposted it (`/2/status/{id}/reposts`, X's Retweeters timeline).
//!
//! Both walk pages with the list tools' machinery (`browse::walk_list`,
//! `<cursor>@<offset>` positions, page mode, the result budget); quote
//! rows are shaped and rendered like search results, repost rows like
//! followers.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::json;

use super::args::PostListArgs;
use super::browse::{
    answer_errors, base_structured, continuation, cursor_error, page_path, walk_list, BrowseResult,
    ListPage, Row,
};
use super::budget::{fit_rows, Run};
use super::cursor::{self, CursorKind};
use super::error::{code, XError};
use super::escape::{at_handle, escape_heading};
use super::fetcher::Fetcher;
use super::model::parse::Authors;
use super::model::status::{Page, Status};
use super::model::user::User;
use super::registry::Tool;
use super::render::browse::{finish, post_line, push_tail, user_line};
use super::search::{list_row, unavailable};
use super::typed_read::fetch_typed;
use super::upstream::Upstream;

/// Which list of a post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusList {
    /// Posts quoting the post (`x_md_get_quotes`).
    Quotes,
    /// Accounts that reposted it (`x_md_get_reposts`).
    Reposts,
}

impl StatusList {
    /// The cursor kind, and the `resource` of `structuredContent`.
    fn kind(self) -> CursorKind {
        CursorKind(match self {
            StatusList::Quotes => Tool::GetQuotes,
            StatusList::Reposts => Tool::GetReposts,
        })
    }

    /// The last segment of the HTTP route (X's own paths).
    pub fn route_segment(self) -> &'static str {
        match self {
            StatusList::Quotes => "quotes",
            StatusList::Reposts => "retweets",
        }
    }
}

/// Maps one upstream page. The empty `404` means X gave no timeline: for
/// quotes (a search) that is an outage, not "no quotes" (that is a `200`
/// with `[]`); for reposts the post is unknown or its list is withheld.
fn check_page<T: Row + DeserializeOwned>(
    up: &dyn Upstream,
    path: &str,
    list: StatusList,
    id: &str,
    authors: Authors,
) -> Result<ListPage<T>, XError> {
    let (resp, page) = fetch_typed(up, path, "a list page", |p: &Page<T>| p.code, authors)?;
    let page = page?;
    if resp.status == 404 || page.code == Some(404) {
        return Err(match list {
            StatusList::Quotes => unavailable("quote search"),
            StatusList::Reposts => XError::new(
                404,
                code::NOT_FOUND,
                format!("Post {id} was not found, or X does not list its reposts."),
            ),
        });
    }
    answer_errors(resp.status, page.code, page.message.as_deref())?;
    ListPage::from_page(page, "a list page")
}

/// Runs `x_md_get_quotes` or `x_md_get_reposts` for the post `a.target`.
pub fn status_list(
    f: &Fetcher,
    list: StatusList,
    a: &PostListArgs,
    run: &Run,
) -> Result<BrowseResult, XError> {
    match list {
        StatusList::Quotes => {
            let full = a.list.full;
            let row = |p: Status| {
                let mut p = list_row(p, full);
                // Every row quotes the requested post: no row carries that
                // repeated copy (`full` or not; the result names the post
                // once, in `id` and `url`). Lean rows carry no quote at all.
                let requested = p.quote.as_ref().and_then(|q| q.id.as_ref());
                if !full || requested.is_some_and(|q| q.as_str() == a.target.id) {
                    p.quote = None;
                }
                p
            };
            // A quoting row carries the requested post, with its author.
            let author = |p: &Status| {
                p.quote
                    .as_ref()
                    .filter(|q| q.id() == Some(a.target.id.as_str()))
                    .and_then(|q| q.author.as_ref())
                    .and_then(|u| u.handle())
                    .filter(|h| super::model::user::is_screen_name(h))
                    .map(str::to_string)
            };
            let rows = Rows {
                keep: &Status::is_post_row,
                author: &author,
                shape: &row,
                line: &|p| post_line(p, full),
            };
            walk_rows(f, list, a, run, rows)
        }
        StatusList::Reposts => {
            let rows = Rows {
                keep: &User::is_account_row,
                author: &|_| None,
                shape: &|u| u.lean(a.list.full),
                line: &|u| user_line(u, a.list.full, true),
            };
            walk_rows(f, list, a, run, rows)
        }
    }
}

/// How one list treats its upstream rows: `keep` filters them, `author`
/// reads the requested post's author off a row when the row shows it,
/// `shape` makes a kept row what is served, `line` renders it.
struct Rows<'a, T> {
    keep: &'a dyn Fn(&T) -> bool,
    author: &'a dyn Fn(&T) -> Option<String>,
    shape: &'a dyn Fn(T) -> T,
    line: &'a dyn Fn(&T) -> String,
}

/// The walk, budget and rendering both lists share.
///
/// The result names the post's author only as the rows show it (a quote
/// carries the quoted post's author): X ignores the handle in a post link,
/// so the one in the request (`elonmusk` in
/// `x.com/elonmusk/status/<someone else's post>`) is no evidence. Unknown,
/// the post is named by its id and `https://x.com/i/status/<id>`, and
/// `structuredContent` has no `handle`.
fn walk_rows<T: Row + DeserializeOwned + Serialize>(
    f: &Fetcher,
    list: StatusList,
    a: &PostListArgs,
    run: &Run,
    rows: Rows<'_, T>,
) -> Result<BrowseResult, XError> {
    let Rows {
        keep,
        author,
        shape,
        line,
    } = rows;
    let kind = list.kind();
    let (handle, id, args) = (a.target.handle.as_str(), a.target.id.as_str(), &a.list);
    let (key, scope) = (&run.settings.cursor_key, cursor::Bound::scope(id));
    let start = match &args.cursor {
        Some(c) => Some(cursor::decode(key, c, kind, &scope).map_err(cursor_error)?),
        None => None,
    };
    let base = format!("/2/status/{id}/{}", kind.tag());
    let authors = Authors::for_rows(args.full);
    let mut fetch = |c: &str| check_page::<T>(f, &page_path(&base, c, ""), list, id, authors);
    let mut walk = walk_list(&mut fetch, keep, start, args.page, args.limit)?;
    let author = walk.items.iter().find_map(author);
    walk.items = std::mem::take(&mut walk.items)
        .into_iter()
        .map(shape)
        .collect();
    let next_cursor = walk
        .next
        .as_ref()
        .map(|p| cursor::encode(key, kind, &scope, p));
    let post_url = format!(
        "https://x.com/{}/status/{id}",
        author.as_deref().unwrap_or("i")
    );
    // Links go where this server answers: a handle that cannot open a
    // route (`i`, `api`, `search`, …) continues by the post id alone.
    let path = if super::registry::is_route_handle(handle) {
        format!("/{handle}/status/{id}/{}", list.route_segment())
    } else {
        format!("/i/status/{id}/{}", list.route_segment())
    };
    let cursor_at = |k: usize| cursor::encode(key, kind, &scope, &walk.cut_at(k));
    let (title, empty, key) = match list {
        StatusList::Quotes => ("Quotes of", "No quotes on this page.", "posts"),
        StatusList::Reposts => ("Reposts of", "No reposts on this page.", "users"),
    };
    let (text, structured) = fit_rows(
        run,
        walk.items.len(),
        &walk.notes,
        next_cursor,
        &cursor_at,
        &mut |k, next, notes| {
            let cut = k < walk.items.len();
            let cont = continuation(run.settings.link(&path), args, vec![], next, cut);
            let rows = &walk.items[..k];
            let heading = match &author {
                None => format!("# {title} post {id}"),
                Some(h) => format!("# {title} {}'s post {id}", at_handle(h, escape_heading)),
            };
            let mut md = vec![
                heading,
                String::new(),
                format!("Post: <{post_url}>"),
                String::new(),
            ];
            if rows.is_empty() {
                md.push(empty.into());
            }
            md.extend(rows.iter().map(line));
            push_tail(&mut md, notes, cont.as_ref());
            let mut m = base_structured(kind.tag(), args);
            if let Some(h) = &author {
                m.insert("handle", json!(h));
            }
            m.insert("id", json!(id));
            m.insert("url", json!(post_url));
            m.insert_written(key, rows);
            if let Some(c) = next {
                m.insert("next_cursor", json!(c));
            }
            if !notes.is_empty() {
                m.insert("warnings", json!(notes));
            }
            (finish(md), m)
        },
    );
    Ok(BrowseResult { text, structured })
}
