//! `x_md_get_profile` (upstream.md §2.2, §2.4, §2.5): the profile and one
//! page of the account's latest original posts, fetched concurrently so the
//! first page costs one upstream round trip.

use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::browse::{
    answer_errors, base_structured, check_account_list, continuation, cursor_error, page_path,
    protected_error, BrowseArgs, BrowseResult, ListPage, PAGE_BUDGET_PER_BLOCK,
};
use super::budget::{fit_rows, Run};
use super::cache::Fetcher;
use super::cursor::{self, CursorKind};
use super::error::{code, XError};
use super::model::parse::Authors;
use super::model::status::{ProfileEnvelope, Status};
use super::model::user::User;
use super::render::browse::profile_markdown;
use super::structured::Structured;
use super::typed_read::fetch_typed;
use super::upstream::Upstream;

/// Upstream timeline pages one profile block may read. Default 8; when
/// reached the result holds the posts collected so far, a note says so,
/// and `next_cursor` continues from there.
pub const PROFILE_PAGE_BUDGET: usize = 8;

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

/// True for a timeline row shown on a profile: the account's own original
/// post (no repost, no reply).
pub fn is_original_of(row: &Status, handle: &str) -> bool {
    let mine = |u: Option<&User>| {
        u.and_then(|a| a.screen_name.as_deref())
            .is_some_and(|h| h.eq_ignore_ascii_case(handle))
    };
    let own = mine(row.author.as_deref()) || mine(row.reposted_by.as_deref());
    let reposted = row
        .reposted_by
        .as_ref()
        .is_some_and(|u| u.screen_name.is_some() || u.id.is_some() || u.name.is_some());
    own && row.is_status() && !reposted && !row.is_reply()
}

