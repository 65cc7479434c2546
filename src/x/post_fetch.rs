//! The upstream reads of `x_md_get_post`: the post itself (FxTwitter, or
//! the syndication fallback when FxTwitter is out), its thread with the
//! parent walk, and its direct replies. [`super::post`] assembles them.

use std::collections::HashSet;

use serde::de::DeserializeOwned;

use super::answer::check_post_answer;
use super::error::XError;
use super::model::status::{ConversationEnvelope, Status, StatusEnvelope, ThreadEnvelope};
use super::syndication;
use super::upstream::{Keep, Upstream};

/// Most direct replies appended. Default 10; further replies are not shown.
pub const MAX_REPLIES: usize = 10;

/// `what` answer at `path`, read into its typed envelope `T` and checked
/// ([`check_post_answer`]).
fn fetch<T: DeserializeOwned>(
    up: &dyn Upstream,
    path: &str,
    what: &str,
    code_of: impl FnOnce(&T) -> Answer<'_>,
) -> Result<T, XError> {
    let (answer, keep) = up.get_keep(path);
    let resp = answer.map_err(|e| XError::from_fetch(&e))?;
    check_post_answer(&resp, keep, what, code_of)
}

/// An answer's `code`, `message` and `status` tombstone, for
/// [`check_post_answer`].
type Answer<'a> = (
    Option<u64>,
    Option<&'a str>,
    Option<(Option<&'a str>, Option<&'a str>)>,
);

fn fetch_status(up: &dyn Upstream, id: &str, lang: &str) -> Result<Status, XError> {
    let path = format!("/2/status/{id}{lang}");
    let (answer, keep) = up.get_keep(&path);
    let resp = answer.map_err(|e| XError::from_fetch(&e))?;
    status_of(&resp, keep)
}

/// The status in a `/2/status` answer, or the matching error. The answer
/// is read once, through the typed model: a status of the wrong shape is
/// an `upstream_invalid_response` naming the field, and an id sent as a
/// JSON number is read exactly. `keep` is answered from the envelope
/// (see [`check_post_answer`]).
fn status_of(resp: &super::upstream::UpstreamResponse, keep: Keep) -> Result<Status, XError> {
    let env: StatusEnvelope =
        check_post_answer(resp, keep, "a status answer", |e: &StatusEnvelope| {
            (
                e.code,
                e.message.as_deref(),
                e.status.as_ref().and_then(Status::tombstone),
            )
        })?;
    match env.status.or(env.tweet) {
        Some(s) if s.is_status() => Ok(s),
        _ => Err(XError::new(
            404,
            super::error::code::NOT_FOUND,
            "Post not found.",
        )),
    }
}

/// A post, and the FxTwitter failure that sent the read to the
/// syndication fallback (`None` when FxTwitter served it).
pub(super) type Served = (Status, Option<XError>);

/// The requested post alone: FxTwitter's `/2/status`, or, when FxTwitter
/// is out ([`syndication::is_outage`]), X's syndication endpoint.
pub(super) fn fetch_focal(up: &dyn Upstream, id: &str, lang: &str) -> Result<Served, XError> {
    let path = format!("/2/status/{id}{lang}");
    let (answer, keep) = up.get_keep(&path);
    let fx = match &answer {
        Ok(r) => status_of(r, keep),
        Err(e) => {
            keep.answer(false);
            Err(XError::from_fetch(e))
        }
    };
    match fx {
        Ok(post) => Ok((post, None)),
        Err(e) if syndication::is_outage(&answer) => fall_back(up, id, e),
        Err(e) => Err(e),
    }
}

/// The requested post from the syndication fallback after FxTwitter
/// failed with `fx`.
pub(super) fn fall_back(up: &dyn Upstream, id: &str, fx: XError) -> Result<Served, XError> {
    let post = syndication::read(up, id, fx.clone())?;
    let post: Status = serde_json::from_value(post).map_err(|e| {
        XError::new(
            502,
            super::error::code::INVALID_RESPONSE,
            format!("The syndication answer could not be read: {e}."),
        )
    })?;
    Ok((post, Some(fx)))
}

