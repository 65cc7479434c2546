//! The state one probe run carries: the target, the eras settled, the
//! request budget and pace, the seeded generator, the evidence of the
//! check being run, and the request builders of each era.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::wire::{self, Exchange, Target};
use super::{Config, Era};
use crate::mcp::headers::encode_header_value;

/// The modern revision the probe speaks.
pub const MODERN: &str = "2026-07-28";
/// The legacy revision the probe offers in `initialize`.
pub const LATEST_LEGACY: &str = "2025-11-25";
/// `clientInfo.name` the probe announces.
pub const PROBE_CLIENT: &str = "xmd-probe";

/// A small deterministic generator (xorshift64*), seeded by `--seed`: the
/// request ids, unknown method names, garbage cursors and URIs the probe
/// sends all come from it, so a run is replayable.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (0 is mapped to a fixed non-zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A lowercase token of `n` letters.
    pub fn token(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| (b'a' + (self.next() % 26) as u8) as char)
            .collect()
    }
}

/// What one era settled to.
#[derive(Debug, Clone, Default)]
pub struct EraState {
    /// The revision spoken (`2026-07-28`, or the negotiated legacy one).
    pub version: String,
    /// Declared `ServerCapabilities`.
    pub capabilities: Value,
    /// `serverInfo` as declared.
    pub server_info: Value,
    /// Modern `supportedVersions`.
    pub supported: Vec<String>,
    /// Legacy `Mcp-Session-Id`, if issued.
    pub session: Option<String>,
    /// `tools/list` (first walk), once read.
    pub tools: Option<Vec<Value>>,
}

impl EraState {
    /// Whether a capability key is declared.
    pub fn declares(&self, key: &str) -> bool {
        self.capabilities.get(key).is_some_and(|v| !v.is_null())
    }
}

/// The run's state.
pub struct Ctx<'a> {
    pub cfg: &'a Config,
    pub target: Target,
    pub rng: Rng,
    pub modern: Option<EraState>,
    pub legacy: Option<EraState>,
    /// Requests sent so far (liveness probes included).
    pub sent: usize,
    /// Evidence of the check being run.
    pub evidence: Vec<Exchange>,
    /// Every modern response read (for the cross-cutting checks).
    pub modern_seen: Vec<(String, wire::Response)>,
    /// The check after whose payload the server stopped answering.
    pub down_since: Option<String>,
    /// The server also speaks the handshake era (settled, or seen to
    /// answer `initialize` when only the modern era is probed).
    pub dual_era: bool,
    last_send: Option<Instant>,
    next_id: i64,
}

/// Why a request was not sent.
pub const BUDGET_SPENT: &str = "request budget spent (--budget)";

