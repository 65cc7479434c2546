//! An upstream answer read once, by the typed parse its caller needs
//! anyway, which also decides whether the cache may store it
//! ([`crate::x::upstream::Upstream::get_keep`]): the cache scans no body
//! of its own for these callers.
//!
//! The rule is [`crate::x::cacheable`]'s, read off the typed envelope: a
//! `200` whose body the typed parse accepted (one JSON object of the
//! expected shape) and whose `code` is absent or below 500. An outage
//! answer (HTML with `200`, `{"code":500}` with `200`, a cut body, a 5xx)
//! is never stored; a `404` answer is never stored, a `200` with
//! `"code": 404` is (the truth about the resource), as before.
//!
//! Where it differs from [`crate::x::cacheable::cacheable`] on the same
//! body (proven for generated bodies in `tests/x_cache_typed.rs`,
//! `stored_exactly_when_the_old_rule_and_the_typed_parse_agree`):
//! - a body the typed parse refuses (wrong shape, invalid UTF-8 anywhere,
//!   nesting past serde's limit inside a read field) is an error answer
//!   and is not stored, though the old scan would have stored it;
//! - a `code` sent as a number that is not an integer (`5e2`, `500.0`) is
//!   read as the typed model reads every count (rounded): `500` is an
//!   error answer for the caller, so it is not stored (the old scan read
//!   it as no `code` and stored it);
//! - a lone surrogate escape (`"\ud800"`), which the parse reads as U+FFFD
//!   ([`crate::x::model::parse::repair_surrogates`]), in a top-level key or
//!   in `code`: the answer the caller serves is the repaired one, the same
//!   on every read, so it is stored (the old scan refused it).

use serde::de::DeserializeOwned;

use super::answer::{check_transport, storable};
use super::error::XError;
use super::model::parse::{parse_with, Authors};
use super::model::scalar::Count;
use super::upstream::{Upstream, UpstreamResponse};

/// `GET path` through `up`, read once: the answer, and its body parsed into
/// the envelope `T` (`what` names it in a shape error) after the transport
/// checks ([`check_transport`]: 429, 5xx). The cache stores the answer when
/// [`storable`] says so from the envelope's `code` (`code_of`).
pub fn fetch_typed<T: DeserializeOwned>(
    up: &dyn Upstream,
    path: &str,
    what: &str,
    code_of: fn(&T) -> Count,
    authors: Authors,
) -> Result<(UpstreamResponse, Result<T, XError>), XError> {
    let (answer, keep) = up.get_keep(path);
    let resp = answer.map_err(|e| XError::from_fetch(&e))?;
    let parsed = check_transport(&resp).and_then(|()| parse_with::<T>(&resp.body, what, authors));
    keep.answer(storable(resp.status, parsed.as_ref().ok().map(code_of)));
    Ok((resp, parsed))
}
