//! `x_md_get_trends`: X's trending topics (FxTwitter `GET /2/trends`,
//! `packages/atmosphere/src/providers/twitter/trends.ts`: X's Explore page,
//! its `trending` timeline; only that kind exists).
//!
//! The upstream answer is one list of at most 50 trends
//! (`APITrendsResponse`: `code`, `timeline_type`, `trends` of `APITrend`
//! `{name, rank, context, grouped_topics?}`, `cursor`). xmd asks for all
//! [`UPSTREAM_TRENDS`] and pages them with the list tools' contract
//! (`limit`, `page`, `cursor`, `full`), each trend with X's search link;
//! its name is the `q` of `x_md_search_posts` that finds its posts (not
//! written twice: `structuredContent` holds data, not copies). An
//! empty list is a result ("no trends"), not an error. FxTwitter gives no
//! post count for a trend (X's `meta_description` is not passed on).

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::browse::{
    answer_errors, base_structured, continuation, cursor_error, walk_list, BrowseArgs,
    BrowseResult, ListPage, Row,
};
use super::budget::{fit_rows, Run};
use super::cursor::{self, CursorKind};
use super::error::{code, XError};
use super::escape::push_link;
use super::fetcher::Fetcher;
use super::model::parse::Authors;
use super::model::scalar::{count, opt_text, text, Count};
use super::registry::Tool;
use super::render::browse::{finish, inline_text, push_tail};
use super::typed_read::fetch_typed;

/// Trends asked of the upstream on every call: 50, FxTwitter's largest
/// `count` (a larger one is its 400). Always the same, so the cursors'
/// offsets stay valid when `limit` changes and one cached answer serves
/// every page.
pub const UPSTREAM_TRENDS: usize = 50;

/// The upstream path of the trends.
pub fn trends_path() -> String {
    format!("/2/trends?type=trending&count={UPSTREAM_TRENDS}")
}

/// One trend: FxTwitter's `APITrend`, and xmd's `url`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a trend object")]
pub struct Trend {
    /// The trend (a phrase or a hashtag).
    #[serde(deserialize_with = "text")]
    pub name: String,
    /// X's rank, as sent (a string).
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub rank: Option<String>,
    /// X's context (`Sports · Trending`), when sent.
    #[serde(deserialize_with = "opt_text", skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Related topics X groups under it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub grouped_topics: Vec<GroupedTopic>,
    /// X's search for it.
    #[serde(skip_deserializing)]
    pub url: String,
}

/// A grouped topic of a trend.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, expecting = "a grouped topic object")]
pub struct GroupedTopic {
    /// Its name.
    #[serde(deserialize_with = "text")]
    pub name: String,
}

impl Row for Trend {
    fn row_id(&self) -> Option<&str> {
        Some(self.name.as_str()).filter(|n| !n.is_empty())
    }
}

/// The `/2/trends` answer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, expecting = "a trends answer object")]
struct TrendsEnvelope {
    #[serde(deserialize_with = "count")]
    code: Count,
    #[serde(deserialize_with = "opt_text")]
    message: Option<String>,
    trends: Option<Vec<Trend>>,
}

/// X's search link for `q`.
pub fn search_url(q: &str) -> String {
    format!("https://x.com/search?q={}", cursor::form_encode(q))
}

/// Reads the trends: the list, or the error (`404`: X's Explore page gave
/// no timeline, a temporary outage).
fn fetch(f: &Fetcher) -> Result<ListPage<Trend>, XError> {
    let (resp, body) = fetch_typed(
        f,
        &trends_path(),
        "a trends answer",
        |b: &TrendsEnvelope| b.code,
        Authors::Whole,
    )?;
    let body = body?;
    if resp.status == 404 || body.code == Some(404) {
        return Err(XError::new(
            503,
            code::SEARCH_UNAVAILABLE,
            "X's trends are temporarily unavailable upstream. Retry shortly.",
        ));
    }
    answer_errors(resp.status, body.code, body.message.as_deref())?;
    let items = body.trends.ok_or_else(|| {
        super::model::parse::shape_error("a trends answer", &"`trends` is missing")
    })?;
    Ok(ListPage {
        items,
        bottom: None,
    })
}

/// One Markdown line: the name, its context, X's search link; with
/// `full` its rank and grouped topics.
fn trend_line(t: &Trend, full: bool) -> String {
    let mut line = String::from("- ");
    line.push_str(&inline_text(&t.name));
    if let Some(c) = t.context.as_deref().filter(|c| !c.trim().is_empty()) {
        line.push_str(" — ");
        line.push_str(&inline_text(c));
    }
    if full {
        if let Some(r) = t.rank.as_deref().filter(|r| !r.trim().is_empty()) {
            line.push_str(" · rank ");
            line.push_str(&inline_text(r));
        }
        let topics: Vec<String> = t
            .grouped_topics
            .iter()
            .filter(|g| !g.name.trim().is_empty())
            .map(|g| inline_text(&g.name))
            .collect();
        if !topics.is_empty() {
            line.push_str(" · related: ");
            line.push_str(&topics.join(", "));
        }
    }
    line.push(' ');
    push_link(&mut line, "Search", &t.url);
    line
}

/// Runs `x_md_get_trends`.
pub fn trends(f: &Fetcher, args: &BrowseArgs, run: &Run) -> Result<BrowseResult, XError> {
    let kind = CursorKind(Tool::GetTrends);
    let (key, scope) = (&run.settings.cursor_key, cursor::Bound::scope("trending"));
    let start = match &args.cursor {
        Some(c) => Some(cursor::decode(key, c, kind, &scope).map_err(cursor_error)?),
        None => None,
    };
    let mut read = |_: &str| fetch(f);
    let keep = |t: &Trend| !t.name.trim().is_empty();
    let mut walk = walk_list(&mut read, &keep, start, args.page, args.limit)?;
    for t in &mut walk.items {
        t.url = search_url(&t.name);
    }
    let next_cursor = walk
        .next
        .as_ref()
        .map(|p| cursor::encode(key, kind, &scope, p));
    let cursor_at = |k: usize| cursor::encode(key, kind, &scope, &walk.cut_at(k));
    let path = "/explore/tabs/trending";
    let (text, structured) = fit_rows(
        run,
        walk.items.len(),
        &walk.notes,
        next_cursor,
        &cursor_at,
        &mut |k, next, notes| {
            let cut = k < walk.items.len();
            let cont = continuation(run.settings.link(path), args, vec![], next, cut);
            let rows = &walk.items[..k];
            let mut md = vec!["# Trending on X".to_string(), String::new()];
            if rows.is_empty() {
                md.push(if args.cursor.is_none() && args.page == 1 {
                    "No trends right now: X lists none.".into()
                } else {
                    "No trends on this page.".into()
                });
            } else {
                md.push(
                    "Pass a trend's name as `q` of x_md_search_posts to read its posts.".into(),
                );
                md.push(String::new());
            }
            md.extend(rows.iter().map(|t| trend_line(t, args.full)));
            push_tail(&mut md, notes, cont.as_ref());
            let mut m = base_structured("trends", args);
            m.insert_written("trends", rows);
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
