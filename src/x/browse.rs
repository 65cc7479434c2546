//! The list tools' shared machinery (upstream.md §2.4): browse arguments,
//! the "collect list" walk over upstream pages with `<cursor>@<offset>`
//! positions, page mode, the list error mapping, and
//! `x_md_get_followers` / `x_md_get_following`.

use serde_json::{json, Value};
use std::fmt::Write as _;

use super::args::{MAX_LIMIT, MAX_PAGE};
use super::budget::fit_rows;
use super::budget::Run;
use super::cursor::{self, CursorKind, Position, MAX_CURSOR_OFFSET};
use super::error::{clip_message, code, XError};
use super::fetcher::Fetcher;
use super::model::parse::{shape_error, Authors};
use super::model::scalar::Id;
use super::model::status::{Page, ProfileEnvelope, Status};
use super::model::user::User;
use super::render::browse::{connections_markdown, Continuation};
use super::structured::Structured;
use super::typed_read::fetch_typed;
use super::upstream::Upstream;
use serde::de::DeserializeOwned;

/// `count` sent upstream for every list page. Default 20 (the largest
/// `limit`), whatever the caller's `limit`, so offsets in cursors stay valid
/// when `limit` changes between calls and pages are shared in the cache.
pub const UPSTREAM_PAGE_COUNT: usize = 20;

/// Upstream pages one search or connections block may read. Default 6;
/// when reached the result holds what was collected, a note says so, and
/// `next_cursor` continues from there.
pub const LIST_PAGE_BUDGET: usize = 6;

/// Extra upstream pages allowed per additional block in page mode
/// (`page=N` walks N blocks). Default 2.
pub const PAGE_BUDGET_PER_BLOCK: usize = 2;

pub use super::args::BrowseArgs;

/// A refused `cursor` argument.
pub fn cursor_error(message: String) -> XError {
    XError::new(400, code::INVALID_CURSOR, message)
}

/// A list row: something with an id the walk can recognise again.
pub trait Row: Default {
    /// The row's id, when it has one.
    fn row_id(&self) -> Option<&str>;
}

impl Row for Value {
    fn row_id(&self) -> Option<&str> {
        self.get("id").and_then(Value::as_str)
    }
}

impl Row for Status {
    fn row_id(&self) -> Option<&str> {
        self.id()
    }
}

impl Row for User {
    /// An empty id is no id: two accounts sent with `"id": ""` are two
    /// rows, not one seen twice.
    fn row_id(&self) -> Option<&str> {
        self.id.as_ref().map(Id::as_str).filter(|i| !i.is_empty())
    }
}

/// One upstream list page.
#[derive(Debug, Clone, Default)]
pub struct ListPage<T = Status> {
    /// The page's rows.
    pub items: Vec<T>,
    /// `cursor.bottom`, when a non-empty string.
    pub bottom: Option<String>,
}

impl<T> ListPage<T> {
    /// The rows and `cursor.bottom` of a typed page that answered no error;
    /// one without `results` is not the expected shape (`what` names it),
    /// never an empty list.
    pub fn from_page(page: Page<T>, what: &str) -> Result<ListPage<T>, XError> {
        let bottom = page.bottom().map(str::to_string);
        match page.results {
            Some(items) => Ok(ListPage { items, bottom }),
            None => Err(shape_error(what, &"`results` is missing")),
        }
    }
}

/// What one walk produced.
#[derive(Debug, Clone)]
pub struct Walk<T = Status> {
    /// The kept items, at most `limit`.
    pub items: Vec<T>,
    /// Where the next result starts; `None` at the end of the list.
    pub next: Option<Position>,
    /// Notes for the agent (e.g. the page budget was reached).
    pub notes: Vec<String>,
    /// Where each kept item was read (parallel to `items`): a result cut
    /// before item k continues at `positions[k]`.
    pub positions: Vec<Position>,
    /// Marks of the rows served before this result's items (from the
    /// cursor), oldest first.
    pub seen_before: Vec<u32>,
}

impl<T> Default for Walk<T> {
    fn default() -> Self {
        Walk {
            items: Vec::new(),
            next: None,
            notes: Vec::new(),
            positions: Vec::new(),
            seen_before: Vec::new(),
        }
    }
}

