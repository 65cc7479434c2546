//! The list error mapping: upstream answers of the account lists
//! (followers, following, statuses) to the errors an agent sees.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{ListPage, Row};
use crate::x::error::{clip_message, code, XError};
use crate::x::model::parse::Authors;
use crate::x::model::status::Page;
use crate::x::typed_read::fetch_typed;
use crate::x::upstream::Upstream;

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
