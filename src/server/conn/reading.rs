//! Reading from the socket: the read buffer's cap (a head, a body being
//! read, one read), reads until it or `WouldBlock`, the drain of a
//! closing connection, and whether a read is pending.

use std::io::{self, Read};

use super::{
    BodyState, Conn, Ctx, ReadUntil, State, LINGER_MAX_BYTES, READ_CHUNK_BYTES,
    UNBUDGETED_BODY_BYTES,
};
use crate::config::Limits;

impl Conn {
    /// Most bytes the read buffer takes: a head, plus the body being read
    /// when it is reserved in the budget (or small), plus one read. Bytes
    /// past it wait in the socket, so a connection holds no more than this
    /// outside the budget, whatever it pipelines.
    fn read_cap(&self, limits: &Limits) -> usize {
        let body = match &self.state {
            State::Body(reading) => match reading.body {
                BodyState::Length(n) => n.max(UNBUDGETED_BODY_BYTES),
                BodyState::Chunked(_) => UNBUDGETED_BODY_BYTES,
            },
            _ => UNBUDGETED_BODY_BYTES,
        };
        limits.max_head_bytes + body + READ_CHUNK_BYTES
    }

    /// Reads what is available (until `WouldBlock`, EOF, the buffer cap,
    /// or with [`ReadUntil::Short`] a read that returned less than asked),
    /// using `scratch` as the read buffer.
    ///
    /// # Errors
    /// Socket errors other than `WouldBlock` and `Interrupted`.
    pub fn read_from(
        &mut self,
        src: &mut impl Read,
        scratch: &mut [u8],
        ctx: &Ctx,
        until: ReadUntil,
    ) -> io::Result<()> {
        self.read_pending = false;
        if self.read_eof || matches!(self.state, State::Closing(_)) {
            // Drain and discard: nothing more will be parsed.
            loop {
                if self.discarded > LINGER_MAX_BYTES {
                    return Ok(());
                }
                match src.read(scratch) {
                    Ok(0) => {
                        self.read_eof = true;
                        return Ok(());
                    }
                    Ok(n) => self.discarded += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        let cap = self.read_cap(ctx.limits);
        loop {
            if self.rbuf.len() >= cap {
                self.read_pending = true;
                return Ok(());
            }
            let want = scratch.len().min(cap - self.rbuf.len());
            match src.read(&mut scratch[..want]) {
                Ok(0) => {
                    self.read_eof = true;
                    self.cancel_waiting();
                    return Ok(());
                }
                Ok(n) => {
                    if self.rbuf.is_empty()
                        && matches!(self.state, State::Head)
                        && self.head_started.is_none()
                    {
                        self.head_started = Some(ctx.now);
                    }
                    grow_within(&mut self.rbuf, n, cap);
                    self.rbuf.extend_from_slice(&scratch[..n]);
                    if n < want && until == ReadUntil::Short {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether reading stopped at the buffer cap and the buffer has room
    /// again: call `read_from` (no readiness event will announce the data
    /// left in the socket). False while the buffer is still full, as when
    /// parsing waits for a client that does not read its replies: reading
    /// then would make no progress.
    pub fn read_pending(&self, limits: &Limits) -> bool {
        self.read_pending && self.rbuf.len() < self.read_cap(limits)
    }
}

/// Makes room for `extra` more bytes in `buf`: doubling (amortised) while
/// under `soft_cap`, exactly what is needed past it, so the capacity never
/// passes `max(soft_cap, len + extra)`.
fn grow_within(buf: &mut Vec<u8>, extra: usize, soft_cap: usize) {
    let needed = buf.len() + extra;
    if needed > buf.capacity() {
        let target = (buf.capacity() * 2).clamp(needed, soft_cap.max(needed));
        buf.reserve_exact(target - buf.len());
    }
}
