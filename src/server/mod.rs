//! The hand-rolled `mio` event loops: each accepts connections on the
//! shared listening socket, drives each of its [`conn::Conn`] state
//! machines on readiness, hands blocking jobs to the shared
//! [`workers::Pool`], writes completions back, sweeps deadlines once a
//! second, and shuts down gracefully on SIGTERM/SIGINT.
//!
//! This module knows HTTP framing only through `crate::http` and never
//! names MCP.

pub mod admission;
pub mod conn;
mod event_loop;
pub mod idle;
pub mod log;
pub mod slab;
pub mod work;
pub mod workers;

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use mio::net::TcpListener;
use mio::{Interest, Poll, Waker};

use crate::config::Limits;
use conn::Handler;
use event_loop::{run_loop, Loop, Shared, LISTENER, SIGNALS, WAKER};
use workers::Pool;

/// The signals the server handles (with [`ServerOptions::handle_signals`]):
///
/// | Signal | Effect |
/// | --- | --- |
/// | SIGTERM, SIGINT | graceful shutdown: stop accepting, finish in-flight requests (answered with `Connection: close`) within `--shutdown-grace`, exit 0 |
/// | SIGHUP | ignored (a closed terminal or a stray reload never stops the server) |
/// | SIGQUIT | immediate exit, status [`SIGQUIT_EXIT_STATUS`], no drain and no core dump |
pub const HANDLED_SIGNALS: [i32; 4] = [
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// The listening socket's accept queue: connections the kernel has
/// completed and no event loop has accepted yet. Default 4096 (the kernel
/// caps it at `net.core.somaxconn`, 4096 on current Linux); std's 128
/// overflowed when thousands of clients connected at once: the kernel
/// dropped the handshakes past it and the clients' requests waited 1 s or
/// 3 s for a retransmission (bench row (g), 10,000 calls at once).
pub const LISTEN_BACKLOG: i32 = 4096;

/// Exit status after SIGQUIT: 128 + 3, as a shell reports a process that
/// a SIGQUIT ended.
pub const SIGQUIT_EXIT_STATUS: i32 = 131;

/// What a received signal asks the server to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignalAction {
    /// Nothing (SIGHUP).
    Ignore,
    /// Graceful shutdown (SIGTERM, SIGINT).
    Drain,
    /// Exit at once (SIGQUIT).
    Exit,
}

impl SignalAction {
    pub(crate) fn of(signal: i32) -> SignalAction {
        match signal {
            signal_hook::consts::SIGQUIT => SignalAction::Exit,
            signal_hook::consts::SIGHUP => SignalAction::Ignore,
            _ => SignalAction::Drain,
        }
    }
}

/// Event-loop settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// HTTP limits.
    pub limits: Limits,
    /// Event-loop threads (at least 1; see
    /// [`crate::config::DEFAULT_EVENT_LOOPS`]).
    pub event_loops: usize,
    /// Most worker threads (started on demand; see [`workers::WORKER_IDLE_EXIT`]).
    pub workers: usize,
    /// Worker queue slots.
    pub queue: usize,
    /// Most open connections.
    pub max_connections: usize,
    /// Most open connections per client address (0: no cap); see
    /// [`crate::config::DEFAULT_MAX_CONNECTIONS_PER_IP`].
    pub max_connections_per_ip: usize,
    /// Reverse proxies (`--trusted-proxies`): their connections carry many
    /// clients, so `max_connections_per_ip` does not count them (their
    /// clients are told apart per request, by the forwarded address).
    pub trusted_proxies: crate::config::proxies::TrustedProxies,
    /// Server-wide budget of buffered bytes (0: none); see
    /// [`crate::config::DEFAULT_MAX_BUFFERED_BYTES`].
    pub max_buffered_bytes: usize,
    /// Most of `max_buffered_bytes` one client address may hold (0: no
    /// share); `None`: [`admission::MemoryBudget::address_share`].
    pub max_buffered_bytes_per_ip: Option<usize>,
    /// Graceful shutdown deadline.
    pub shutdown_grace: Duration,
    /// Handle [`HANDLED_SIGNALS`] (SIGTERM and SIGINT drain, SIGHUP is
    /// ignored, SIGQUIT exits at once).
    pub handle_signals: bool,
    /// Access-log format.
    pub log_format: crate::config::LogFormat,
    /// The event-loop upstream client (`--upstream-io loop`, the
    /// default): the loops make the upstream requests and the workers run
    /// tool calls as restartable runs. `None` (`--upstream-io threads`,
    /// the fallback): the tools' upstream blocks on the workers.
    pub upstream: Option<Arc<crate::x::loopio::Transport>>,
}

/// Stops a running server from another thread.
#[derive(Clone)]
pub struct ShutdownHandle {
    flag: Arc<AtomicBool>,
    wakers: Vec<Arc<Waker>>,
}

impl ShutdownHandle {
    /// Whether shutdown has started.
    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Starts graceful shutdown (of every event loop).
    pub fn shutdown(&self) {
        self.flag.store(true, Ordering::SeqCst);
        for waker in &self.wakers {
            let _ = waker.wake();
        }
    }
}

/// One event loop's poll, its handle on the listening socket, and the
/// waker other threads use to interrupt its poll.
struct LoopIo {
    poll: Poll,
    listener: TcpListener,
    waker: Arc<Waker>,
}

/// A bound, not yet running server.
pub struct Server {
    /// One per event loop; the first also watches the signals.
    loops: Vec<LoopIo>,
    shutdown: Arc<AtomicBool>,
    options: ServerOptions,
    signals: Option<signal_hook_mio::v1_0::Signals>,
}

