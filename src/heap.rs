//! Giving heap memory back to the system after large tool calls, through
//! safe means only (`#![forbid(unsafe_code)]`: no call into mimalloc's C
//! API).
//!
//! mimalloc keeps, per thread, the pages that thread's allocations used:
//! freed blocks go back to the thread's own pages, which return to the
//! shared arenas only when the thread allocates enough again or ends. A
//! worker that ran one large call and then idles (for up to
//! `server::workers::WORKER_IDLE_EXIT`) kept its call's pages resident, so
//! a burst of large calls over 60 workers left hundreds of MiB behind
//! (issue 32). Two remedies:
//!
//! - A worker whose call held at least [`RETIRE_AFTER_BYTES`] of the
//!   working budget ends after that call ([`retire_this_thread`], read by
//!   the pool with [`take_retire`]); the pool starts another on demand.
//!   The thread's end hands its pages back to the arenas (mimalloc's
//!   thread-done collection), where the next call reuses them.
//! - Freed arena memory is returned to the system (decommitted) once it
//!   has been free for mimalloc's purge delay (1 s by default,
//!   `MIMALLOC_PURGE_DELAY`), but only when some thread next frees a page
//!   or ends; an idle server does neither. After a retirement, a short
//!   thread ([`sweep_later`]) waits [`SWEEP_DELAY`] and ends, and its end
//!   returns what has expired by then.
//! - An ended thread's stack is released, not kept for reuse: the pool
//!   detaches its workers, and glibc's stack cache is set to 0
//!   ([`STACK_CACHE_TUNABLE`], through the same one re-execution as the
//!   purge delay, [`set_heap_options`]).

/// The environment variable of mimalloc's purge delay, read once when the
/// process starts.
pub const PURGE_DELAY_VAR: &str = "MIMALLOC_PURGE_DELAY";

/// The purge delay xmd runs with unless the environment sets one: 0 ms,
/// memory freed back to mimalloc's arenas is returned to the system at
/// once. With mimalloc's default (1 s) the memory of calls that ended
/// stayed resident while the next ones ran: a burst of 60 large calls and
/// 30 posts of 3.9 MB peaked at 178 MiB with the default and at 90 MiB
/// with 0 (tests/memory_budget.rs, release build).
pub const PURGE_DELAY_MS: &str = "0";

/// glibc's tunables variable, read once when the process starts.
pub const GLIBC_TUNABLES_VAR: &str = "GLIBC_TUNABLES";

/// The tunable of glibc's cache of ended threads' stacks, and the bytes
/// xmd lets it keep unless [`GLIBC_TUNABLES_VAR`] names it: 0. glibc keeps
/// up to 40 MiB of stacks for reuse, each with the top of its stack (the
/// thread's TLS and last frames, 24 KiB of a worker's 256 KiB) resident; a
/// burst that retired 60 workers left 1.4 MiB of them behind
/// (tests/memory_budget.rs). Workers start rarely (a pool keeps its
/// threads; only a call that held [`RETIRE_AFTER_BYTES`] ends one), so a
/// fresh stack per start costs nothing measurable.
pub const STACK_CACHE_TUNABLE: &str = "glibc.pthread.stack_cache_size=0";

/// The environment variables (name, value) this process should have been
/// started with and was not: [`PURGE_DELAY_VAR`] when unset, and on glibc
/// [`GLIBC_TUNABLES_VAR`] with [`STACK_CACHE_TUNABLE`] appended when it
/// does not set the stack cache already. `get` reads the environment.
pub fn missing_heap_env(
    get: impl Fn(&str) -> Option<std::ffi::OsString>,
    glibc: bool,
) -> Vec<(&'static str, std::ffi::OsString)> {
    let mut set = Vec::new();
    if get(PURGE_DELAY_VAR).is_none() {
        set.push((PURGE_DELAY_VAR, PURGE_DELAY_MS.into()));
    }
    if glibc {
        let name = STACK_CACHE_TUNABLE.split('=').next().unwrap_or_default();
        match get(GLIBC_TUNABLES_VAR) {
            None => set.push((GLIBC_TUNABLES_VAR, STACK_CACHE_TUNABLE.into())),
            Some(t)
                if !t
                    .to_string_lossy()
                    .split(':')
                    .any(|kv| kv.split('=').next() == Some(name)) =>
            {
                let mut t = t;
                if !t.is_empty() {
                    t.push(":");
                }
                t.push(STACK_CACHE_TUNABLE);
                set.push((GLIBC_TUNABLES_VAR, t));
            }
            Some(_) => {}
        }
    }
    set
}

/// Runs this program again, the same arguments and process id, with the
/// allocator settings [`missing_heap_env`] names, when the environment
/// does not have them: mimalloc and glibc read them before `main`, and
/// only their C APIs (unsafe) change them later. Returns when it did not
/// (nothing was missing, or the program's path is unknown, or the exec
/// failed: the server then runs with the defaults).
#[cfg(all(unix, feature = "mimalloc"))]
pub fn set_heap_options() {
    use std::os::unix::process::CommandExt;
    let set = missing_heap_env(|k| std::env::var_os(k), cfg!(target_env = "gnu"));
    if set.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    let _failed = cmd.args(args).envs(set).exec();
}

