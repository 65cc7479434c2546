//! Opening and closing a loop's connection slots: accepting on the
//! listener under `--max-connections` and `--max-connections-per-ip`,
//! refusing at accept (lingering while fewer than
//! [`MAX_LINGERING_REFUSALS`] are), registering a connection in a slot,
//! and closing a slot with what it was counted against.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use mio::net::TcpStream;
use mio::{Interest, Poll, Token};

use super::{Admitted, Loop, Slot, FIRST_CONN};
use crate::http::Response;
use crate::server::admission::{budget_key, connection_key};
use crate::server::conn::{Conn, Ctx, Fallback, ReadUntil};

/// Connections refused at accept (past `--max-connections` or
/// `--max-connections-per-ip`) that one loop keeps open while their answer
/// is written and they linger (see
/// [`crate::server::conn::LINGER_TIMEOUT`]), on top of the connections it
/// serves. Default 256; past it a refused connection gets its answer in
/// one `write` and is closed at once.
pub const MAX_LINGERING_REFUSALS: usize = 256;

impl Loop {
    pub(super) fn accept(&mut self, poll: &Poll) {
        loop {
            let Some(listener) = &self.listener else {
                return;
            };
            match listener.accept() {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let key = connection_key(&peer, &self.options.trusted_proxies);
                    // Past the per-address cap first: a connection refused
                    // for its address never costs another its place.
                    let refusal = if key.is_some_and(|k| !self.per_address.admit(k)) {
                        Some((Fallback::TooManyFromAddress, "too_many_connections_per_ip"))
                    } else if self.open_total.fetch_add(1, Ordering::Relaxed)
                        >= self.options.max_connections
                        && !self.make_room(poll)
                    {
                        self.open_total.fetch_sub(1, Ordering::Relaxed);
                        if let Some(key) = key {
                            self.per_address.release(key);
                        }
                        Some((Fallback::Overloaded, "too_many_connections"))
                    } else {
                        None
                    };
                    if let Some((fallback, reason)) = refusal {
                        let response = self.handler.fallback(fallback);
                        crate::metrics::METRICS.rejected(reason);
                        self.refuse_at_accept(poll, stream, peer, response);
                        continue;
                    }
                    let mut conn =
                        Conn::with_budget(peer, Instant::now(), Arc::clone(&self.budget));
                    conn.set_budget_key(budget_key(&peer, &self.options.trusted_proxies));
                    if !self.add(poll, stream, conn, Admitted::Served(key)) {
                        if let Some(key) = key {
                            self.per_address.release(key);
                        }
                        self.open_total.fetch_sub(1, Ordering::Relaxed);
                        continue;
                    }
                    crate::metrics::METRICS.connections(1);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }

    /// Registers `conn` in a free slot and drives it once (data may
    /// already be waiting: readiness is edge-triggered); false when it
    /// cannot be registered.
    fn add(&mut self, poll: &Poll, mut stream: TcpStream, conn: Conn, admitted: Admitted) -> bool {
        let index = self.free.pop().unwrap_or_else(|| self.slots.push_vacant());
        if poll
            .registry()
            .register(&mut stream, Token(index + FIRST_CONN), Interest::READABLE)
            .is_err()
        {
            self.free.push(index);
            return false;
        }
        self.slots[index] = Some(Slot {
            conn,
            stream,
            generation: GENERATION.next(),
            writable: false,
            admitted,
            idle_mark: None,
        });
        self.open += 1;
        self.on_ready(poll, index, Some(ReadUntil::Short));
        true
    }

    /// Answers a connection refused at accept: as a lingering connection
    /// while fewer than [`MAX_LINGERING_REFUSALS`] are, otherwise with one
    /// write and an immediate close.
    fn refuse_at_accept(
        &mut self,
        poll: &Poll,
        mut stream: TcpStream,
        peer: std::net::SocketAddr,
        response: Response,
    ) {
        if self.refused_open >= MAX_LINGERING_REFUSALS {
            use std::io::Write;
            let mut out = crate::http::outgoing::Outgoing::new();
            response.encode(false, false, false, self.date.now(), &mut out);
            let _ = stream.write(&out.to_vec());
            return;
        }
        let ctx = Ctx {
            log: &self.log,
            limits: &self.options.limits,
            date: self.date.now(),
            now: Instant::now(),
            draining: self.draining_since.is_some(),
        };
        let conn = Conn::refused(peer, response, Arc::clone(&self.budget), &ctx);
        self.refused_open += 1;
        if !self.add(poll, stream, conn, Admitted::Refused) {
            self.refused_open -= 1;
        }
    }

    pub(super) fn close(&mut self, poll: &Poll, index: usize) {
        if let Some(mut slot) = self.slots[index].take() {
            if slot.idle_mark.is_some() {
                self.idle.remove(index);
                self.publish_idle();
            }
            let _ = poll.registry().deregister(&mut slot.stream);
            self.free.push(index);
            self.open -= 1;
            match slot.admitted {
                Admitted::Served(key) => {
                    self.open_total.fetch_sub(1, Ordering::Relaxed);
                    if let Some(key) = key {
                        self.per_address.release(key);
                    }
                    crate::metrics::METRICS.connections(-1);
                }
                Admitted::Refused => self.refused_open -= 1,
            }
        }
    }
}

/// Slot generations: unique per accepted connection.
struct GenerationCounter(std::sync::atomic::AtomicU32);

impl GenerationCounter {
    fn next(&self) -> u32 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

static GENERATION: GenerationCounter = GenerationCounter(std::sync::atomic::AtomicU32::new(1));
