//! A connection's share of the server-wide memory budget
//! ([`super::super::admission::MemoryBudget`]): the reservation of the body
//! being read and the charge for unsent output.

use super::Conn;
use crate::server::admission::UNBUDGETED_BODY_BYTES;

/// Bytes a chunked body reserves from the memory budget at a time, as it
/// grows past [`UNBUDGETED_BODY_BYTES`]. Default 64 KiB.
pub(super) const CHUNKED_RESERVE_STEP: usize = 64 * 1024;

impl Conn {
    /// Brings the budget's charge for unsent output in line with it.
    pub(super) fn sync_output_charge(&mut self) {
        let now = self.out.len();
        if now > self.charged_out {
            self.budget
                .force_take_for(self.budget_key, now - self.charged_out);
        } else {
            self.budget
                .give_for(self.budget_key, self.charged_out - now);
        }
        self.charged_out = now;
    }

    /// Makes sure `total` body bytes are reserved (bodies up to
    /// [`UNBUDGETED_BODY_BYTES`] need none); false when the budget cannot
    /// hold them.
    pub(super) fn reserve_body(&mut self, total: usize) -> bool {
        if total <= UNBUDGETED_BODY_BYTES || total <= self.reserved {
            return true;
        }
        if !self
            .budget
            .try_take_body(self.budget_key, &mut self.claim, total - self.reserved)
        {
            return false;
        }
        self.reserved = total;
        true
    }

    /// Charges this connection's buffered bytes to client address `key`'s
    /// share of the budget (`None`: a trusted proxy, no share). Set once,
    /// before anything is buffered.
    pub fn set_budget_key(&mut self, key: Option<std::net::IpAddr>) {
        debug_assert!(self.reserved == 0 && self.charged_out == 0);
        self.budget_key = key;
    }

    pub(super) fn release_body(&mut self) {
        self.budget
            .give_body(self.budget_key, &mut self.claim, self.reserved);
        self.reserved = 0;
    }

    /// Whether the budget took this connection's body reservation back (an
    /// address that came to hold some needed its share): the request is
    /// to be refused with `503`.
    pub fn body_revoked(&self) -> bool {
        self.claim.as_ref().is_some_and(|c| c.revoked())
    }
}
