//! Fresh ids carried in a send's dedup field (the packs' `[dedup_fields]`), the
//! parameters a function puts in one, and the calls a delivery reaches: what the fresh-id rule
//! reads for a dedup id minted per delivery (`crate::ir::DedupFacts`).

use super::{Info, Lowerer};
use crate::ir::{Callee, DedupFacts, DedupId, IdFlow, Loc, ValueId};

/// What the lowering of one function gathers.
#[derive(Default)]
pub(super) struct DedupState {
    /// Where fresh ids put in a dedup field were generated.
    marked: Vec<Loc>,
    /// Values an argument of a dedup field mentions (parameters among them).
    vals: Vec<ValueId>,
    /// Where fresh ids generated after a message was received were generated.
    after_receive: Vec<Loc>,
    /// A message was received (a value with a message root exists); values up to
    /// `scanned` were looked at.
    received: bool,
    scanned: usize,
    facts: DedupFacts,
}

impl Lowerer<'_, '_> {
    /// Whether a message was received so far (a parameter holding one included).
    fn received_yet(&mut self) -> bool {
        if !self.dedup.received {
            let from = self.dedup.scanned.min(self.values.len());
            self.dedup.received = self.values[from..].iter().any(|v| v.msg_root.is_some());
            self.dedup.scanned = self.values.len();
        }
        self.dedup.received
    }

    /// A fresh id (or a clock reading) generated at `loc`: once per delivery if a
    /// message was received before.
    pub(super) fn note_minted(&mut self, loc: &Loc) {
        if self.received_yet() && !self.dedup.after_receive.contains(loc) {
            self.dedup.after_receive.push(loc.clone());
        }
    }

    /// The arguments of a call that fills a dedup field: a builder step the packs name
    /// (`message_deduplication_id(id)`), a path call they name
    /// (`Idempotent(key)`, by `path`), or a call whose first argument names a dedup
    /// header (`headers.insert("Nats-Msg-Id", id)`).
    pub(super) fn note_dedup_args(&mut self, name: &str, path: bool, args: &[Info]) {
        let d = &self.cx.apis.dedup_fields;
        let list = if path { &d.paths } else { &d.methods };
        let from = if list.iter().any(|m| m == name) {
            0
        } else if !path
            && args.len() >= 2
            && args[0]
                .str_lit
                .as_deref()
                .is_some_and(|h| d.headers.iter().any(|x| x.eq_ignore_ascii_case(h)))
        {
            1
        } else {
            return;
        };
        for a in &args[from..] {
            let vals: Vec<ValueId> = a.value.iter().chain(&a.mentions).copied().collect();
            if !a.fresh_blocked {
                let fresh = a.fresh.clone().or_else(|| {
                    vals.iter()
                        .find_map(|m| self.values[*m as usize].fresh.clone())
                });
                if let Some((l, _, _)) = fresh {
                    if !self.dedup.marked.contains(&l) {
                        self.dedup.marked.push(l);
                    }
                }
            }
            self.dedup.vals.extend(vals);
        }
    }

    /// A send (a publish, an external call) mentioning `mentions`: the fresh ids
    /// among them put in a dedup field are carried there.
    pub(super) fn note_dedup_send(&mut self, mentions: &[ValueId], loc: &Loc, text: &str) {
        if self.dedup.marked.is_empty() {
            return;
        }
        for m in mentions {
            let Some((idloc, idtext, _)) = self.values[*m as usize].fresh.clone() else {
                continue;
            };
            if !self.dedup.marked.contains(&idloc) {
                continue;
            }
            let per_delivery = self.dedup.after_receive.contains(&idloc);
            self.push_dedup_id(idloc, idtext, loc, text, None, None, per_delivery);
        }
    }

    /// A call of the crate's function: a delivery reaches it if a message was
    /// received; a fresh id handed to it counts if it puts that parameter in a dedup
    /// field (decided by the rule).
    pub(super) fn note_dedup_call(
        &mut self,
        callee: &Callee,
        args: &[Info],
        loc: &Loc,
        text: &str,
    ) {
        if self.received_yet() && !self.dedup.facts.delivery_calls.contains(callee) {
            self.dedup.facts.delivery_calls.push(callee.clone());
        }
        for (j, a) in args.iter().enumerate() {
            if a.fresh_blocked {
                continue;
            }
            let fresh = a.fresh.clone().or_else(|| {
                a.value
                    .iter()
                    .chain(&a.mentions)
                    .find_map(|m| self.values[*m as usize].fresh.clone())
            });
            if let Some((idloc, idtext, _)) = fresh {
                let per_delivery = self.dedup.after_receive.contains(&idloc);
                let callee = Some(callee.clone());
                self.push_dedup_id(
                    idloc,
                    idtext,
                    loc,
                    text,
                    callee,
                    Some(j as u32),
                    per_delivery,
                );
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push_dedup_id(
        &mut self,
        idgen: Loc,
        idgen_text: String,
        loc: &Loc,
        text: &str,
        sink_call: Option<Callee>,
        arg: Option<u32>,
        per_delivery: bool,
    ) {
        let id = DedupId {
            flow: IdFlow {
                idgen,
                idgen_text,
                sink: loc.clone(),
                sink_text: text.to_string(),
                retry: None,
                sink_call,
                hoist: None,
            },
            arg,
            per_delivery,
        };
        if !self.dedup.facts.ids.contains(&id) {
            self.dedup.facts.ids.push(id);
        }
    }

    /// The function's facts, its parameters (`self` first) given.
    pub(super) fn dedup_facts(&mut self, params: &[Option<ValueId>]) -> DedupFacts {
        let mut facts = std::mem::take(&mut self.dedup.facts);
        facts.params = params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_some_and(|v| self.dedup.vals.contains(&v)))
            .map(|(i, _)| i as u32)
            .collect();
        facts
    }
}
