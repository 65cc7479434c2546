//! The mio event loop, connection state machine and worker pool.
