//! One dependency for every service.
pub use ledger::*;
