//! One connection's step (write, read, feed its exchange) and how its
//! failures read as the blocking client's (`driver.rs` acts on them).

use std::io;
use std::sync::Arc;
use std::time::Instant;

use super::super::conn::ConnError;
use super::super::wire::WireError;
use super::room::grant;
use super::{Exchange, Slot, Timer};
use crate::x::memory::{Reservation, WorkBudget};
use crate::x::restart::Need;
use crate::x::upstream::{FetchError, UpstreamResponse};

/// What a connection's step leaves to do.
pub(super) enum Next {
    /// Wait for readiness.
    Wait,
    /// The answer's head is in and its body waits, unread, for room in
    /// the working budget (`crate::x::memory`).
    Room,
    /// Close it (an idle connection the peer closed or wrote to).
    Close,
    /// It read [`MAX_UPSTREAM_READS_PER_TURN`] pieces and its answer is
    /// not done: the socket may hold more, and no new readiness edge
    /// comes for it, so the driver steps it again next turn.
    Yield,
    /// It failed.
    Failed(FailedWith),
    /// Its exchange answered (the exchange's timer); whether it may carry
    /// another; the room its body is counted in.
    Answered(
        Need,
        UpstreamResponse,
        bool,
        (Instant, Timer),
        Option<Reservation>,
    ),
}

/// Pieces ([`super::super::conn::READ_BYTES`], 16 KiB) one connection
/// reads per turn of its loop before it yields: 16, up to 256 KiB. Past
/// it, with the answer not done, the connection yields ([`Next::Yield`]):
/// the loop serves its other connections and timers first and comes back
/// to it at once. Without it, an upstream that sent faster than the loop
/// parsed (endless `100 Continue`, 1-byte chunks) held its loop, every
/// client connection on it and its own deadline until it paused: a
/// `tools/list` waited 51 s, the call answered at 58 s, past
/// `--call-timeout`.
pub const MAX_UPSTREAM_READS_PER_TURN: usize = 16;

