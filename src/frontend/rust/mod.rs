//! Rust front end.