/// Without mimalloc there is nothing to set.
#[cfg(not(all(unix, feature = "mimalloc")))]
pub fn set_heap_options() {}

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Bytes the upstream answer cache holds, as it counts them against
/// `--cache-bytes` (bodies, keys and 256 per entry): the gauge
/// `xmd_cache_bytes`. Set by `x::cache` whenever it changes.
pub static UPSTREAM_CACHE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Bytes the tool result cache holds, as it counts them against half of
/// `--cache-bytes` (twice the reply, its key and 256 per entry): the gauge
/// `xmd_result_cache_bytes`. Set by `mcp::results` whenever it changes.
pub static RESULT_CACHE_BYTES: AtomicUsize = AtomicUsize::new(0);
use std::time::Duration;

/// Working-budget bytes (`x::memory`) a call must have held for its worker
/// to end after it: 8 MiB (a call that read about 700 KB of upstream
/// answers). Smaller calls leave little behind, and ending a thread per
/// call would cost its start (tens of microseconds) on every call.
pub const RETIRE_AFTER_BYTES: usize = 8 * 1024 * 1024;

/// How long after a retirement the sweeping thread ends: 1.5 s, past
/// mimalloc's default purge delay of 1 s.
pub const SWEEP_DELAY: Duration = Duration::from_millis(1500);

thread_local! {
    static RETIRE: Cell<bool> = const { Cell::new(false) };
}

/// Asks that this thread end once its current job is done (a no-op on a
/// thread that no pool runs).
pub fn retire_this_thread() {
    RETIRE.with(|r| r.set(true));
}

/// Whether this thread was asked to end (clearing the request).
pub fn take_retire() -> bool {
    RETIRE.with(|r| r.replace(false))
}

/// Retirements so far; a sweep that ends sees whether more came meanwhile.
static RETIRED: AtomicU64 = AtomicU64::new(0);
/// A sweeping thread is waiting.
static SWEEPING: AtomicBool = AtomicBool::new(false);

/// Counts a retirement and makes sure a sweeping thread ends
/// [`SWEEP_DELAY`] after it (one at a time; one that ends while more came
/// starts the next).
pub fn sweep_later() {
    RETIRED.fetch_add(1, Ordering::SeqCst);
    if SWEEPING.swap(true, Ordering::SeqCst) {
        return;
    }
    spawn_sweep();
}

fn spawn_sweep() {
    let seen = RETIRED.load(Ordering::SeqCst);
    let started = std::thread::Builder::new()
        .name("xmd-sweep".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            std::thread::sleep(SWEEP_DELAY);
            SWEEPING.store(false, Ordering::SeqCst);
            if RETIRED.load(Ordering::SeqCst) != seen && !SWEEPING.swap(true, Ordering::SeqCst) {
                spawn_sweep();
            }
            // Ending is the point: the thread's end runs the allocator's
            // collection, which purges the arena memory freed long enough.
        });
    if started.is_err() {
        SWEEPING.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_environment_is_completed_once_and_kept_when_given() {
        use std::ffi::OsString;
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| OsString::from(p.1))
        };
        assert_eq!(
            missing_heap_env(env(&[]), true),
            vec![
                ("MIMALLOC_PURGE_DELAY", OsString::from("0")),
                (
                    "GLIBC_TUNABLES",
                    OsString::from("glibc.pthread.stack_cache_size=0")
                ),
            ]
        );
        assert_eq!(
            missing_heap_env(env(&[]), false),
            vec![("MIMALLOC_PURGE_DELAY", OsString::from("0"))]
        );
        // Other tunables are kept, the stack cache appended.
        assert_eq!(
            missing_heap_env(
                env(&[
                    ("MIMALLOC_PURGE_DELAY", "10"),
                    ("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
                ]),
                true
            ),
            vec![(
                "GLIBC_TUNABLES",
                OsString::from("glibc.malloc.arena_max=2:glibc.pthread.stack_cache_size=0")
            )]
        );
        // What the operator set stays; after the one exec nothing is missing.
        assert!(missing_heap_env(
            env(&[
                ("MIMALLOC_PURGE_DELAY", "0"),
                ("GLIBC_TUNABLES", "glibc.pthread.stack_cache_size=1048576"),
            ]),
            true
        )
        .is_empty());
        assert_eq!(
            missing_heap_env(
                env(&[("MIMALLOC_PURGE_DELAY", "0"), ("GLIBC_TUNABLES", "")]),
                true
            ),
            vec![(
                "GLIBC_TUNABLES",
                OsString::from("glibc.pthread.stack_cache_size=0")
            )]
        );
    }

    #[test]
    fn a_retire_request_is_per_thread_and_read_once() {
        assert!(!take_retire());
        retire_this_thread();
        assert!(!std::thread::spawn(take_retire).join().unwrap());
        assert!(take_retire());
        assert!(!take_retire());
    }
}