/// Writes, reads and feeds the exchange of one connection.
/// A body whose head came with nothing waiting for room is counted in
/// `work` at once (`room::grant`) and read on from the same piece; only
/// a body that finds no room waits, unread, for the driver
/// (`Driver::make_room`).
pub(super) fn step(s: &mut Slot, scratch: &mut [u8], work: Option<&Arc<WorkBudget>>) -> Next {
    // A body waiting for room is not read: the socket is left alone.
    if waits_for_room(s) {
        return Next::Room;
    }
    if let Err(e) = s.conn.flush() {
        return Next::Failed(FailedWith::Conn(e));
    }
    // Bytes after a complete answer: the connection carries no other.
    let mut rest = false;
    let mut reads = 0;
    loop {
        let Some(ex) = s.exchange.as_mut() else {
            // Idle: an upstream sends nothing unasked; a close or stray
            // bytes end the connection.
            return match s.conn.read_chunk(scratch) {
                Err(e) => Next::Failed(FailedWith::Conn(e)),
                Ok(0) if !s.conn.is_eof() && !s.conn.has_input() => Next::Wait,
                Ok(_) => Next::Close,
            };
        };
        // What an earlier read left (a head or chunk line not whole, or a
        // body that waited for room) goes first, alone.
        if s.conn.has_input() {
            let mut kept = s.conn.take_input();
            match feed(ex, &kept, work) {
                Err(e) => return Next::Failed(FailedWith::Wire(e)),
                Ok(used) if used < kept.len() && !ex.reader.is_done() => {
                    kept.drain(..used);
                    s.conn.unread(kept);
                }
                Ok(used) => rest |= used < kept.len(),
            }
        }
        if ex.reader.needs_room().is_some() {
            return Next::Room;
        }
        if ex.reader.is_done() {
            break;
        }
        if reads == MAX_UPSTREAM_READS_PER_TURN {
            return Next::Yield;
        }
        reads += 1;
        // Then the socket, a piece at a time, fed in place: a gated
        // reader looks at the head before more than a piece of the body
        // is read.
        let n = match s.conn.read_chunk(scratch) {
            Ok(n) => n,
            Err(e) => return Next::Failed(FailedWith::Conn(e)),
        };
        if n == 0 {
            break;
        }
        let piece = &scratch[..n];
        if s.conn.has_input() {
            // Completes what waits: read together, above.
            s.conn.keep(piece);
            continue;
        }
        let used = match feed(ex, piece, work) {
            Ok(used) => used,
            Err(e) => return Next::Failed(FailedWith::Wire(e)),
        };
        if used < n && !ex.reader.is_done() {
            s.conn.keep(&piece[used..]);
        } else {
            rest |= used < n;
        }
        if ex.reader.needs_room().is_some() {
            return Next::Room;
        }
        if ex.reader.is_done() {
            break;
        }
    }
    if !rest && s.exchange.as_ref().is_some_and(|e| e.reader.is_done()) {
        // On to what the socket holds now: readiness is edge-triggered,
        // so no new event comes for a close (or stray bytes) that arrived
        // with the answer. Anything there ends the connection's reuse.
        rest = !matches!(s.conn.read_chunk(scratch), Ok(0));
    }
    let Some(ex) = s.exchange.as_mut() else {
        return Next::Wait;
    };
    if !ex.reader.is_done() && s.conn.is_eof() {
        if let Err(e) = ex.reader.eof() {
            return Next::Failed(FailedWith::Wire(e));
        }
    }
    if !ex.reader.is_done() {
        return Next::Wait;
    }
    let Some(ex) = s.exchange.take() else {
        return Next::Wait;
    };
    let timer = (ex.deadline, Timer::Exchange(s.index, ex.id));
    match ex.reader.finish() {
        Some(reply) => {
            let reusable = reply.reusable && !rest && !s.conn.is_eof();
            Next::Answered(ex.need, reply.response, reusable, timer, ex.room)
        }
        None => Next::Failed(FailedWith::Wire(WireError::Incomplete)),
    }
}

/// Feeds `bytes` to the exchange's reader; returns the bytes it used. A
/// head that comes while nothing of the exchange waits for room is given
/// its body's room at once (`room::grant`), and the body is read on from
/// the same bytes, without keeping them.
fn feed(
    ex: &mut Exchange,
    bytes: &[u8],
    work: Option<&Arc<WorkBudget>>,
) -> Result<usize, WireError> {
    let mut used = ex.reader.feed(bytes)?;
    if let Some(announced) = ex.reader.needs_room() {
        if ex.room_since.is_none() && grant(ex, announced, work) {
            used += ex.reader.feed(&bytes[used..])?;
        }
    }
    Ok(used)
}

/// Whether the exchange of `s` waits for room for its body.
pub(super) fn waits_for_room(s: &Slot) -> bool {
    s.exchange
        .as_ref()
        .is_some_and(|e| e.reader.needs_room().is_some())
}

/// How a connection failed.
pub(super) enum FailedWith {
    Conn(ConnError),
    Wire(WireError),
}

/// A transport failure as the blocking client reported it, so the causes
/// read the same (`refused`, `reset`, `timeout`, `connect`, `network`).
pub(super) fn conn_error(e: &ConnError) -> FetchError {
    match e {
        ConnError::Io(io) if io.kind() == io::ErrorKind::TimedOut => FetchError::Timeout,
        ConnError::Io(io)
            if matches!(
                io.kind(),
                io::ErrorKind::ConnectionRefused
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::NotConnected
                    | io::ErrorKind::BrokenPipe
            ) =>
        {
            FetchError::Connect(io.to_string())
        }
        ConnError::Io(io) => FetchError::Other(io.to_string()),
        ConnError::Tls(m) => FetchError::Connect(format!("tls: {m}")),
    }
}
