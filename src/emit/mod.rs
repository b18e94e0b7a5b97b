//! Output formats. Only this module knows how findings are printed.
//!
//! OWNER: shell helper.