pub(super) struct Assembly {
    pub(super) posts: Vec<(Status, &'static str)>,
    pub(super) warnings: Vec<String>,
    pub(super) complete: bool,
}

/// `/2/thread`, then (for a lone reply) the parent walk over `/2/status`.
pub(super) fn fetch_thread(
    up: &dyn Upstream,
    focal_id: &str,
    lang: &str,
    max_posts: usize,
    a: &mut Assembly,
) -> Result<Vec<Status>, XError> {
    let body: ThreadEnvelope = fetch(
        up,
        &format!("/2/thread/{focal_id}{lang}"),
        "a thread answer",
        |e: &ThreadEnvelope| {
            (
                e.code,
                e.message.as_deref(),
                e.status.as_ref().and_then(Status::tombstone),
            )
        },
    )?;
    let rows = body.thread;
    if rows.len() > 1 {
        return Ok(rows);
    }
    let single = match rows.into_iter().next().filter(Status::is_status) {
        Some(s) => s,
        None => match body.status.filter(Status::is_status) {
            Some(s) => s,
            None => fetch_status(up, focal_id, lang)?,
        },
    };
    let mut chain = vec![single];
    let mut seen: HashSet<String> = HashSet::from([focal_id.to_string()]);
    let mut next = chain[0].parent_id();
    while let Some(pid) = next {
        if seen.contains(&pid) {
            a.warnings.push(format!(
                "The reply chain loops back to post {pid}; stopped there."
            ));
            a.complete = false;
            break;
        }
        if chain.len() >= max_posts {
            a.warnings.push(format!(
                "Stopped walking up the reply chain at {max_posts} posts (max_posts)."
            ));
            a.complete = false;
            break;
        }
        match fetch_status(up, &pid, "") {
            Ok(p) => {
                seen.insert(pid);
                next = p.parent_id();
                chain.push(p);
            }
            Err(e) if e.code == super::error::code::DEADLINE => {
                a.warnings.push(format!(
                    "Stopped walking up the reply chain at the call deadline (--call-timeout); showing the {} posts loaded.",
                    chain.len()
                ));
                a.complete = false;
                break;
            }
            Err(e) => {
                a.warnings
                    .push(format!("Parent post {pid} could not be loaded: {e}"));
                a.complete = false;
                break;
            }
        }
    }
    chain.reverse();
    Ok(chain)
}

pub(super) fn fetch_replies(
    up: &dyn Upstream,
    focal_id: &str,
    recent: bool,
) -> Result<Vec<Status>, XError> {
    let mode = if recent { "recency" } else { "likes" };
    let body: ConversationEnvelope = fetch(
        up,
        &format!("/2/conversation/{focal_id}?ranking_mode={mode}"),
        "a conversation answer",
        |e: &ConversationEnvelope| {
            (
                e.code,
                e.message.as_deref(),
                e.status.as_ref().and_then(Status::tombstone),
            )
        },
    )?;
    let mut direct: Vec<Status> = body
        .into_replies()
        .into_iter()
        .filter(|r| r.is_status() && r.parent_id().as_deref() == Some(focal_id))
        .collect();
    let ts = |v: &Status| {
        v.created_timestamp
            .as_ref()
            .and_then(serde_json::Number::as_f64)
            .unwrap_or(0.0)
    };
    let likes = |v: &Status| v.likes.unwrap_or(0);
    direct.sort_by(|x, y| {
        let primary = if recent {
            ts(y).total_cmp(&ts(x))
        } else {
            likes(y).cmp(&likes(x))
        };
        primary
            .then(ts(y).total_cmp(&ts(x)))
            .then_with(|| x.id().cmp(&y.id()))
    });
    direct.truncate(MAX_REPLIES);
    Ok(direct)
}
