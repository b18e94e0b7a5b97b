//! Front ends.
pub mod rust;
