//! Settling the era of a [`Client`]: the `server/discover` probe at
//! 2026-07-28 and its fallback to the `initialize` handshake (or the
//! handshake alone when legacy is chosen or pinned), once, and the mode
//! every later request uses.

use serde_json::{json, Value};

use super::request::{check_result_type, into_result};
use super::transport::Received;
use super::{
    client_info, parse, Client, Connection, DiscoverResult, Era, Error, InitializeResult, Mode,
};
use crate::mcp::headers::{HEADER_MCP_PROTOCOL_VERSION, HEADER_MCP_SESSION_ID};
use crate::mcp::version::ProtocolVersion;

/// True for a date-shaped revision before 2026-07-28 (a handshake revision).
fn is_handshake_revision(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
        && v < ProtocolVersion::MODERN.as_str()
}

impl Client {
    fn modern_version(&self) -> String {
        self.pin
            .clone()
            .unwrap_or_else(|| ProtocolVersion::MODERN.as_str().to_string())
    }

    /// Settles the era: the probe and/or handshake, once. Returns the mode
    /// every request then uses.
    pub(super) fn mode(&self) -> Result<Mode, Error> {
        if self.era == Era::Modern {
            if let Some(c) = &self.lock().conn {
                return Ok(Mode::Modern {
                    version: c.protocol_version.clone(),
                });
            }
            return Ok(Mode::Modern {
                version: self.modern_version(),
            });
        }
        let mut st = self.lock();
        if st.conn.is_none() {
            st.conn = Some(self.settle()?);
        }
        Ok(mode_of(st.conn.as_ref().expect("settled")))
    }

    fn settle(&self) -> Result<Connection, Error> {
        let legacy_pin = self.pin.as_deref().is_some_and(is_handshake_revision);
        if self.era == Era::Legacy || legacy_pin {
            return self.handshake();
        }
        match self.probe() {
            Ok(c) => Ok(c),
            Err(Probe::Fatal(e)) => Err(e),
            Err(Probe::NotModern(e)) if self.pin.is_some() => Err(e),
            Err(Probe::NotModern(_)) => self.handshake(),
        }
    }

    /// Sends a modern `server/discover` and returns the raw result.
    pub(super) fn discover_raw(&self) -> Result<(Received, Value), Error> {
        let version = self.modern_version();
        let (body, headers) = self.modern_message("server/discover", json!({}), &version);
        let received = self.transport.request(&body, &headers, &mut |_| {})?;
        let raw = received.message.clone();
        Ok((received, raw))
    }

    fn probe(&self) -> Result<Connection, Probe> {
        let version = self.modern_version();
        let received = match self.discover_raw() {
            Ok((r, _)) => r,
            Err(e @ Error::HttpStatus { status, .. })
                if (400..500).contains(&status) && status != 401 && status != 403 =>
            {
                return Err(Probe::NotModern(e))
            }
            Err(e @ Error::Protocol(_)) => return Err(Probe::NotModern(e)),
            Err(e) => return Err(Probe::Fatal(e)),
        };
        let status = received.status;
        let result = match into_result(received) {
            Ok(r) => r,
            Err(e @ Error::JsonRpc { .. }) if status == 401 || status == 403 || status >= 500 => {
                return Err(Probe::Fatal(e))
            }
            Err(e) => return Err(Probe::NotModern(e)),
        };
        check_result_type("server/discover", &result).map_err(Probe::NotModern)?;
        let d: DiscoverResult = parse("server/discover", result).map_err(Probe::NotModern)?;
        if !d.supported_versions.contains(&version) {
            return Err(Probe::NotModern(Error::protocol(format!(
                "server/discover: server does not support {version} (it supports {})",
                d.supported_versions.join(", ")
            ))));
        }
        Ok(Connection {
            era: Era::Modern,
            protocol_version: version,
            server_info: d.server_info(),
            capabilities: d.capabilities,
            instructions: d.instructions,
            session_id: None,
        })
    }

    /// The legacy handshake: `initialize`, version check,
    /// `notifications/initialized`.
    fn handshake(&self) -> Result<Connection, Error> {
        let offered = self
            .pin
            .clone()
            .unwrap_or_else(|| ProtocolVersion::LATEST_LEGACY.as_str().to_string());
        let body = json!({
            "jsonrpc": "2.0", "id": self.id(), "method": "initialize",
            "params": {"protocolVersion": offered, "capabilities": {}, "clientInfo": client_info()}
        });
        let received = self.transport.request(&body, &[], &mut |_| {})?;
        let session = received.session_id.clone();
        let init: InitializeResult = parse("initialize", into_result(received)?)?;
        let chosen = init.protocol_version.clone();
        let acceptable = match &self.pin {
            Some(p) => *p == chosen,
            None => ProtocolVersion::LEGACY.iter().any(|v| v.as_str() == chosen),
        };
        let mut headers = vec![(HEADER_MCP_PROTOCOL_VERSION, chosen.clone())];
        if let Some(s) = &session {
            headers.push((HEADER_MCP_SESSION_ID, s.clone()));
        }
        if !acceptable {
            if session.is_some() {
                let _ = self.transport.delete(&headers);
            }
            let speaks = match &self.pin {
                Some(p) => p.clone(),
                None => ProtocolVersion::LEGACY.map(|v| v.as_str()).join(", "),
            };
            return Err(Error::protocol(format!(
                "server chose protocol version {chosen}, which this client does not speak here (offered {offered}; accepts {speaks})"
            )));
        }
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.transport.notify(&note, &headers)?;
        Ok(Connection {
            era: Era::Legacy,
            protocol_version: chosen,
            server_info: Some(init.server_info),
            capabilities: init.capabilities,
            instructions: init.instructions,
            session_id: session,
        })
    }

    /// Settles the era and returns what was negotiated: the `initialize`
    /// handshake in the legacy era, a `server/discover` round trip in the
    /// modern one (auto mode: whichever the probe chose).
    ///
    /// # Errors
    /// Any [`Error`]; in the modern era also a result without `resultType`
    /// or without the pinned version among `supportedVersions`.
    pub fn initialize(&self) -> Result<Connection, Error> {
        if self.era == Era::Modern {
            let mut st = self.lock();
            if let Some(c) = &st.conn {
                return Ok(c.clone());
            }
            let c = match self.probe() {
                Ok(c) => c,
                Err(Probe::Fatal(e) | Probe::NotModern(e)) => return Err(e),
            };
            st.conn = Some(c.clone());
            return Ok(c);
        }
        self.mode()?;
        Ok(self.connection().expect("settled"))
    }
}

enum Probe {
    /// The answer says nothing about the era (5xx, auth, transport).
    Fatal(Error),
    /// The server does not speak 2026-07-28 (fall back unless pinned).
    NotModern(Error),
}

fn mode_of(c: &Connection) -> Mode {
    match c.era {
        Era::Legacy => Mode::Legacy {
            version: c.protocol_version.clone(),
            session: c.session_id.clone(),
        },
        _ => Mode::Modern {
            version: c.protocol_version.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_revisions_are_dates_before_2026_07_28() {
        assert!(is_handshake_revision("2025-11-25"));
        assert!(is_handshake_revision("2024-11-05"));
        assert!(!is_handshake_revision("2026-07-28"));
        assert!(!is_handshake_revision("2099-01-01"));
        assert!(!is_handshake_revision("v999.0.0"));
        assert!(!is_handshake_revision("2025-1-125"));
    }
}
