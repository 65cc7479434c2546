//! The MCP methods of a [`Client`]: `discover`, `ping`, any method
//! through `rpc`, the `list_*` walks over `nextCursor` (bounded in pages,
//! bytes and cursor cycles), `tools/call`, `resources/read`, and closing
//! a legacy session.

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::request::{check_result_type, into_result};
use super::shape::Tally;
use super::{
    parse, CallToolResult, Client, Connection, DiscoverResult, Error, Mode, ReadResourceResult,
    Resource, ResourceTemplate, Tool, MAX_LIST_PAGES,
};
use crate::mcp::headers::{HEADER_MCP_PROTOCOL_VERSION, HEADER_MCP_SESSION_ID};

/// A cursor's fingerprint for cycle detection.
fn cursor_hash(cursor: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(cursor)
}

impl Client {
    /// `server/discover` (2026-07-28 framing, at the pinned revision if any),
    /// whatever the era.
    ///
    /// # Errors
    /// Any [`Error`]; a result without `resultType` is a protocol violation.
    pub fn discover(&self) -> Result<DiscoverResult, Error> {
        let (received, _) = self.discover_raw()?;
        let r = into_result(received)?;
        check_result_type("server/discover", &r)?;
        parse("server/discover", r)
    }

    /// Liveness check: legacy `ping`; in the 2026-07-28 era, which removed
    /// `ping`, a `server/discover` round trip.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn ping(&self) -> Result<(), Error> {
        match self.mode()? {
            Mode::Modern { .. } => self.request("server/discover", json!({})).map(drop),
            Mode::Legacy { .. } => self.request("ping", Value::Null).map(drop),
        }
    }

    /// Any method; returns the inner `result` object as sent.
    ///
    /// `params` is an object or `null` (none). In the modern era the client
    /// adds the `_meta` fields the caller did not set.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn rpc(&self, method: &str, params: Value) -> Result<Value, Error> {
        self.request(method, params)
    }

    fn list_all<T: DeserializeOwned>(&self, method: &str, key: &str) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        // Every cursor followed so far (as a hash: the set stays small
        // whatever the cursors' size): any revisit is a cycle, however long.
        let mut seen = std::collections::HashSet::new();
        let mut total = Tally::default();
        for page in 1..=MAX_LIST_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => Value::Null,
            };
            let (mut r, tally) = self.request_counted(method, params)?;
            // What the items kept so far cost: the same caps as one reply.
            total.add(tally, &format!("{method}: {page} pages hold"), "stopped")?;
            if total.bytes > self.max_list_bytes {
                return Err(Error::protocol(format!(
                    "{method}: {page} pages hold {} bytes, more than the limit of {} bytes for one list (--max-list-bytes); stopped",
                    total.bytes, self.max_list_bytes
                )));
            }
            let items = match r.get_mut(key).map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => {
                    return Err(Error::protocol(format!(
                        "{method}: result has no {key} array"
                    )))
                }
            };
            for item in items {
                out.push(parse(method, item)?);
            }
            match r.get("nextCursor") {
                None | Some(Value::Null) => return Ok(out),
                Some(Value::String(next)) if !seen.insert(cursor_hash(next)) => {
                    return Err(Error::protocol(format!(
                        "{method}: server repeated cursor {next:?} after page {page} (a cursor cycle); stopped"
                    )))
                }
                Some(Value::String(next)) => cursor = Some(next.clone()),
                Some(other) => {
                    return Err(Error::protocol(format!(
                        "{method}: nextCursor is not a string: {other}"
                    )))
                }
            }
        }
        Err(Error::protocol(format!(
            "{method}: more than {MAX_LIST_PAGES} pages"
        )))
    }

    /// Every tool, following `nextCursor` to the end.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_all("tools/list", "tools")
    }

    /// Calls a tool. `arguments` is an object, or `null` to send none.
    /// A tool failure is `Ok` with `is_error: true`.
    ///
    /// # Errors
    /// Any [`Error`] (an unknown tool is a JSON-RPC error, usually -32602).
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        let mut params = json!({"name": name});
        if !arguments.is_null() {
            params["arguments"] = arguments;
        }
        parse("tools/call", self.request("tools/call", params)?)
    }

    /// Every resource, following `nextCursor` to the end.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_all("resources/list", "resources")
    }

    /// Every resource template, following `nextCursor` to the end.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_all("resources/templates/list", "resourceTemplates")
    }

    /// Reads one resource.
    ///
    /// # Errors
    /// Any [`Error`] (a missing resource is a JSON-RPC error: -32602 in
    /// 2026-07-28, usually -32002 before).
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        parse(
            "resources/read",
            self.request("resources/read", json!({"uri": uri}))?,
        )
    }

    /// Ends a legacy session: `DELETE` with the `Mcp-Session-Id` (nothing to
    /// do without one). 2xx, 404 (already gone) and 405 (the server does not
    /// allow termination) all count as closed.
    ///
    /// # Errors
    /// [`Error::Transport`] or any other [`Error::HttpStatus`].
    pub fn close(self) -> Result<(), Error> {
        self.end_session()
    }

    pub(super) fn end_session(&self) -> Result<(), Error> {
        let conn = self.lock().conn.take();
        let Some(Connection {
            session_id: Some(session),
            protocol_version,
            ..
        }) = conn
        else {
            return Ok(());
        };
        let headers = [
            (HEADER_MCP_SESSION_ID, session),
            (HEADER_MCP_PROTOCOL_VERSION, protocol_version),
        ];
        match self.transport.delete(&headers)? {
            s if (200..300).contains(&s) || s == 404 || s == 405 => Ok(()),
            status => Err(Error::HttpStatus {
                status,
                body: String::new(),
            }),
        }
    }
}