impl<'a> Ctx<'a> {
    pub fn new(cfg: &'a Config, target: Target) -> Ctx<'a> {
        Ctx {
            cfg,
            target,
            rng: Rng::new(cfg.seed),
            modern: None,
            legacy: None,
            sent: 0,
            evidence: Vec::new(),
            modern_seen: Vec::new(),
            down_since: None,
            dual_era: false,
            last_send: None,
            next_id: 1,
        }
    }

    /// A fresh numeric request id.
    pub fn id(&mut self) -> i64 {
        let i = self.next_id;
        self.next_id += 1;
        i
    }

    pub fn era(&self, era: Era) -> &EraState {
        match era {
            Era::Legacy => self.legacy.as_ref(),
            _ => self.modern.as_ref().or(self.legacy.as_ref()),
        }
        .expect("era settled before its checks run")
    }

    pub fn era_mut(&mut self, era: Era) -> &mut EraState {
        match era {
            Era::Legacy => self.legacy.as_mut(),
            _ => self.modern.as_mut(),
        }
        .expect("era settled before its checks run")
    }

    fn pace(&mut self) {
        if let Some(t) = self.last_send {
            let since = t.elapsed();
            if since < self.cfg.pace {
                std::thread::sleep(self.cfg.pace - since);
            }
        }
        self.last_send = Some(Instant::now());
    }

    /// Sends raw bytes on a new connection and reads one response; the
    /// exchange is kept as evidence of the current check.
    pub fn raw(&mut self, bytes: &[u8]) -> Exchange {
        self.raw_opts(bytes, false)
    }

    /// [`Ctx::raw`] for HEAD (no body read).
    pub fn raw_opts(&mut self, bytes: &[u8], head_only: bool) -> Exchange {
        let ex = if self.sent >= self.cfg.budget {
            Exchange {
                request: wire::redact(bytes),
                request_len: bytes.len(),
                error: Some(BUDGET_SPENT.into()),
                ..Exchange::default()
            }
        } else {
            self.sent += 1;
            self.pace();
            wire::exchange(&self.target, bytes, self.cfg.timeout, head_only)
        };
        self.evidence.push(ex.clone());
        ex
    }

    /// Counts a request sent on a connection the check drives itself.
    pub fn count(&mut self) -> bool {
        if self.sent >= self.cfg.budget {
            return false;
        }
        self.sent += 1;
        self.pace();
        true
    }

    /// `Host` plus the user's `--header`s.
    pub fn base_headers(&self) -> Vec<(String, String)> {
        let mut h = vec![("Host".to_string(), self.target.authority.clone())];
        for (n, v) in &self.cfg.headers {
            h.push((n.clone(), v.clone()));
        }
        h
    }

    /// The modern `_meta`.
    pub fn meta(&self) -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": PROBE_CLIENT, "version": env!("CARGO_PKG_VERSION")},
            "io.modelcontextprotocol/clientCapabilities": {}
        })
    }

    /// The JSON-RPC request body of `method` in `era` (modern: `_meta` added).
    pub fn body(&self, era: Era, id: Value, method: &str, params: Value) -> Value {
        let mut params = params;
        if era == Era::Modern {
            if let Value::Object(m) = &mut params {
                m.entry("_meta").or_insert_with(|| self.meta());
            }
        }
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// The headers a correct client sends for `body` in `era`.
    pub fn headers_for(&self, era: Era, body: &Value) -> Vec<(String, String)> {
        let mut h = self.base_headers();
        h.push(("Content-Type".into(), "application/json".into()));
        h.push((
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ));
        let method = body.get("method").and_then(Value::as_str).unwrap_or("");
        match era {
            Era::Modern => {
                h.push(("MCP-Protocol-Version".into(), MODERN.into()));
                h.push(("Mcp-Method".into(), method.into()));
                let field = match method {
                    "tools/call" | "prompts/get" => Some("name"),
                    "resources/read" => Some("uri"),
                    _ => None,
                };
                if let Some(v) = field
                    .and_then(|f| body.pointer(&format!("/params/{f}")))
                    .and_then(Value::as_str)
                {
                    h.push(("Mcp-Name".into(), encode_header_value(v)));
                }
            }
            _ => {
                if let Some(st) = &self.legacy {
                    if method != "initialize" {
                        h.push(("MCP-Protocol-Version".into(), st.version.clone()));
                        if let Some(s) = &st.session {
                            h.push(("Mcp-Session-Id".into(), s.clone()));
                        }
                    }
                }
            }
        }
        h
    }

    /// POSTs `body` with `headers` to the endpoint.
    pub fn post_with(&mut self, headers: &[(String, String)], body: &[u8]) -> Exchange {
        let raw = wire::build("POST", &self.target.target.clone(), headers, body);
        self.raw(&raw)
    }

    /// A correct request of `method` in `era`; returns the exchange.
    pub fn call(&mut self, era: Era, method: &str, params: Value) -> Exchange {
        let id = json!(self.id());
        let body = self.body(era, id, method, params);
        self.send_json(era, &body)
    }

    /// Sends a JSON body with the era's correct headers.
    pub fn send_json(&mut self, era: Era, body: &Value) -> Exchange {
        let h = self.headers_for(era, body);
        let ex = self.post_with(&h, body.to_string().as_bytes());
        self.note_modern(era, body, &ex);
        ex
    }

    /// Keeps modern responses for the cross-cutting checks.
    pub fn note_modern(&mut self, era: Era, body: &Value, ex: &Exchange) {
        if era == Era::Modern {
            if let Some(r) = &ex.response {
                let m = body
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                self.modern_seen.push((m, r.clone()));
            }
        }
    }

    /// Whether the server still answers a correct request on a new
    /// connection (two tries, 200 ms apart). Not kept as evidence.
    pub fn alive(&mut self) -> bool {
        let era = if self.modern.is_some() {
            Era::Modern
        } else {
            Era::Legacy
        };
        for attempt in 0..2 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(200));
            }
            let id = json!(self.id());
            let body = if era == Era::Modern {
                self.body(era, id, "server/discover", json!({}))
            } else {
                self.body(era, id, "ping", json!({}))
            };
            let h = self.headers_for(era, &body);
            let raw = wire::build("POST", &self.target.target, &h, body.to_string().as_bytes());
            self.sent += 1;
            self.pace();
            let ex = wire::exchange(&self.target, &raw, self.cfg.timeout, false);
            if ex.response.as_ref().is_some_and(|r| r.result().is_some()) {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_a_function_of_the_seed() {
        let (mut a, mut b, mut c) = (Rng::new(7), Rng::new(7), Rng::new(8));
        let xa: Vec<u64> = (0..4).map(|_| a.next()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        let t = Rng::new(0).token(12);
        assert_eq!(t.len(), 12);
        assert!(t.bytes().all(|b| b.is_ascii_lowercase()));
    }
}
