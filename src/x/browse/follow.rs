//! Requests of the followers and following lists and of the account
//! they belong to: `x_md_get_followers` / `x_md_get_following`, with their
//! continuation and structured output.

use serde_json::json;

use super::{answer_errors, check_account_list, cursor_error, page_path, walk_list, BrowseArgs};
use crate::x::args::{MAX_LIMIT, MAX_PAGE};
use crate::x::budget::fit_rows;
use crate::x::budget::Run;
use crate::x::cursor::{self, CursorKind};
use crate::x::error::{code, XError};
use crate::x::fetcher::Fetcher;
use crate::x::model::parse::Authors;
use crate::x::model::status::ProfileEnvelope;
use crate::x::model::user::User;
use crate::x::render::browse::{connections_markdown, Continuation};
use crate::x::structured::Structured;
use crate::x::typed_read::fetch_typed;
use crate::x::upstream::Upstream;

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