impl<T: Row> Walk<T> {
    /// Where a result cut before item `k` continues (after item `k - 1`),
    /// remembering the rows served up to there.
    pub fn cut_at(&self, k: usize) -> Position {
        let mut p = self.positions.get(k).cloned().unwrap_or_default();
        p.seen = self.marks_through(k);
        p
    }

    /// The last [`cursor::MAX_ROW_MARKS`] marks of the rows served before
    /// this result and of its first `k` items.
    fn marks_through(&self, k: usize) -> Vec<u32> {
        let mut marks = self.seen_before.clone();
        marks.extend(
            self.items[..k.min(self.items.len())]
                .iter()
                .filter_map(T::row_id)
                .map(cursor::row_mark),
        );
        let drop = marks.len().saturating_sub(cursor::MAX_ROW_MARKS);
        marks.drain(..drop);
        marks
    }
}

/// The note when the upstream's `cursor.bottom` is not one an xmd cursor
/// can carry ([`cursor::can_carry`]): the walk ends there rather than
/// hand out a cursor the next call would refuse (or misread).
pub const UNCARRIABLE_NOTE: &str = "The upstream sent a continuation xmd cannot carry (too long or with unexpected characters); the list ends here.";

/// Upstream pages in a row without a new row (empty, or only rows
/// already served) after which a walk stops. Default 2: one such page
/// that carries a new cursor is read past (X sends them inside a list,
/// and at its end an endless run of them, each with a fresh cursor); at
/// the second the result ends with [`nothing_new_note`] and a
/// `next_cursor` that looks further.
pub const MAX_PAGES_WITHOUT_NEW_ROWS: usize = 2;

/// The note when [`MAX_PAGES_WITHOUT_NEW_ROWS`] pages in a row brought no
/// new row.
pub fn nothing_new_note() -> String {
    format!(
        "The upstream sent {MAX_PAGES_WITHOUT_NEW_ROWS} pages in a row without a new row, \
         which usually means the list has ended; pass next_cursor to look further."
    )
}

/// The note when one upstream page holds more than
/// [`MAX_CURSOR_OFFSET`] rows (FxTwitter sends about 20): only that many
/// are read from it, and the walk goes on at the page's bottom cursor.
pub fn long_page_note() -> String {
    format!(
        "The upstream sent more than {MAX_CURSOR_OFFSET} rows on one page; \
         only the first {MAX_CURSOR_OFFSET} of that page are read."
    )
}

/// Rows and upstream pages already served: rows in this walk (by id) and
/// before it (by the marks the cursor carries), and the upstream cursors
/// this walk has read (a `cursor.bottom` among them does not advance).
#[derive(Default)]
struct Seen {
    ids: std::collections::HashSet<String>,
    marks: std::collections::HashSet<u32>,
    cursors: std::collections::HashSet<String>,
    /// Pages read in a row that brought no new row.
    barren: usize,
}

impl Seen {
    /// Records `id` as served; false when it was served before.
    fn insert(&mut self, id: String) -> bool {
        !self.marks.contains(&cursor::row_mark(&id)) && self.ids.insert(id)
    }
}

