//! Fresh ids carried in a send's dedup field (a pack's `[dedup_fields]`: SQS/SNS
//! `message_deduplication_id`, JetStream's `Nats-Msg-Id`, an `Idempotency-Key`
//! header): one minted per delivery of a received message republishes a
//! redelivery under a new id, which the receiver's dedup cannot match.

use super::{Callee, IdFlow};

/// A fresh id minted in a function and carried to a dedup field: by a send of its
/// own (`arg: None`), or handed as argument `arg` to the crate's function
/// `flow.sink_call`, which counts if that function puts the parameter in one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DedupId {
    pub flow: IdFlow,
    pub arg: Option<u32>,
    /// Minted after the function received a message (or in a handler given one):
    /// once per delivery.
    pub per_delivery: bool,
}

/// What a function tells about dedup fields: the fresh ids it carries into one,
/// the parameters it puts in one, and the calls into the crate it makes after it
/// received a message (what a delivery reaches).
#[derive(Clone, Debug, Default)]
pub struct DedupFacts {
    pub ids: Vec<DedupId>,
    /// Parameter indices (as in `Function::params`, `self` first) put in a dedup field.
    pub params: Vec<u32>,
    /// Parameters passed on to the crate's functions: parameter index, the call, and
    /// the argument (not counting `self`) it is given as (`send_event(id)` calling
    /// `publish(&c, id)`): a parameter counts if the function called puts that
    /// argument in a dedup field (followed by the rule).
    pub passes: Vec<(u32, Callee, u32)>,
    /// Calls of the crate's functions made once a message was received (or in a
    /// handler given one): what a delivery reaches.
    pub delivery_calls: Vec<Callee>,
}
