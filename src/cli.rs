//! Command-line parsing.
