//! The start-up check of the upstream hosts: the host name of each
//! `--upstream` base and of the `--syndication-url` is resolved once, on a
//! thread of its own, after the server is already listening; a name that does not resolve (or takes longer than
//! [`RESOLVE_WARN_AFTER`]) is reported on stderr, so an operator sees a
//! misspelled or unreachable upstream before the first tool call fails.
//! Nothing waits for it: start-up is never delayed.

use std::net::ToSocketAddrs;
use std::sync::mpsc;
use std::time::Duration;

/// How long the start-up check waits for a host name to resolve before it
/// warns that it has not (the lookup itself goes on in the background).
///
/// Default 5 s.
pub const RESOLVE_WARN_AFTER: Duration = Duration::from_secs(5);

/// `(host, port)` of an `http://` or `https://` base URL.
pub fn host_port(base: &str) -> Option<(String, u16)> {
    let (rest, default_port) = if let Some(r) = base.strip_prefix("https://") {
        (r, 443)
    } else if let Some(r) = base.strip_prefix("http://") {
        (r, 80)
    } else {
        return None;
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default_port,
        };
        return Some((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => Some((h.to_string(), p.parse().ok()?)),
        None => Some((authority.to_string(), default_port)),
    }
}

/// Which upstream a base URL belongs to, for the warning's wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// An `--upstream` base (FxTwitter): every tool call needs it.
    FxTwitter,
    /// The `--syndication-url` base: the post fallback needs it.
    Syndication,
}

impl Role {
    fn host_word(self) -> &'static str {
        match self {
            Role::FxTwitter => "upstream host",
            Role::Syndication => "syndication host",
        }
    }

    fn consequence(self) -> &'static str {
        match self {
            Role::FxTwitter => {
                "tool calls will fail with fxtwitter_network (cause=dns) until it does"
            }
            Role::Syndication => "the post fallback (--syndication-url) will fail until it does",
        }
    }

    fn slow(self) -> &'static str {
        match self {
            Role::FxTwitter => "tool calls may time out",
            Role::Syndication => "the post fallback may time out",
        }
    }
}

/// Why `base`'s host does not resolve, waiting at most `wait`; `None` when
/// it resolves (an IP literal always does, without any lookup).
pub fn unresolvable(base: &str, wait: Duration) -> Option<String> {
    unresolvable_as(Role::FxTwitter, base, wait)
}

/// [`unresolvable`] for a base of `role`.
pub fn unresolvable_as(role: Role, base: &str, wait: Duration) -> Option<String> {
    let what = role.host_word();
    let (host, port) = host_port(base)?;
    let (tx, rx) = mpsc::channel();
    let name = host.clone();
    let spawned = std::thread::Builder::new()
        .name("xmd-resolve".into())
        .spawn(move || {
            let r = (name.as_str(), port)
                .to_socket_addrs()
                .map(|mut a| a.next());
            let _ = tx.send(r);
        });
    if spawned.is_err() {
        return None;
    }
    match rx.recv_timeout(wait) {
        Ok(Ok(Some(_))) => None,
        Ok(Ok(None)) => Some(format!(
            "{what} '{host}' ({base}) resolves to no address; {}",
            role.consequence()
        )),
        Ok(Err(e)) => Some(format!(
            "{what} '{host}' ({base}) does not resolve ({e}); {}",
            role.consequence()
        )),
        Err(_) => Some(format!(
            "{what} '{host}' ({base}) did not resolve within {} s; {}",
            wait.as_secs(),
            role.slow()
        )),
    }
}

/// Checks every base (comma-separated, as `--upstream`) and the
/// syndication base (empty: the fallback is off, nothing to check) on a
/// background thread and hands each warning to `emit`.
pub fn spawn(bases: &str, syndication: &str, emit: impl Fn(String) + Send + 'static) {
    let mut checks: Vec<(Role, String)> = bases
        .split(',')
        .map(|b| (Role::FxTwitter, b.trim().to_string()))
        .filter(|(_, b)| !b.is_empty())
        .collect();
    if !syndication.trim().is_empty() {
        checks.push((Role::Syndication, syndication.trim().to_string()));
    }
    let _ = std::thread::Builder::new()
        .name("xmd-upstream-check".into())
        .spawn(move || {
            for (role, base) in checks {
                if let Some(warning) = unresolvable_as(role, &base, RESOLVE_WARN_AFTER) {
                    emit(warning);
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports() {
        let hp = |b: &str| host_port(b);
        assert_eq!(
            hp("https://api.fxtwitter.com"),
            Some(("api.fxtwitter.com".into(), 443))
        );
        assert_eq!(hp("http://127.0.0.1:9/x"), Some(("127.0.0.1".into(), 9)));
        assert_eq!(hp("http://[::1]:8080/"), Some(("::1".into(), 8080)));
        assert_eq!(hp("http://[::1]"), Some(("::1".into(), 80)));
        assert_eq!(hp("ftp://h"), None);
    }

    #[test]
    fn ip_literals_resolve_without_a_lookup_and_invalid_names_do_not() {
        assert_eq!(
            unresolvable("http://127.0.0.1:9", Duration::from_secs(5)),
            None
        );
        // RFC 6761: .invalid never resolves (answered locally by any
        // conforming resolver).
        let w = unresolvable("http://upstream.invalid", Duration::from_secs(5)).unwrap();
        assert!(
            w.starts_with("upstream host 'upstream.invalid' (http://upstream.invalid) "),
            "{w}"
        );
        let w = unresolvable_as(
            Role::Syndication,
            "https://syndication.invalid",
            Duration::from_secs(5),
        )
        .unwrap();
        assert!(
            w.starts_with("syndication host 'syndication.invalid' (https://syndication.invalid) does not resolve (")
                && w.ends_with("); the post fallback (--syndication-url) will fail until it does"),
            "{w}"
        );
    }
}
