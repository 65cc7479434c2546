//! Redirects the client follows itself (`ureq`'s own are off): `307` and
//! `308` only, which keep the method and the body (RFC 9110 §15.4.8,
//! §15.4.9), within one origin (scheme, host and port, RFC 6454), at most
//! [`MAX_REDIRECTS`] hops. `301`/`302`/`303` are not followed: user agents
//! turn a POST into a GET on them, which is no MCP request.

use ureq::http::Uri;

/// Most redirects followed for one request: 5. The sixth `307`/`308` in a
/// row ends the call with an HTTP status error ("more than 5 redirects").
pub const MAX_REDIRECTS: u32 = 5;

/// The origin of an absolute `http(s)` URL: lower-cased scheme and host,
/// and the port (the scheme's default when absent).
fn origin(url: &str) -> Option<(String, String, u16)> {
    let uri: Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let host = uri.host()?.to_ascii_lowercase();
    Some((scheme, host, uri.port_u16().unwrap_or(default)))
}

/// True when both are absolute `http(s)` URLs of the same origin.
pub(crate) fn same_origin(a: &str, b: &str) -> bool {
    matches!((origin(a), origin(b)), (Some(x), Some(y)) if x == y)
}

/// True for a URI reference that starts with a scheme (RFC 3986 §3.1).
fn has_scheme(r: &str) -> bool {
    let Some((scheme, _)) = r.split_once(':') else {
        return false;
    };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
}

/// RFC 3986 §5.2.4: removes `.` and `..` segments from a path.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len() - 1;
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." | ".." => {
                if *seg == ".." && out.len() > 1 {
                    out.pop();
                }
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if path.starts_with('/') && !joined.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// `location` resolved against the absolute URL `base` (RFC 3986 §5.2;
/// the fragment dropped). `None` when `base` is not absolute.
pub(crate) fn resolve(base: &str, location: &str) -> Option<String> {
    let location = location.split('#').next().unwrap_or("");
    if has_scheme(location) {
        return Some(location.to_string());
    }
    let (scheme, rest) = base.split_once("://")?;
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(auth_end);
    let tail = tail.split('#').next().unwrap_or("");
    let (base_path, _query) = tail.split_once('?').unwrap_or((tail, ""));
    if let Some(net) = location.strip_prefix("//") {
        return Some(format!("{scheme}://{net}"));
    }
    let (ref_path, ref_query) = match location.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (location, None),
    };
    let path = if ref_path.is_empty() {
        if ref_query.is_none() {
            return Some(format!("{scheme}://{authority}{tail}"));
        }
        base_path.to_string()
    } else if ref_path.starts_with('/') {
        remove_dot_segments(ref_path)
    } else {
        let dir = match base_path.rfind('/') {
            Some(i) => &base_path[..=i],
            None => "/",
        };
        remove_dot_segments(&format!("{dir}{ref_path}"))
    };
    let query = ref_query.map(|q| format!("?{q}")).unwrap_or_default();
    Some(format!("{scheme}://{authority}{path}{query}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3986 §5.4.1 normal examples (those without a fragment to keep),
    /// base `http://a/b/c/d;p?q`.
    #[test]
    fn rfc3986_reference_resolution() {
        let base = "http://a/b/c/d;p?q";
        for (r, want) in [
            ("g:h", "g:h"),
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q"),
            (";x", "http://a/b/c/;x"),
            ("g;x", "http://a/b/c/g;x"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            ("g..", "http://a/b/c/g.."),
            ("./../g", "http://a/b/g"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
        ] {
            assert_eq!(resolve(base, r).as_deref(), Some(want), "{r:?}");
        }
        assert_eq!(
            resolve("http://127.0.0.1:8080/mcp", "/mcp/").as_deref(),
            Some("http://127.0.0.1:8080/mcp/")
        );
    }

    #[test]
    fn origins() {
        assert!(same_origin("http://h/mcp", "HTTP://H:80/x"));
        assert!(same_origin("https://h/mcp", "https://h:443/"));
        assert!(same_origin("http://[::1]:9/a", "http://[::1]:9/b"));
        assert!(!same_origin("http://h/mcp", "https://h/mcp"));
        assert!(!same_origin("http://h/mcp", "http://h:81/mcp"));
        assert!(!same_origin("http://h/mcp", "http://g/mcp"));
        assert!(!same_origin("http://127.0.0.1:1/", "http://127.0.0.2:1/"));
        assert!(!same_origin("http://h/mcp", "ftp://h/mcp"));
        assert!(!same_origin("http://h/mcp", "g:h"));
    }
}
