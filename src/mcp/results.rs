//! A cache of finished tool results, so a repeated `tools/call` is answered
//! on the event loop like `tools/list`: the pre-serialized result is a
//! shared tail spliced after the request id, with no worker hand-off, no
//! upstream request, no rendering and no JSON serialization.
//!
//! An entry lives exactly as long as the upstream answers it was built
//! from stay fresh (the tool reports that), so it never outlives the
//! upstream cache. Replayed results say `"cache": "hit"`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::call::reply_body;
use super::jsonrpc::{Id, REPLY_PREFIX};
use super::version::ProtocolVersion;
use crate::x::tools::{ToolCall, ToolOutput};

/// Default budget of the result cache in bytes (text plus structured
/// content, estimated at insertion).
///
/// Default is 16 MiB. Past it, the entries closest to expiry are dropped.
pub const DEFAULT_RESULT_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// Most entries, whatever their size.
///
/// Default is 8,192.
pub const MAX_RESULT_ENTRIES: usize = 8192;

struct Entry {
    expires: Instant,
    bytes: usize,
    output: ToolOutput,
    /// The reply after the id, per revision (`ProtocolVersion::index`),
    /// built on first use.
    tails: [OnceLock<Arc<[u8]>>; 4],
}

/// The cache. `budget` 0 turns it off.
pub struct ResultCache {
    budget: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, Arc<Entry>>,
    bytes: usize,
}

/// The cache key: tool name and its validated arguments (object keys are
/// sorted, so equal arguments give equal keys).
pub fn key(call: &ToolCall) -> String {
    format!("{}\u{0}{}", call.name, call.arguments)
}

impl ResultCache {
    /// A cache holding at most `budget` bytes.
    pub fn new(budget: usize) -> ResultCache {
        ResultCache {
            budget,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The reply tail (everything after the id) of a fresh cached result,
    /// shaped for `version`.
    pub fn get(
        &self,
        key: &str,
        version: ProtocolVersion,
        modern_tail: &[u8],
        now: Instant,
    ) -> Option<Arc<[u8]>> {
        if self.budget == 0 {
            return None;
        }
        let entry = {
            let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(inner.map.get(key)?)
        };
        if entry.expires <= now {
            return None;
        }
        let tail = entry.tails[version.index()].get_or_init(|| {
            let full = reply_body(&Id::Int(0), version, &entry.output, modern_tail);
            let cut = REPLY_PREFIX.len() + 1; // the `0` id
            Arc::from(&full[cut..])
        });
        Some(Arc::clone(tail))
    }

    /// Stores a successful result for `fresh_for`; errors and results with
    /// no freshness are never stored. `size` is the length of one
    /// serialized reply (the entry is counted at twice that). The caller
    /// sets what a replay should say (`"cache": "hit"`).
    pub fn put(
        &self,
        key: String,
        output: ToolOutput,
        size: usize,
        fresh_for: Duration,
        now: Instant,
    ) {
        if self.budget == 0 || output.is_error || fresh_for.is_zero() {
            return;
        }
        let bytes = key.len() + size * 2 + 256;
        if bytes > self.budget / 4 {
            return;
        }
        let entry = Arc::new(Entry {
            expires: now + fresh_for,
            bytes,
            output,
            tails: Default::default(),
        });
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.map.retain(|_, e| e.expires > now);
        inner.bytes = inner.map.values().map(|e| e.bytes).sum();
        while inner.bytes + bytes > self.budget || inner.map.len() >= MAX_RESULT_ENTRIES {
            let Some(oldest) = inner
                .map
                .iter()
                .min_by_key(|(_, e)| e.expires)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = inner.map.remove(&oldest) {
                inner.bytes -= e.bytes;
            }
        }
        inner.bytes += bytes;
        if let Some(old) = inner.map.insert(key, entry) {
            inner.bytes -= old.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn out(cache: &str) -> ToolOutput {
        ToolOutput {
            text: "# t".into(),
            structured: Some(json!({"cache": cache, "n": 1})),
            is_error: false,
        }
    }

    const SIZE: usize = 100;

    #[test]
    fn fresh_results_replay_as_hits_until_they_expire() {
        let c = ResultCache::new(1 << 20);
        let t0 = Instant::now();
        c.put("k".into(), out("hit"), SIZE, Duration::from_secs(10), t0);
        let tail = c.get("k", ProtocolVersion::V2025_11_25, b"", t0).unwrap();
        let mut whole = REPLY_PREFIX.to_vec();
        whole.extend_from_slice(b"7");
        whole.extend_from_slice(&tail);
        let v: Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(
            v["result"]["structuredContent"],
            json!({"cache": "hit", "n": 1})
        );
        assert_eq!(v["result"]["isError"], false);
        assert!(c
            .get(
                "k",
                ProtocolVersion::V2025_11_25,
                b"",
                t0 + Duration::from_secs(10)
            )
            .is_none());
    }

    #[test]
    fn errors_unfresh_results_and_a_disabled_cache_store_nothing() {
        let t0 = Instant::now();
        let c = ResultCache::new(1 << 20);
        let mut e = out("miss");
        e.is_error = true;
        c.put("e".into(), e, SIZE, Duration::from_secs(10), t0);
        c.put("z".into(), out("hit"), SIZE, Duration::ZERO, t0);
        assert!(c.get("e", ProtocolVersion::V2025_11_25, b"", t0).is_none());
        assert!(c.get("z", ProtocolVersion::V2025_11_25, b"", t0).is_none());
        let off = ResultCache::new(0);
        off.put("k".into(), out("hit"), SIZE, Duration::from_secs(10), t0);
        assert!(off
            .get("k", ProtocolVersion::V2025_11_25, b"", t0)
            .is_none());
    }

    #[test]
    fn the_budget_drops_entries_closest_to_expiry() {
        let t0 = Instant::now();
        let c = ResultCache::new(4000);
        for i in 0..20u64 {
            c.put(
                format!("k{i}"),
                out("hit"),
                SIZE,
                Duration::from_secs(100 + i),
                t0,
            );
        }
        let inner = c.inner.lock().unwrap();
        assert!(inner.bytes <= 4000, "{}", inner.bytes);
        assert!(inner.map.contains_key("k19"));
        assert!(!inner.map.contains_key("k0"));
    }
}
