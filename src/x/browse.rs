//! The list tools' shared machinery (upstream.md §2.4): browse arguments,
//! the "collect list" walk over upstream pages with `<cursor>@<offset>`
//! positions, page mode, the list error mapping, and
//! `x_md_get_followers` / `x_md_get_following`.

use serde_json::Value;

use super::cursor::{self, Position, MAX_CURSOR_OFFSET};
use super::error::{code, XError};
use super::model::parse::shape_error;
use super::model::scalar::Id;
use super::model::status::{Page, Status};
use super::model::user::User;

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

mod errors;
mod follow;
mod walk;

pub use errors::{answer_errors, check_account_list, other_errors, protected_error};
pub use follow::{base_structured, connections, continuation, fetch_profile, BrowseResult};
pub use walk::{page_path, walk_list, walk_pages};
