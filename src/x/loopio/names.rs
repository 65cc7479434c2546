//! The names of the upstream bases, resolved ahead of the event loops.
//!
//! A loop never waits for DNS: a run on a worker thread that needs an
//! upstream request first makes sure the names of its provider's bases
//! are resolved ([`Names::ensure`], a blocking `getaddrinfo` on the worker
//! when the entry is missing or older than [`RESOLVE_TTL`]), then hands
//! the request to its loop, which connects to the cached address. A name
//! that does not resolve is remembered for [`NEGATIVE_TTL`] and fails the
//! request as the `dns` cause. IP literals are never looked up.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use crate::x::resolve::{MAX_RESOLVED_NAMES, RESOLVE_TTL};

/// How long a name that did not resolve is remembered. Default 5 s: a
/// request in that time fails at once as "host not found" (the agent sees
/// the network error, the log `cause=dns`).
pub const NEGATIVE_TTL: Duration = Duration::from_secs(5);

type Lookup = Result<SocketAddr, String>;

/// The cache of `host:port` lookups.
#[derive(Default)]
pub struct Names {
    entries: Mutex<HashMap<(String, u16), (Instant, Lookup)>>,
}

impl Names {
    /// Resolves `host:port` if it is not cached fresh (blocking; call on a
    /// worker), and returns the cached lookup.
    pub fn ensure(&self, host: &str, port: u16) -> Lookup {
        if let Some(addr) = literal(host, port) {
            return Ok(addr);
        }
        let now = Instant::now();
        if let Some((at, lookup)) = self.lock().get(&(host.to_string(), port)) {
            let ttl = if lookup.is_ok() {
                RESOLVE_TTL
            } else {
                NEGATIVE_TTL
            };
            if now.duration_since(*at) < ttl {
                return lookup.clone();
            }
        }
        let lookup = resolve(host, port);
        let mut entries = self.lock();
        if entries.len() >= MAX_RESOLVED_NAMES {
            entries.clear();
        }
        entries.insert((host.to_string(), port), (now, lookup.clone()));
        lookup
    }

    /// The address of `host:port` for a loop: a literal, the cached lookup
    /// (however old), or, when there is none, a lookup now (blocking; only
    /// after the cache was emptied between a worker's
    /// [`Names::ensure`] and the loop's connect).
    pub fn address(&self, host: &str, port: u16) -> Lookup {
        if let Some(addr) = literal(host, port) {
            return Ok(addr);
        }
        if let Some((_, lookup)) = self.lock().get(&(host.to_string(), port)) {
            return lookup.clone();
        }
        self.ensure(host, port)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u16), (Instant, Lookup)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn literal(host: &str, port: u16) -> Option<SocketAddr> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>()
        .ok()
        .map(|ip| SocketAddr::new(ip, port))
}

fn resolve(host: &str, port: u16) -> Lookup {
    match (host, port).to_socket_addrs() {
        Ok(mut addrs) => addrs
            .next()
            .ok_or_else(|| format!("host not found: {host} has no address")),
        Err(e) => Err(format!("host not found: {host}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_names_and_failures() {
        let n = Names::default();
        assert_eq!(
            n.ensure("127.0.0.1", 81),
            Ok("127.0.0.1:81".parse().unwrap())
        );
        assert_eq!(n.ensure("[::1]", 443), Ok("[::1]:443".parse().unwrap()));
        assert!(n.lock().is_empty());
        let a = n.ensure("localhost", 8081).unwrap();
        assert!(a.ip().is_loopback() && a.port() == 8081);
        assert_eq!(n.address("localhost", 8081), Ok(a));
        let bad = n.ensure("no-such-host.invalid", 80).unwrap_err();
        assert!(bad.starts_with("host not found"), "{bad}");
        assert_eq!(n.address("no-such-host.invalid", 80), Err(bad));
    }
}
