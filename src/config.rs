//! Settings with their defaults and units.