impl Server {
    /// Binds `addr` and prepares one poll per event loop, each watching
    /// the same listening socket (whichever loop accepts a connection
    /// serves it).
    ///
    /// # Errors
    /// When the address cannot be bound or a poll cannot be created.
    pub fn bind(addr: SocketAddr, options: ServerOptions) -> io::Result<Server> {
        let bound = std::net::TcpListener::bind(addr)?;
        // A second listen() sets the accept queue's length (Linux, BSDs).
        socket2::SockRef::from(&bound).listen(LISTEN_BACKLOG)?;
        bound.set_nonblocking(true)?;
        let mut listeners = Vec::with_capacity(options.event_loops.max(1));
        for _ in 1..options.event_loops.max(1) {
            listeners.push(bound.try_clone()?);
        }
        listeners.insert(0, bound);
        let mut loops = Vec::with_capacity(listeners.len());
        for std_listener in listeners {
            let poll = Poll::new()?;
            let mut listener = TcpListener::from_std(std_listener);
            poll.registry()
                .register(&mut listener, LISTENER, Interest::READABLE)?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
            loops.push(LoopIo {
                poll,
                listener,
                waker,
            });
        }
        // Registered here, before anyone learns the address, so a SIGTERM
        // that races start-up still shuts down gracefully.
        let signals = if options.handle_signals {
            let mut s = signal_hook_mio::v1_0::Signals::new(HANDLED_SIGNALS)?;
            loops[0]
                .poll
                .registry()
                .register(&mut s, SIGNALS, Interest::READABLE)?;
            Some(s)
        } else {
            None
        };
        Ok(Server {
            loops,
            shutdown: Arc::new(AtomicBool::new(false)),
            options,
            signals,
        })
    }

    /// The bound address (with the real port when bound to port 0).
    ///
    /// # Errors
    /// When the socket reports none.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.loops[0].listener.local_addr()
    }

    /// A handle that stops the server gracefully.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            flag: Arc::clone(&self.shutdown),
            wakers: self.loops.iter().map(|l| Arc::clone(&l.waker)).collect(),
        }
    }

    /// Runs every event loop (the first on this thread) until shutdown
    /// completes, then stops the workers.
    ///
    /// # Errors
    /// When polling fails, or a loop thread or the worker pool cannot start.
    pub fn run(self, handler: Arc<dyn Handler>) -> io::Result<()> {
        let stop = self.shutdown_handle();
        let Server {
            loops,
            options,
            signals,
            ..
        } = self;
        let answers = Arc::clone(&handler);
        let pool = Pool::start(
            options.workers,
            options.queue,
            stop.wakers.clone(),
            Arc::new(move || answers.fallback(conn::Fallback::Panicked)),
        )?;
        if let Some(t) = &options.upstream {
            t.attach(stop.wakers.clone());
            pool.set_restartable();
        }
        let budget = admission::MemoryBudget::fair(
            options.max_buffered_bytes,
            options.max_buffered_bytes_per_ip.unwrap_or_else(|| {
                admission::MemoryBudget::address_share(
                    options.max_buffered_bytes,
                    options.limits.max_body_bytes,
                )
            }),
            options.limits.max_body_bytes,
        );
        // Bodies taken back for a newcomer's share are refused by their
        // loops at once, not at the next sweep.
        let wakers = stop.wakers.clone();
        budget.set_on_revoke(move || {
            for w in &wakers {
                let _ = w.wake();
            }
        });
        let shared = Shared {
            open_total: Arc::new(AtomicUsize::new(0)),
            per_address: Arc::new(admission::PerAddress::new(options.max_connections_per_ip)),
            budget: Arc::new(budget),
            idle: stop
                .wakers
                .iter()
                .map(|w| idle::LoopIdle::new(Arc::clone(w)))
                .collect(),
            epoch: std::time::Instant::now(),
        };
        let new_loop = |listener: TcpListener, pool: Pool, me: usize| {
            Loop::new(
                listener,
                pool,
                Arc::clone(&handler),
                options.clone(),
                &shared,
                me,
            )
        };
        let mut loops = loops.into_iter();
        let first = loops.next().expect("at least one event loop");
        let mut threads = Vec::new();
        let mut started = Ok(());
        for (i, io) in loops.enumerate() {
            let lp = new_loop(io.listener, pool.lane(i + 1), i + 1);
            let handle = stop.clone();
            let spawned = thread::Builder::new()
                .name("xmd-loop".into())
                .spawn(move || {
                    // A loop that fails or panics stops the whole server
                    // (as the first loop's would), rather than leaving it
                    // to run on with fewer loops.
                    let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_loop(io.poll, lp, None, &handle).0
                    }))
                    .unwrap_or_else(|_| Err(io::Error::other("an event loop panicked")));
                    if ended.is_err() {
                        handle.shutdown();
                    }
                    ended
                });
            match spawned {
                Ok(t) => threads.push(t),
                Err(e) => {
                    started = Err(e);
                    stop.shutdown();
                    break;
                }
            }
        }
        let lp = new_loop(first.listener, pool, 0);
        let (result, pool) = run_loop(first.poll, lp, signals, &stop);
        // One loop failing stops the others.
        stop.shutdown();
        let mut result = started.and(result);
        for t in threads {
            result = result.and(
                t.join()
                    .unwrap_or_else(|_| Err(io::Error::other("an event loop panicked"))),
            );
        }
        pool.shutdown();
        result
    }
}