/// Collects up to `limit` kept items from `start` (one block).
///
/// A row already served (by id in this walk, by mark before it) is
/// skipped and the walk goes on: an upstream page may repeat rows of the
/// page before (a boundary post, a pinned post) or of itself. The list
/// ends only where the upstream ends it: a page without `cursor.bottom`,
/// or a `cursor.bottom` this walk has already read (it does not
/// advance). An empty page that carries a new cursor is read past. Every
/// other stop (the page budget, a cursor xmd cannot carry) adds a note.
fn collect_block<T: Row>(
    fetch: &mut dyn FnMut(&str) -> Result<ListPage<T>, XError>,
    keep: &dyn Fn(&T) -> bool,
    start: Position,
    limit: usize,
    budget: &mut usize,
    seen: &mut Seen,
) -> Result<(Walk<T>, bool), XError> {
    let mut w = Walk::default();
    let mut pos = start;
    loop {
        if *budget == 0 {
            w.next = Some(pos);
            return Ok((w, true));
        }
        *budget -= 1;
        seen.cursors.insert(pos.upstream.clone());
        let mut page = fetch(&pos.upstream)?;
        if page.items.len() > MAX_CURSOR_OFFSET {
            // Every offset the walk writes into a cursor must be one
            // `cursor::decode` reads back.
            page.items.truncate(MAX_CURSOR_OFFSET);
            let note = long_page_note();
            if !w.notes.contains(&note) {
                w.notes.push(note);
            }
        }
        let n = page.items.len();
        let mut i = pos.offset;
        // The kept rows of a resumed page before the offset were served.
        // (Only kept rows count as served: a repost row carries the id of
        // the post it reposts, which may come later as a row of its own.)
        for item in page.items[..i.min(n)].iter().filter(|r| keep(r)) {
            if let Some(id) = item.row_id() {
                seen.ids.insert(id.to_string());
            }
        }
        let mut new_rows = 0;
        while i < n && w.items.len() < limit {
            let item = &mut page.items[i];
            if !keep(item) {
                // Not served, but new: the upstream is still moving.
                new_rows += 1;
            } else if item.row_id().is_none_or(|id| seen.insert(id.to_string())) {
                new_rows += 1;
                w.items.push(std::mem::take(item));
                w.positions.push(Position {
                    upstream: pos.upstream.clone(),
                    offset: i,
                    seen: Vec::new(),
                });
            }
            i += 1;
        }
        if w.items.len() >= limit && i < n {
            w.next = Some(Position {
                upstream: pos.upstream,
                offset: i,
                seen: Vec::new(),
            });
            return Ok((w, false));
        }
        let read_whole = pos.offset == 0;
        match page.bottom {
            // The upstream's end: no cursor, or one already read.
            None => return Ok((w, false)),
            Some(b) if seen.cursors.contains(&b) => return Ok((w, false)),
            Some(b) if !cursor::can_carry(&b) => {
                w.notes.push(UNCARRIABLE_NOTE.into());
                return Ok((w, false));
            }
            Some(b) => {
                pos = Position {
                    upstream: b,
                    offset: 0,
                    seen: Vec::new(),
                }
            }
        }
        if read_whole && new_rows == 0 {
            seen.barren += 1;
            if seen.barren >= MAX_PAGES_WITHOUT_NEW_ROWS {
                w.notes.push(nothing_new_note());
                w.next = Some(pos);
                return Ok((w, false));
            }
        } else {
            seen.barren = 0;
        }
        if w.items.len() >= limit {
            w.next = Some(pos);
            return Ok((w, false));
        }
    }
}

/// Walks a list: from `start` (a decoded cursor) one block, or in page
/// mode `page` blocks from the beginning, returning the last. A list that
/// ends before block `page` gives an empty result without `next`. Reads
/// at most [`LIST_PAGE_BUDGET`] upstream pages, plus
/// [`PAGE_BUDGET_PER_BLOCK`] per extra block.
pub fn walk_list<T: Row>(
    fetch: &mut dyn FnMut(&str) -> Result<ListPage<T>, XError>,
    keep: &dyn Fn(&T) -> bool,
    start: Option<Position>,
    page: usize,
    limit: usize,
) -> Result<Walk<T>, XError> {
    walk_pages(fetch, keep, start, page, limit, LIST_PAGE_BUDGET)
}

/// [`walk_list`] with `first_budget` upstream pages for the first block
/// (the profile timeline reads `profile::PROFILE_PAGE_BUDGET`).
pub fn walk_pages<T: Row>(
    fetch: &mut dyn FnMut(&str) -> Result<ListPage<T>, XError>,
    keep: &dyn Fn(&T) -> bool,
    start: Option<Position>,
    page: usize,
    limit: usize,
    first_budget: usize,
) -> Result<Walk<T>, XError> {
    let blocks = if start.is_some() { 1 } else { page.max(1) };
    let total_budget = first_budget + PAGE_BUDGET_PER_BLOCK * (blocks - 1);
    let mut budget = total_budget;
    let mut pos = start.unwrap_or_default();
    let mut seen_before = std::mem::take(&mut pos.seen);
    let mut seen = Seen {
        marks: seen_before.iter().copied().collect(),
        ..Seen::default()
    };
    for b in 1..=blocks {
        let (mut w, budget_hit) = collect_block(fetch, keep, pos, limit, &mut budget, &mut seen)?;
        if budget_hit {
            w.notes.push(format!(
                "Stopped after reading {total_budget} upstream pages{}; pass next_cursor to continue.",
                if b < blocks {
                    format!(" before reaching page {blocks}")
                } else {
                    String::new()
                }
            ));
        }
        if budget_hit || b == blocks {
            // The next call must know the rows this result served.
            w.seen_before = seen_before;
            if let Some(mut next) = w.next.take() {
                next.seen = w.marks_through(w.items.len());
                w.next = Some(next);
            }
            return Ok(w);
        }
        // In page mode the earlier blocks were the earlier pages: the
        // cursor handed out marks their rows too.
        seen_before.extend(w.items.iter().filter_map(T::row_id).map(cursor::row_mark));
        match w.next {
            Some(p) => pos = p,
            None => {
                return Ok(Walk {
                    notes: w.notes,
                    ..Walk::default()
                })
            }
        }
    }
    Ok(Walk::default())
}

