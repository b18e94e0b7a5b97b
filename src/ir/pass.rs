//! A relay's passes: loops that run pass after pass, and fresh ids minted per pass
//! (docs/what-is-analyzed.md, "Outbox"; SPEC §2, "relay re-reads are retries").

use super::{IdFlow, Loc, Node};

/// A loop that runs pass after pass (`loop`, `while running`) and receives no
/// message itself. Whether a pass re-reads rows and sends them (a relay's poll
/// loop) may depend on the functions it calls: the analysis decides.
#[derive(Clone, Debug)]
pub struct PollLoop {
    pub loc: Loc,
    /// The loop's first characters, for the label.
    pub text: String,
    pub body: Node,
}

/// A fresh id that reaches a send (a publish, an external call, a call into the
/// crate) outside any retry: a new id per pass if the function runs once per pass of
/// a relay's poll loop, or if `poll`, the poll loop it sits in, proves to be one.
#[derive(Clone, Debug)]
pub struct PassIdFlow {
    pub flow: IdFlow,
    pub poll: Option<Loc>,
}
