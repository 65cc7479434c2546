//! Name resolution for the upstream client: each `host:port` is looked up
//! once and remembered for [`RESOLVE_TTL`].
//!
//! `ureq`'s default resolver runs `getaddrinfo` on every request, even on a
//! pooled connection, and with a timeout configured it does so on a freshly
//! spawned thread. That was two threads and two lookups per
//! `x_md_get_profile` call. This resolver answers IP literals directly and
//! serves names from a small cache; a miss goes to `ureq`'s own resolver,
//! timeout included.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// How long a looked-up address is reused. Default 60 s: an upstream that
/// moves is reached at its new address at most this long after the move;
/// until then requests to the old address fail as connection errors (the
/// agent sees "could not reach the FxTwitter API").
pub const RESOLVE_TTL: Duration = Duration::from_secs(60);

/// Most names remembered. Default 64 (xmd talks to at most 16 bases);
/// past it the cache is emptied and refilled on demand.
pub const MAX_RESOLVED_NAMES: usize = 64;

/// A [`Resolver`] with a per-name cache in front of ureq's default one.
#[derive(Debug, Default)]
pub struct CachingResolver {
    inner: DefaultResolver,
    names: Mutex<HashMap<String, (Instant, ResolvedSocketAddrs)>>,
}

impl CachingResolver {
    /// An empty cache.
    pub fn new() -> CachingResolver {
        CachingResolver::default()
    }
}

impl Resolver for CachingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let (Some(scheme), Some(authority)) = (uri.scheme(), uri.authority()) else {
            return self.inner.resolve(uri, config, timeout);
        };
        let Some(port) = authority
            .port_u16()
            .or_else(|| default_port(scheme.as_str()))
        else {
            return self.inner.resolve(uri, config, timeout);
        };
        let host = authority.host();
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = literal.parse::<IpAddr>() {
            let mut addrs = self.empty();
            addrs.push(SocketAddr::new(ip, port));
            return Ok(addrs);
        }
        let key = format!("{host}:{port}");
        let now = Instant::now();
        if let Some((at, addrs)) = lock(&self.names).get(&key) {
            if now.duration_since(*at) < RESOLVE_TTL {
                return Ok(addrs.clone());
            }
        }
        let addrs = self.inner.resolve(uri, config, timeout)?;
        let mut names = lock(&self.names);
        if names.len() >= MAX_RESOLVED_NAMES {
            names.clear();
        }
        names.insert(key, (now, addrs.clone()));
        Ok(addrs)
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ureq::unversioned::transport::time::Duration as UreqDuration;

    fn resolve(r: &CachingResolver, url: &str) -> Vec<SocketAddr> {
        let uri: Uri = url.parse().unwrap();
        let timeout = NextTimeout {
            after: UreqDuration::from_secs(5),
            reason: ureq::Timeout::Resolve,
            per_read: None,
            per_write: None,
        };
        r.resolve(&uri, &Config::default(), timeout)
            .unwrap()
            .iter()
            .copied()
            .collect()
    }

    #[test]
    fn ip_literals_are_answered_without_a_lookup_or_a_cache_entry() {
        let r = CachingResolver::new();
        assert_eq!(
            resolve(&r, "http://127.0.0.1:8081/2/status/1"),
            vec!["127.0.0.1:8081".parse::<SocketAddr>().unwrap()]
        );
        assert_eq!(
            resolve(&r, "https://[::1]/2/status/1"),
            vec!["[::1]:443".parse::<SocketAddr>().unwrap()]
        );
        assert_eq!(
            resolve(&r, "http://10.1.2.3/x"),
            vec!["10.1.2.3:80".parse::<SocketAddr>().unwrap()]
        );
        assert!(lock(&r.names).is_empty());
    }

    #[test]
    fn a_name_is_looked_up_once_and_then_served_from_the_cache() {
        let r = CachingResolver::new();
        let first = resolve(&r, "http://localhost:8081/2/profile/a");
        assert!(!first.is_empty());
        assert!(first
            .iter()
            .all(|a| a.ip().is_loopback() && a.port() == 8081));
        assert_eq!(lock(&r.names).len(), 1);
        // Plant a marker: a cached answer is returned as stored.
        let marker: SocketAddr = "127.0.0.9:8081".parse().unwrap();
        {
            let mut names = lock(&r.names);
            let entry = names.get_mut("localhost:8081").unwrap();
            entry.1 = r.empty();
            entry.1.push(marker);
        }
        assert_eq!(
            resolve(&r, "http://localhost:8081/2/profile/b"),
            vec![marker]
        );
        // An entry older than the TTL is looked up again.
        lock(&r.names).get_mut("localhost:8081").unwrap().0 =
            Instant::now() - RESOLVE_TTL - Duration::from_secs(1);
        assert_ne!(
            resolve(&r, "http://localhost:8081/2/profile/c"),
            vec![marker]
        );
    }

    #[test]
    fn the_cache_is_bounded() {
        let r = CachingResolver::new();
        for port in 0..(MAX_RESOLVED_NAMES as u16 + 3) {
            resolve(&r, &format!("http://localhost:{}/", 1000 + port));
            assert!(lock(&r.names).len() <= MAX_RESOLVED_NAMES);
        }
        assert_eq!(lock(&r.names).len(), 3);
    }
}
