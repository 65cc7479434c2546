//! Answers: a response delivered for a waiting request, encoded into
//! the output queue (counted, logged, closing the connection when it
//! must), and written to the socket.

use std::io::{self, Write};
use std::time::Instant;

use super::{CloseReason, Conn, Ctx, State};
use crate::http::Response;

impl Conn {
    /// Delivers the response of the request that was waiting for a worker.
    /// Ignored when the connection is not waiting.
    pub fn complete(&mut self, response: Response, ctx: &Ctx) {
        if let State::Waiting {
            head_only,
            keep_alive,
            http10,
        } = self.state
        {
            self.cancel = None;
            self.state = State::Head;
            self.queue(
                &response,
                head_only,
                keep_alive && !ctx.draining,
                http10,
                ctx,
            );
        }
    }

    pub(super) fn queue(
        &mut self,
        response: &Response,
        head_only: bool,
        keep_alive: bool,
        http10: bool,
        ctx: &Ctx,
    ) {
        response.encode(head_only, keep_alive, http10, ctx.date, &mut self.out);
        self.sync_output_charge();
        let bytes = response.body.len();
        crate::metrics::METRICS.http(response.trace.route, response.status, bytes);
        if let Some((method, path, started)) = self.current.take() {
            ctx.log.record(&crate::server::log::Entry {
                peer: self.peer,
                method: &method,
                path: &path,
                status: response.status,
                bytes,
                duration: Instant::now().saturating_duration_since(started),
                trace: &response.trace,
            });
        }
        self.idle_since = ctx.now;
        if !keep_alive || response.close {
            let reason = if ctx.draining {
                CloseReason::Shutdown
            } else {
                CloseReason::ConnectionClose
            };
            self.state = State::Closing(reason);
            self.rbuf = Vec::new();
            self.release_body();
        }
    }

    /// Writes queued response bytes until done or `WouldBlock`.
    ///
    /// # Errors
    /// Socket errors other than `WouldBlock` and `Interrupted`; a write of
    /// zero bytes is `WriteZero`.
    pub fn write_to(&mut self, dst: &mut impl Write, now: Instant) -> io::Result<()> {
        while !self.out.is_empty() {
            match self.out.write_once(dst) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => self.write_blocked_since = None,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.write_blocked_since.get_or_insert(now);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.write_blocked_since = None;
        self.sync_output_charge();
        Ok(())
    }
}
