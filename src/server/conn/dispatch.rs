//! From buffered bytes to requests: parsing heads and bodies (by length
//! or chunked), pausing for unsent output, and handing each complete
//! request to the handler.

use std::mem;

use super::{
    BodyState, CloseReason, Conn, Ctx, Handled, Handler, Job, Reading, State, BUDGET_SPENT,
    CHUNKED_RESERVE_STEP, MAX_PENDING_WRITE_BYTES, UNBUDGETED_BODY_BYTES,
};
use crate::http::chunked::ChunkedDecoder;
use crate::http::parse::{self, BodyFraming};
use crate::http::{Head, Method, Request};

impl Conn {
    /// Whether parsing paused for pending output that has since drained
    /// below the cap: call `process` again (buffered requests are waiting,
    /// and no readiness event will announce them).
    pub fn resume_pending(&self) -> bool {
        self.paused_for_output
            && (self.out.is_empty()
                || (self.out.len() <= MAX_PENDING_WRITE_BYTES
                    && !self.budget.spent_for(self.budget_key)))
    }

    /// Parses and dispatches buffered requests until one must wait for a
    /// worker (returned as a job) or no complete request remains.
    pub fn process(&mut self, handler: &dyn Handler, ctx: &Ctx) -> Option<Job> {
        loop {
            // Past the pending-output cap, or with output unsent while the
            // memory budget is spent, parse nothing more until the peer
            // reads.
            let spent = !self.out.is_empty() && self.budget.spent_for(self.budget_key);
            if self.out.len() > MAX_PENDING_WRITE_BYTES
                || (spent && matches!(self.state, State::Head))
            {
                self.paused_for_output = true;
                return None;
            }
            self.paused_for_output = false;
            if matches!(self.state, State::Body(_)) && self.body_revoked() {
                // Its reservation was taken back for another address's
                // share: the body is not read on.
                self.reject(BUDGET_SPENT, ctx);
                return None;
            }
            match mem::replace(&mut self.state, State::Head) {
                State::Head => {
                    if self.rbuf.is_empty() {
                        self.after_idle(ctx);
                        return None;
                    }
                    if self.head_started.is_none() {
                        self.head_started = Some(ctx.now);
                    }
                    match parse::try_parse_head(
                        &self.rbuf,
                        ctx.limits.max_head_bytes,
                        ctx.limits.max_headers,
                    ) {
                        Ok(None) => {
                            if self.read_eof {
                                self.state = State::Closing(CloseReason::PeerClosed);
                            }
                            return None;
                        }
                        Ok(Some((n, head))) => {
                            self.rbuf.drain(..n);
                            self.body_started = Some(ctx.now);
                            match parse::body_framing(&head, ctx.limits.max_body_bytes) {
                                Err(rejection) => {
                                    self.reject(rejection, ctx);
                                    return None;
                                }
                                Ok(BodyFraming::Empty) => {
                                    if let Some(job) = self.dispatch(head, Vec::new(), handler, ctx)
                                    {
                                        return Some(job);
                                    }
                                }
                                Ok(framing) => {
                                    let expects = parse::expects_continue(&head);
                                    if expects && self.rbuf.is_empty() {
                                        if let Some(refusal) = handler.check_head(&head) {
                                            self.refuse_head(&head, refusal, ctx);
                                            return None;
                                        }
                                    }
                                    if let BodyFraming::Length(n) = framing {
                                        if !self.reserve_body(n) {
                                            self.reject(BUDGET_SPENT, ctx);
                                            return None;
                                        }
                                    }
                                    if expects && self.rbuf.is_empty() {
                                        self.out.push_bytes(b"HTTP/1.1 100 Continue\r\n\r\n");
                                    }
                                    let body = match framing {
                                        BodyFraming::Length(n) => BodyState::Length(n),
                                        _ => BodyState::Chunked(ChunkedDecoder::new(
                                            ctx.limits.max_body_bytes,
                                        )),
                                    };
                                    self.state = State::Body(Box::new(Reading { head, body }));
                                }
                            }
                        }
                        Err(rejection) => {
                            self.reject(rejection, ctx);
                            return None;
                        }
                    }
                }
                State::Body(mut reading) => match &mut reading.body {
                    BodyState::Length(n) => {
                        let n = *n;
                        if self.rbuf.len() < n {
                            self.state = if self.read_eof {
                                State::Closing(CloseReason::PeerClosed)
                            } else {
                                State::Body(reading)
                            };
                            return None;
                        }
                        let rest = self.rbuf.split_off(n);
                        let body = mem::replace(&mut self.rbuf, rest);
                        if let Some(job) = self.dispatch(reading.head, body, handler, ctx) {
                            return Some(job);
                        }
                    }
                    BodyState::Chunked(decoder) => match decoder.feed(&self.rbuf) {
                        Err(rejection) => {
                            self.reject(rejection, ctx);
                            return None;
                        }
                        Ok(used) => {
                            self.rbuf.drain(..used);
                            let len = decoder.body_len();
                            let step = len.div_ceil(CHUNKED_RESERVE_STEP) * CHUNKED_RESERVE_STEP;
                            if len > UNBUDGETED_BODY_BYTES && !self.reserve_body(step) {
                                self.reject(BUDGET_SPENT, ctx);
                                return None;
                            }
                            if !decoder.is_done() {
                                self.state = if self.read_eof {
                                    State::Closing(CloseReason::PeerClosed)
                                } else {
                                    State::Body(reading)
                                };
                                return None;
                            }
                            let Reading { head, body } = *reading;
                            if let BodyState::Chunked(decoder) = body {
                                if let Some(job) =
                                    self.dispatch(head, decoder.into_body(), handler, ctx)
                                {
                                    return Some(job);
                                }
                            }
                        }
                    },
                },
                other => {
                    self.state = other;
                    return None;
                }
            }
        }
    }

    /// Hands one complete request to the handler.
    fn dispatch(
        &mut self,
        head: Head,
        body: Vec<u8>,
        handler: &dyn Handler,
        ctx: &Ctx,
    ) -> Option<Job> {
        let head_only = head.method == Method::Head;
        let keep_alive = head.keep_alive() && !ctx.draining;
        let http10 = head.minor_version == 0;
        self.head_started = None;
        self.body_started = None;
        if ctx.log.enabled() {
            self.current = Some((head.method.clone(), head.path().to_string(), ctx.now));
        }
        let request = Request {
            head,
            body,
            peer: self.peer,
        };
        let handled = handler.handle(request);
        // The body has been handed over (and, for every handler of this
        // server, parsed and dropped).
        self.release_body();
        match handled {
            Handled::Now(response) => {
                self.state = State::Head;
                self.queue(&response, head_only, keep_alive, http10, ctx);
                None
            }
            Handled::Later(job) => {
                self.cancel = job.cancel_flag();
                self.state = State::Waiting {
                    head_only,
                    keep_alive,
                    http10,
                };
                Some(job)
            }
        }
    }

    /// Releases buffers while idle, so an idle keep-alive connection holds
    /// no heap memory.
    fn after_idle(&mut self, _ctx: &Ctx) {
        if self.rbuf.is_empty() && self.rbuf.capacity() > 0 {
            self.rbuf = Vec::new();
        }
        if self.read_eof {
            self.state = State::Closing(CloseReason::PeerClosed);
        }
    }
}