struct Block {
    posts: Vec<Status>,
    next: Option<String>,
    budget_hit: bool,
    /// The upstream repeated a post already served (or a cursor that
    /// does not advance): the walk ended there.
    repeated: bool,
    /// The upstream's `cursor.bottom` is not one an xmd cursor can carry
    /// (`cursor::can_carry`): the walk ended there.
    uncarriable: bool,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Collects `limit` original posts from `start` (an upstream cursor, empty
/// for the newest page); cuts an overflowing page at `limit` with a forged
/// cursor just below the last kept post.
fn collect(
    fetch: &mut dyn FnMut(&str) -> Result<ListPage<Status>, XError>,
    handle: &str,
    start: String,
    limit: usize,
    budget: &mut usize,
    seen: &mut Served,
) -> Result<Block, XError> {
    let mut posts = Vec::new();
    let mut cur = start;
    loop {
        if *budget == 0 {
            let next = (!cur.is_empty()).then_some(cur);
            return Ok(Block {
                posts,
                next,
                budget_hit: true,
                repeated: false,
                uncarriable: false,
            });
        }
        *budget -= 1;
        let page = fetch(&cur)?;
        let page_empty = page.items.is_empty();
        let mut repeated = false;
        for row in page.items {
            if is_original_of(&row, handle) {
                if seen.insert(row.id().unwrap_or("")) {
                    posts.push(row);
                } else {
                    repeated = true;
                }
            }
        }
        if posts.len() > limit {
            // The posts past the limit were not served: the next block
            // starts with them.
            for p in posts.drain(limit..) {
                seen.ids.remove(p.id().unwrap_or(""));
            }
            let last = posts
                .last()
                .expect("limit >= 1")
                .id()
                .unwrap_or("")
                .to_string();
            let forged = cursor::forge_profile_cursor(page.bottom.as_deref(), &last, now_ms());
            return Ok(Block {
                posts,
                next: Some(forged),
                budget_hit: false,
                repeated: false,
                uncarriable: false,
            });
        }
        let next = match page.bottom {
            Some(b) if !page_empty && b != cur && !repeated && cursor::can_carry(&b) => b,
            b => {
                let repeated = repeated || (!page_empty && b.as_deref() == Some(cur.as_str()));
                return Ok(Block {
                    posts,
                    next: None,
                    budget_hit: false,
                    uncarriable: !page_empty && !repeated && b.is_some(),
                    repeated,
                });
            }
        };
        if posts.len() == limit {
            return Ok(Block {
                posts,
                next: Some(next),
                budget_hit: false,
                repeated: false,
                uncarriable: false,
            });
        }
        cur = next;
    }
}

/// Posts already served: in this walk (by id), and before it (by the
/// marks the cursor carries).
struct Served {
    ids: HashSet<String>,
    marks: HashSet<u32>,
}

impl Served {
    /// Records `id` as served; false when it was served before.
    fn insert(&mut self, id: &str) -> bool {
        !self.marks.contains(&cursor::row_mark(id)) && self.ids.insert(id.to_string())
    }
}

/// Runs `x_md_get_profile`.
pub fn profile(f: &Fetcher, args: &BrowseArgs, run: &Run) -> Result<BrowseResult, XError> {
    let handle = args.handle.as_str();
    let scope = cursor::handle_scope(handle);
    let (start, marks) = match &args.cursor {
        Some(c) => {
            let pos = cursor::decode(&run.settings.cursor_key, c, CursorKind::Profile, &scope)
                .map_err(cursor_error)?;
            (Some(pos.upstream), pos.seen)
        }
        None => (None, Vec::new()),
    };
    let mut served = Served {
        ids: HashSet::new(),
        marks: marks.iter().copied().collect(),
    };
    let base = format!("/2/profile/{handle}/statuses");
    let extra = "&with_replies=false";
    let first_cursor = start.clone().unwrap_or_default();
    let first_path = page_path(&base, &first_cursor, extra);
    // The profile and the first timeline page, concurrently: the profile
    // on a side thread, the page here.
    let owned = handle.to_string();
    let side = f.beside(move |up: &dyn Upstream| fetch_profile(up, &owned));
    let authors = Authors::for_rows(args.full);
    let first_page = check_account_list(f, &first_path, handle, authors);
    let user = side.join().unwrap_or_else(|| {
        Err(XError::new(
            500,
            code::UPSTREAM_ERROR,
            "The profile request failed.",
        ))
    });
    // Both fetches failed: when the profile was refused by the cool-down
    // that the page's own 429 started, the page's error names the cause.
    let mut user = match (user, &first_page) {
        (Err(u), Err(p)) if u.is_cooling_down() && !p.is_cooling_down() => Err(p.clone()),
        (user, _) => user,
    }?;
    if user.protected == Some(true) {
        return Err(protected_error(handle));
    }
    let mut primed = Some(first_page);
    let mut fetch = |c: &str| -> Result<ListPage<Status>, XError> {
        if c == first_cursor {
            if let Some(p) = primed.take() {
                return p;
            }
        }
        check_account_list(f, &page_path(&base, c, extra), handle, authors)
    };
    let blocks = if start.is_some() { 1 } else { args.page };
    let total_budget = PROFILE_PAGE_BUDGET + PAGE_BUDGET_PER_BLOCK * (blocks - 1);
    let mut budget = total_budget;
    let mut cur = first_cursor.clone();
    let mut notes = Vec::new();
    let mut block = Block {
        posts: vec![],
        next: None,
        budget_hit: false,
        repeated: false,
        uncarriable: false,
    };
    for b in 1..=blocks {
        block = collect(
            &mut fetch,
            handle,
            cur.clone(),
            args.limit,
            &mut budget,
            &mut served,
        )?;
        if block.uncarriable {
            notes.push(super::browse::UNCARRIABLE_NOTE.to_string());
        }
        if block.repeated {
            notes.push(super::browse::REPEAT_NOTE.to_string());
            if b < blocks {
                // The list ended before the page asked for.
                block.posts.clear();
            }
            break;
        }
        if block.budget_hit {
            notes.push(format!(
                "Stopped after reading {total_budget} upstream timeline pages; pass next_cursor to continue."
            ));
            break;
        }
        if b == blocks {
            break;
        }
        match block.next.take() {
            Some(n) => cur = n,
            None => {
                block = Block {
                    posts: vec![],
                    next: None,
                    budget_hit: false,
                    repeated: false,
                    uncarriable: false,
                };
                break;
            }
        }
    }
    let posts: Vec<Status> = block
        .posts
        .into_iter()
        .map(|mut p| {
            p.normalize(0);
            p.fill_url(None);
            super::post::lean_status_row(&mut p, args.full);
            p
        })
        .collect();
    // A cursor carries the marks of the posts served up to it (the newest
    // [`cursor::MAX_ROW_MARKS`]), so a repeating upstream is caught.
    let marks_through = |k: usize| {
        let mut m = marks.clone();
        m.extend(
            posts[..k]
                .iter()
                .map(|p| cursor::row_mark(p.id().unwrap_or(""))),
        );
        m.drain(..m.len().saturating_sub(cursor::MAX_ROW_MARKS));
        m
    };
    let encode = |upstream: String, k: usize| {
        cursor::encode(
            &run.settings.cursor_key,
            CursorKind::Profile,
            &scope,
            &cursor::Position {
                upstream,
                offset: 0,
                seen: marks_through(k),
            },
        )
    };
    let next_cursor = block.next.map(|n| encode(n, posts.len()));
    // A bio longer than a quarter of the budget is cut in the text (the
    // posts and the continuation still fit); `structuredContent` keeps it.
    // Written once, lean; each build below copies the bytes. The Markdown
    // still links the bio with what lean leaves out.
    let full_only = user.take_full_only(args.full);
    let profile_json = Structured::written(&user);
    user.put_back(full_only);
    // Copied only then: the usual bio is shown as it is.
    let bio_cap = run.max_chars() / 4;
    let cut_user;
    let shown_user = match user.description.as_deref() {
        Some(d) if !super::budget::within_budget(d, bio_cap) => {
            let whole = d.chars().count();
            let keep = super::budget::prefix_within(d, bio_cap);
            let mut u = user.clone();
            u.description = Some(format!(
                "{} … (bio cut: {keep} of its {whole} characters are shown; it alone exceeds the result budget)",
                super::budget::cut_text(d, keep)
            ));
            cut_user = u;
            &cut_user
        }
        _ => &user,
    };
    // A result cut before post k continues just below post k - 1.
    let cursor_at = |k: usize| {
        let last = k
            .checked_sub(1)
            .and_then(|i| posts.get(i))
            .and_then(Status::id)
            .unwrap_or("");
        encode(cursor::forge_profile_cursor(None, last, now_ms()), k)
    };
    let path = format!("/{handle}");
    let (text, structured) = fit_rows(
        run,
        posts.len(),
        &notes,
        next_cursor,
        &cursor_at,
        &mut |k, next, notes| {
            let cont = continuation(
                run.settings.link(&path),
                args,
                vec![],
                next,
                k < posts.len(),
            );
            let markdown =
                profile_markdown(shown_user, &posts[..k], args.full, notes, cont.as_ref());
            let mut m = base_structured("profile", args);
            m.insert("handle", json!(handle));
            m.insert_bytes("profile", profile_json.clone());
            m.insert_written("posts", &posts[..k]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn originals_only() {
        let a = |extra: Value| {
            let mut v = json!({"type":"status","id":"1","author":{"screen_name":"Demo"}});
            for (k, x) in extra.as_object().unwrap() {
                v[k] = x.clone();
            }
            serde_json::from_str::<Status>(&v.to_string()).unwrap()
        };
        assert!(is_original_of(&a(json!({})), "demo"));
        assert!(is_original_of(
            &a(json!({"replying_to": null, "reposted_by": null})),
            "demo"
        ));
        assert!(!is_original_of(
            &a(json!({"replying_to": {"status":"2"}})),
            "demo"
        ));
        assert!(!is_original_of(
            &a(json!({"replying_to_status": ["2"]})),
            "demo"
        ));
        assert!(!is_original_of(
            &a(json!({"reposted_by": {"screen_name":"demo"}})),
            "demo"
        ));
        assert!(!is_original_of(&a(json!({})), "other"));
        assert!(!is_original_of(
            &serde_json::from_str::<Status>(
                r#"{"type":"tombstone","author":{"screen_name":"demo"}}"#
            )
            .unwrap(),
            "demo"
        ));
    }
}
