//! The bodies of the answers the server gives on its own
//! ([`Fallback`]): the server picks the status and `Retry-After`, this
//! module the body. A refused connection gets this server's JSON error
//! object; work that panicked or found no worker gets a JSON-RPC error
//! without an id (the request is not read back at that point).

use crate::http::{Body, Response};
use crate::mcp;
use crate::server::conn::Fallback;

/// `fallback`'s answer, with its body.
pub(super) fn answer(fallback: Fallback) -> Response {
    let body = match fallback {
        Fallback::Overloaded => {
            Body::Static(br#"{"error":{"status":503,"message":"too many open connections"}}"#)
        }
        Fallback::TooManyFromAddress => Body::Static(
            br#"{"error":{"status":429,"message":"too many open connections from this address"}}"#,
        ),
        Fallback::Panicked => Body::Owned(mcp::error_without_id(
            mcp::error::INTERNAL_ERROR,
            "Internal error",
        )),
        Fallback::Busy => Body::Owned(mcp::error_without_id(
            mcp::error::INTERNAL_ERROR,
            mcp::BUSY_MESSAGE,
        )),
    };
    fallback.answer("application/json", body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fallback_has_its_exact_body() {
        let cases: [(Fallback, u16, Option<&str>, &str); 4] = [
            (
                Fallback::Overloaded,
                503,
                Some("1"),
                r#"{"error":{"status":503,"message":"too many open connections"}}"#,
            ),
            (
                Fallback::TooManyFromAddress,
                429,
                Some("1"),
                r#"{"error":{"status":429,"message":"too many open connections from this address"}}"#,
            ),
            (
                Fallback::Panicked,
                500,
                None,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#,
            ),
            (
                Fallback::Busy,
                503,
                Some("1"),
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Server busy: worker queue full, retry shortly"}}"#,
            ),
        ];
        for (fallback, status, retry_after, expected) in cases {
            let r = answer(fallback);
            assert_eq!(r.status, status, "{fallback:?}");
            assert_eq!(r.header_value("Retry-After"), retry_after, "{fallback:?}");
            assert_eq!(r.header_value("Content-Type"), Some("application/json"));
            assert_eq!(String::from_utf8(r.body.to_vec()).unwrap(), expected);
        }
    }
}
