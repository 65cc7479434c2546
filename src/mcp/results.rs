//! A cache of finished tool results, so a repeated `tools/call` is answered
//! on the event loop like `tools/list`: the pre-serialized result is a
//! shared tail spliced after the request id, with no worker hand-off, no
//! upstream request, no rendering and no JSON serialization.
//!
//! An entry lives exactly as long as the upstream answers it was built
//! from stay fresh (the tool reports that), so it never outlives the
//! upstream cache. Replayed results say `"cache": "hit"`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::call::{reply_from, SerializedOutput};
use super::jsonrpc::{Id, REPLY_PREFIX};
use super::version::ProtocolVersion;
use crate::x::tools::ToolCall;

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
    /// Insertion number: with `expires`, this entry's key in the expiry
    /// index.
    seq: u64,
    bytes: usize,
    output: SerializedOutput,
    /// The reply after the id, per revision (`ProtocolVersion::index`),
    /// built on first use.
    tails: [OnceLock<Arc<[u8]>>; 4],
}

/// The cache. `budget` 0 turns it off.
pub struct ResultCache {
    budget: usize,
    inner: Mutex<Inner>,
}

/// The entries, and an index of them by expiry, so storing one costs
/// O(log n) under the lock the event loop's lookups also take.
#[derive(Default)]
struct Inner {
    map: HashMap<String, Arc<Entry>>,
    by_expiry: BTreeMap<(Instant, u64), String>,
    bytes: usize,
    seq: u64,
}

impl Inner {
    fn remove(&mut self, key: &str) {
        if let Some(old) = self.map.remove(key) {
            self.by_expiry.remove(&(old.expires, old.seq));
            self.bytes -= old.bytes;
        }
    }

    /// Drops the entry closest to expiry; false when there is none.
    fn drop_first(&mut self) -> bool {
        match self.by_expiry.pop_first() {
            Some((_, key)) => {
                if let Some(old) = self.map.remove(&key) {
                    self.bytes -= old.bytes;
                }
                true
            }
            None => false,
        }
    }
}

/// The cache key: tool name and the typed call's canonical form
/// (`Call::canonical`: one spelling, defaults left out, object keys
/// sorted), so equal calls give equal keys.
pub fn key(call: &ToolCall) -> String {
    let mut key = Vec::with_capacity(64);
    key.extend_from_slice(call.name().as_bytes());
    key.push(0);
    crate::json::write(&mut key, &call.arguments());
    // The writer writes UTF-8 only.
    String::from_utf8(key).unwrap_or_default()
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
            let full = reply_from(&Id::Int(0), version, &entry.output, modern_tail);
            let cut = REPLY_PREFIX.len() + 1; // the `0` id
            Arc::from(&full[cut..])
        });
        Some(Arc::clone(tail))
    }

    /// Stores a successful result for `fresh_for`; errors and results with
    /// no freshness are never stored. `size` is the length of one
    /// serialized reply (the entry is counted at twice that: the stored
    /// output and one revision's reply tail). The caller sets what a replay
    /// should say (`"cache": "hit"`).
    pub(crate) fn put(
        &self,
        key: String,
        output: SerializedOutput,
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
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        // Expired entries first, then the ones closest to expiry, until the
        // new one fits.
        while inner
            .by_expiry
            .first_key_value()
            .is_some_and(|((expires, _), _)| *expires <= now)
        {
            inner.drop_first();
        }
        inner.remove(&key);
        while inner.bytes + bytes > self.budget || inner.map.len() >= MAX_RESULT_ENTRIES {
            if !inner.drop_first() {
                break;
            }
        }
        inner.seq += 1;
        let entry = Arc::new(Entry {
            expires: now + fresh_for,
            seq: inner.seq,
            bytes,
            output,
            tails: Default::default(),
        });
        inner.bytes += bytes;
        inner
            .by_expiry
            .insert((entry.expires, entry.seq), key.clone());
        inner.map.insert(key, entry);
        crate::heap::RESULT_CACHE_BYTES.store(inner.bytes, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::x::tools::ToolOutput;
    use serde_json::{json, Value};

    fn out(cache: &str) -> SerializedOutput {
        SerializedOutput::new(&ToolOutput {
            text: "# t".into(),
            structured: Some(json!({"cache": cache, "n": 1})),
            is_error: false,
        })
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

    #[test]
    fn replacing_and_expiring_keep_the_index_and_the_byte_count_exact() {
        let t0 = Instant::now();
        let c = ResultCache::new(1 << 22);
        let consistent = |c: &ResultCache| {
            let inner = c.inner.lock().unwrap();
            assert_eq!(inner.by_expiry.len(), inner.map.len());
            assert_eq!(
                inner.bytes,
                inner.map.values().map(|e| e.bytes).sum::<usize>()
            );
            for (k, e) in &inner.map {
                assert_eq!(inner.by_expiry.get(&(e.expires, e.seq)), Some(k));
            }
            inner.map.len()
        };
        c.put("a".into(), out("hit"), SIZE, Duration::from_secs(5), t0);
        c.put("b".into(), out("hit"), SIZE, Duration::from_secs(50), t0);
        // The same key again replaces, with its new expiry.
        c.put(
            "a".into(),
            out("hit"),
            SIZE * 3,
            Duration::from_secs(60),
            t0,
        );
        assert_eq!(consistent(&c), 2);
        let at = |s| t0 + Duration::from_secs(s);
        assert!(c
            .get("a", ProtocolVersion::V2025_11_25, b"", at(55))
            .is_some());
        // A store at 55 s drops "b" (expired at 50 s) before adding "c".
        c.put(
            "c".into(),
            out("hit"),
            SIZE,
            Duration::from_secs(10),
            at(55),
        );
        assert_eq!(consistent(&c), 2);
        assert!(!c.inner.lock().unwrap().map.contains_key("b"));
        // The entry count is bounded too.
        for i in 0..(MAX_RESULT_ENTRIES + 10) {
            c.put(
                format!("n{i}"),
                out("hit"),
                1,
                Duration::from_secs(1000),
                t0,
            );
        }
        assert_eq!(consistent(&c), MAX_RESULT_ENTRIES);
    }
}
