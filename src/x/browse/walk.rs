//! The "collect list" walk over upstream pages: rows already served,
//! blocks of pages, page mode, and the upstream page paths.

use std::fmt::Write as _;

use super::{
    long_page_note, nothing_new_note, ListPage, Row, Walk, LIST_PAGE_BUDGET,
    MAX_PAGES_WITHOUT_NEW_ROWS, PAGE_BUDGET_PER_BLOCK, UNCARRIABLE_NOTE, UPSTREAM_PAGE_COUNT,
};
use crate::x::cursor::{self, Position, MAX_CURSOR_OFFSET};
use crate::x::error::XError;

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

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
