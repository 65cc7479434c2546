//! One loop's upstream connections: the keep-alive pool, opening and
//! closing.

use mio::{Interest, Registry, Token};

use super::super::conn::UpConn;
use super::step::conn_error;
use super::{Driver, Slot, Timer, UPSTREAM_TOKENS};
use crate::x::restart::Need;
use crate::x::upstream::FetchError;

impl<P> Driver<P> {
    /// A pooled connection to (provider, base), if one is idle and has
    /// received nothing since its last answer: it is read once before it
    /// is reused (as ureq probes its pooled connections), and a close or
    /// any byte there (an answer nobody asked for) closes it. Its
    /// readiness event may not have been handled yet when a call in the
    /// same turn of the loop needs a connection: without the probe, an
    /// upstream that sent a second, unasked answer 0.3 s after the first
    /// had it taken as the answer to the next request on the connection
    /// (1 probe in 60 while the loop was busy), a post's content for
    /// another post (RFC 9112 §9.3: a response must not be matched to the
    /// wrong request).
    pub(super) fn pop_idle(
        &mut self,
        reg: &Registry,
        provider: usize,
        base: usize,
    ) -> Option<usize> {
        loop {
            let i = self.idle.get_mut(&(provider, base))?.pop()?;
            let Some(Some(s)) = self.slots.get_mut(i) else {
                continue;
            };
            if s.idle_since.is_none() || s.provider != provider || s.base != base {
                continue;
            }
            s.idle_since = None;
            self.idle_count -= 1;
            if !s.conn.is_quiet(&mut self.scratch) {
                self.close(reg, i);
                continue;
            }
            return Some(i);
        }
    }

    /// Opens a connection to (provider, base).
    pub(super) fn open(
        &mut self,
        reg: &Registry,
        provider: usize,
        base: usize,
    ) -> Result<usize, FetchError> {
        let p = self
            .t
            .provider(provider)
            .ok_or_else(|| FetchError::Other("no such upstream".into()))?;
        let b = &p.bases[base];
        let addr = self
            .t
            .names()
            .address(&b.host, b.port)
            .map_err(FetchError::Connect)?;
        #[cfg(feature = "tls")]
        let tls = b.tls.then(|| (b.server_name(), self.t.tls()));
        #[cfg(not(feature = "tls"))]
        let tls = b.tls.then(|| (b.server_name(), ()));
        let mut conn = UpConn::connect(addr, tls).map_err(|e| conn_error(&e))?;
        let index = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        if let Err(e) = reg.register(
            &mut conn.stream,
            Token(UPSTREAM_TOKENS + index),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            self.free.push(index);
            return Err(FetchError::Other(e.to_string()));
        }
        self.open += 1;
        self.slots[index] = Some(Slot {
            index,
            conn,
            provider,
            base,
            exchange: None,
            reused: false,
            idle_since: None,
        });
        Ok(index)
    }

    /// Closes connection `index`; returns the need of the exchange it
    /// carried, if any.
    pub(super) fn close(&mut self, reg: &Registry, index: usize) -> Option<Need> {
        let mut slot = self.slots.get_mut(index)?.take()?;
        let _ = reg.deregister(&mut slot.conn.stream);
        self.free.push(index);
        self.open -= 1;
        if slot.idle_since.is_some() {
            self.idle_count -= 1;
        }
        let need = slot.exchange.take().map(|e| {
            self.timers
                .remove(&(e.deadline, Timer::Exchange(index, e.id)));
            if e.room_since.is_some() {
                self.t.fed(&e.need);
            }
            // Its room (if any) goes back with it.
            e.need
        });
        if let Some(need) = &need {
            if let Some(f) = self.flights.get_mut(need) {
                if f.slot == Some(index) {
                    f.slot = None;
                }
            }
        }
        need
    }
}