/// The upstream path of a list page: `base` plus `cursor` (when set) and
/// `count`, and any `extra` parameters after them.
pub fn page_path(base: &str, upstream_cursor: &str, extra: &str) -> String {
    let mut p = String::with_capacity(base.len() + upstream_cursor.len() + extra.len() + 32);
    p.push_str(base);
    p.push(if base.contains('?') { '&' } else { '?' });
    if !upstream_cursor.is_empty() {
        p.push_str("cursor=");
        p.push_str(&cursor::form_encode(upstream_cursor));
        p.push('&');
    }
    let _ = write!(p, "count={UPSTREAM_PAGE_COUNT}");
    p.push_str(extra);
    p
}

/// Maps a followers/following/statuses page answer (E5–E7).
pub fn check_account_list<T: Row + DeserializeOwned>(
    up: &dyn Upstream,
    path: &str,
    handle: &str,
    authors: Authors,
) -> Result<ListPage<T>, XError> {
    let (resp, page) = fetch_typed(up, path, "a list page", |p: &Page<T>| p.code, authors)?;
    // No Content: the timeline's `since` found nothing newer on its first
    // page (upstream.md §1.2, E5). An empty page without a cursor: the end.
    if resp.status == 204 {
        return Ok(ListPage::default());
    }
    // (The transport checks, in `page`, and these refuse disjoint statuses.)
    if resp.status == 401 || resp.status == 403 {
        return Err(protected_error(handle));
    }
    let page = page?;
    if resp.status == 404 || page.code == Some(404) {
        return Err(XError::new(
            404,
            code::NOT_FOUND,
            format!("Account @{handle} was not found, is suspended, or its list is unavailable."),
        ));
    }
    answer_errors(resp.status, page.code, page.message.as_deref())?;
    ListPage::from_page(page, "a list page")
}

/// The generic error for a non-2xx answer or a body `code` ≥ 400.
pub fn other_errors(status: u16, body: &Value) -> Result<(), XError> {
    answer_errors(
        status,
        body.get("code").and_then(Value::as_u64),
        body.get("message").and_then(Value::as_str),
    )
}

/// [`other_errors`] from an answer's status, body `code` and `message`.
pub fn answer_errors(
    status: u16,
    body_code: Option<u64>,
    message: Option<&str>,
) -> Result<(), XError> {
    if (200..300).contains(&status) && body_code.is_none_or(|c| c < 400) {
        return Ok(());
    }
    let what = match message {
        Some(m) => clip_message(m),
        None => format!("HTTP {status}"),
    };
    if status == 400 || body_code == Some(400) {
        return Err(XError::new(
            400,
            code::BAD_REQUEST,
            format!("FxTwitter refused the request: {what}."),
        ));
    }
    Err(XError::new(
        502,
        code::UPSTREAM_ERROR,
        format!("FxTwitter API error: {what}."),
    ))
}

/// The error for a protected account.
pub fn protected_error(handle: &str) -> XError {
    XError::new(
        403,
        code::PROTECTED,
        format!("Account @{handle} is protected; its posts and connections are not public."),
    )
}

