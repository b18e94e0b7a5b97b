//! Front ends: turn source text into the delivery model (`crate::ir`). They never
//! decide whether something is a defect, and they never fail: a file that cannot be
//! read or parsed becomes an `InputError` and the rest is still lowered.

pub mod rust;
pub mod yaml;