/// The continuation for a result, when it has a `next_cursor`.
pub fn continuation(
    path: String,
    args: &BrowseArgs,
    extra: Vec<(&'static str, String)>,
    next_cursor: Option<&String>,
    cut_by_budget: bool,
) -> Option<Continuation> {
    let next_cursor = next_cursor?.clone();
    let mut params = Vec::new();
    if args.limit != MAX_LIMIT as usize {
        params.push(("limit", args.limit.to_string()));
    }
    if args.full {
        params.push(("full", "true".to_string()));
    }
    if let Some(n) = args.max_chars {
        params.push(("max_chars", n.to_string()));
    }
    params.extend(extra);
    // After a result cut by the budget the next page would skip the rows
    // left out of this one: only the cursor continues.
    let next_page = (args.cursor.is_none() && args.page < MAX_PAGE as usize && !cut_by_budget)
        .then_some(args.page + 1);
    Some(Continuation {
        path,
        params,
        next_cursor,
        next_page,
    })
}

/// The fields every browse `structuredContent` starts with (`cache` is
/// added when the result is serialized, see `tools::Served`).
pub fn base_structured(resource: &str, args: &BrowseArgs) -> Structured {
    let mut m = Structured::default();
    m.insert("resource", json!(resource));
    m.insert("page", json!(args.page));
    m.insert("limit", json!(args.limit));
    m.insert("source", json!("fxtwitter"));
    m
}

/// A tool's text and `structuredContent`.
#[derive(Debug, Clone)]
pub struct BrowseResult {
    /// The Markdown (text content).
    pub text: String,
    /// `structuredContent`.
    pub structured: Structured,
}

/// Runs `x_md_get_followers` (`following == false`) or
/// `x_md_get_following`.
pub fn connections(
    f: &Fetcher,
    following: bool,
    args: &BrowseArgs,
    run: &Run,
) -> Result<BrowseResult, XError> {
    let (kind, which) = if following {
        (CursorKind::Following, "following")
    } else {
        (CursorKind::Followers, "followers")
    };
    let handle = args.handle.as_str();
    let scope = cursor::handle_scope(handle);
    let start = match &args.cursor {
        Some(c) => {
            Some(cursor::decode(&run.settings.cursor_key, c, kind, &scope).map_err(cursor_error)?)
        }
        None => None,
    };
    let base = format!("/2/profile/{handle}/{which}");
    let mut fetch =
        |c: &str| check_account_list::<User>(f, &page_path(&base, c, ""), handle, Authors::Whole);
    let mut walk = walk_list(
        &mut fetch,
        &User::is_account_row,
        start,
        args.page,
        args.limit,
    )?;
    walk.items = std::mem::take(&mut walk.items)
        .into_iter()
        .map(|u| u.lean(args.full))
        .collect();
    if walk.items.is_empty() && args.cursor.is_none() && args.page == 1 {
        // An empty first page: say why when the account is protected (its
        // lists come back empty), fail when it does not exist.
        let user = fetch_profile(f, handle)?;
        if user.protected == Some(true) {
            walk.notes.push(format!(
                "@{handle} is a protected account; its {which} are not public."
            ));
        }
    }
    let next_cursor = walk
        .next
        .as_ref()
        .map(|p| cursor::encode(&run.settings.cursor_key, kind, &scope, p));
    let path = format!("/{handle}/{which}");
    let cursor_at =
        |k: usize| cursor::encode(&run.settings.cursor_key, kind, &scope, &walk.cut_at(k));
    let (text, structured) = fit_rows(
        run,
        walk.items.len(),
        &walk.notes,
        next_cursor,
        &cursor_at,
        &mut |k, next, notes| {
            let cut = k < walk.items.len();
            let cont = continuation(run.settings.link(&path), args, vec![], next, cut);
            let markdown = connections_markdown(
                handle,
                which,
                &walk.items[..k],
                args.full,
                notes,
                cont.as_ref(),
            );
            let mut m = base_structured(which, args);
            m.insert("handle", json!(handle));
            m.insert_written("users", &walk.items[..k]);
            if let Some(c) = next {
                m.insert("next_cursor", json!(c));
            }
            if !notes.is_empty() {
                m.insert("warnings", json!(notes));
            }
            (markdown, m)
        },
    );
    Ok(BrowseResult { text, structured })
}

/// Fetches `/2/profile/{handle}` and returns the `user` object (also when
/// protected), or the error: suspended, not found, or an upstream failure.
pub fn fetch_profile(up: &dyn Upstream, handle: &str) -> Result<User, XError> {
    let (resp, body) = fetch_typed(
        up,
        &format!("/2/profile/{handle}"),
        "a profile",
        |b: &ProfileEnvelope| b.code,
        Authors::Whole,
    )?;
    let body = body?;
    if resp.status == 404 || body.code == Some(404) {
        let suspended = body.reason.as_deref() == Some("suspended")
            || body
                .message
                .as_deref()
                .is_some_and(|m| m.to_ascii_lowercase().contains("suspended"));
        return Err(if suspended {
            XError::new(
                404,
                code::SUSPENDED,
                format!("Account @{handle} is suspended."),
            )
        } else {
            not_found(handle)
        });
    }
    answer_errors(resp.status, body.code, body.message.as_deref())?;
    body.user.ok_or_else(|| not_found(handle))
}

fn not_found(handle: &str) -> XError {
    XError::new(
        404,
        code::NOT_FOUND,
        format!("Account @{handle} was not found."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages() -> Vec<(String, ListPage<Value>)> {
        // Upstream pages of 4, 4, 0 and 2 items: "", "c1", "c2" (empty,
        // with a new cursor: read past) and "c3" (its bottom is itself:
        // the end).
        let mk = |from: u32, n: u32, bottom: &str| ListPage {
            items: (from..from + n)
                .map(|i| json!({"id": i.to_string()}))
                .collect(),
            bottom: Some(bottom.to_string()),
        };
        vec![
            (String::new(), mk(1, 4, "c1")),
            ("c1".into(), mk(5, 4, "c2")),
            ("c2".into(), mk(0, 0, "c3")),
            ("c3".into(), mk(9, 2, "c3")),
        ]
    }

    fn walk_all(limit: usize) -> (Vec<String>, usize) {
        let pages = pages();
        let mut calls = 0;
        let mut fetch = |c: &str| {
            calls += 1;
            Ok(pages.iter().find(|(k, _)| k == c).unwrap().1.clone())
        };
        let mut seen = Vec::new();
        let mut start = None;
        loop {
            let w = walk_list(&mut fetch, &|_| true, start.clone(), 1, limit).unwrap();
            seen.extend(
                w.items
                    .iter()
                    .map(|v| v["id"].as_str().unwrap().to_string()),
            );
            match w.next {
                Some(p) => start = Some(p),
                None => break,
            }
        }
        (seen, calls)
    }

    #[test]
    fn walks_every_item_once() {
        let want: Vec<String> = (1..=10).map(|i| i.to_string()).collect();
        for limit in 1..=11 {
            assert_eq!(walk_all(limit).0, want, "limit {limit}");
        }
    }

    #[test]
    fn page_mode_and_early_end() {
        let pages = pages();
        let mut fetch = |c: &str| Ok(pages.iter().find(|(k, _)| k == c).unwrap().1.clone());
        let w = walk_list(&mut fetch, &|_| true, None, 2, 3).unwrap();
        let ids: Vec<&str> = w.items.iter().map(|v| v["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["4", "5", "6"]);
        assert_eq!(
            w.next,
            Some(Position {
                upstream: "c1".into(),
                offset: 2,
                // Page 1's rows too: the agent was served them before.
                seen: ["1", "2", "3", "4", "5", "6"]
                    .map(cursor::row_mark)
                    .to_vec()
            })
        );
        let w = walk_list(&mut fetch, &|_| true, None, 4, 3).unwrap();
        let ids: Vec<&str> = w.items.iter().map(|v| v["id"].as_str().unwrap()).collect();
        assert_eq!((ids, w.next), (vec!["10"], None));
        let w = walk_list(&mut fetch, &|_| true, None, 5, 3).unwrap();
        assert!(w.items.is_empty() && w.next.is_none());
        let odd = |v: &Value| v["id"].as_str().unwrap().parse::<u32>().unwrap() % 2 == 1;
        let w = walk_list(&mut fetch, &odd, None, 1, 3).unwrap();
        let ids: Vec<&str> = w.items.iter().map(|v| v["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["1", "3", "5"]);
        assert_eq!(
            w.next,
            Some(Position {
                upstream: "c1".into(),
                offset: 1,
                seen: ["1", "3", "5"].map(cursor::row_mark).to_vec()
            })
        );
    }

    #[test]
    fn paths() {
        assert_eq!(
            page_path("/2/profile/a/followers", "", ""),
            "/2/profile/a/followers?count=20"
        );
        assert_eq!(
            page_path("/2/profile/a/followers", "1|2", ""),
            "/2/profile/a/followers?cursor=1%7C2&count=20"
        );
        assert_eq!(
            page_path("/2/search?q=a+b&feed=latest", "DAAD", ""),
            "/2/search?q=a+b&feed=latest&cursor=DAAD&count=20"
        );
    }
}
