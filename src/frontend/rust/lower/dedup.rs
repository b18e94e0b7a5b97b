//! Fresh ids carried in a send's dedup field (the packs' `[dedup_fields]`), the
//! parameters a function puts in one, and the calls a delivery reaches: what the fresh-id rule
//! reads for a dedup id minted per delivery (`crate::ir::DedupFacts`).

use super::{FastMap, Info, Lowerer};
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
    /// Fresh ids generated in a loop before any message was received, with the loop:
    /// once per delivery if that loop's turn then receives one.
    in_loop: Vec<(Loc, u32)>,
    /// The values each value was made from (a `let` of an expression mentioning
    /// them, a struct holding them, a field of one): how a parameter reaches what a
    /// dedup field or a call is given.
    sources: FastMap<ValueId, Vec<ValueId>>,
    /// Calls of the crate's functions, with the values argument `arg` mentions:
    /// a parameter among them is passed on to that function.
    passed: Vec<(Vec<ValueId>, Callee, u32)>,
    /// Struct literals bound to a value, by field, with the values each field
    /// mentions; and the fields taken from them, with the struct.
    parts: FastMap<ValueId, Vec<(String, Vec<ValueId>)>>,
    field_of: FastMap<ValueId, ValueId>,
    facts: DedupFacts,
}

impl Lowerer<'_, '_> {
    /// Whether a message was received so far (a parameter holding one included).
    /// A receive in the turn of a loop a fresh id was generated in before it (still
    /// being lowered) makes that id one per delivery.
    fn received_yet(&mut self) -> bool {
        if !self.dedup.received {
            let from = self.dedup.scanned.min(self.values.len());
            self.dedup.received = self.values[from..].iter().any(|v| v.msg_root.is_some());
            self.dedup.scanned = self.values.len();
            if self.dedup.received {
                for (loc, l) in std::mem::take(&mut self.dedup.in_loop) {
                    if self.loops.contains(&l) && !self.dedup.after_receive.contains(&loc) {
                        self.dedup.after_receive.push(loc);
                    }
                }
            }
        }
        self.dedup.received
    }

    /// A fresh id (or a clock reading) generated at `loc`: once per delivery if a
    /// message was received before, or if the turn of the loop it is generated in
    /// receives one after it (`loop { let id = ..; let m = rx.recv().await; .. }`).
    pub(super) fn note_minted(&mut self, loc: &Loc) {
        if self.received_yet() {
            if !self.dedup.after_receive.contains(loc) {
                self.dedup.after_receive.push(loc.clone());
            }
        } else if let Some(&l) = self.loops.last() {
            self.dedup.in_loop.push((loc.clone(), l));
        }
    }

    /// A value made from the values `info` mentions (not through an unknown call).
    pub(super) fn note_sources(&mut self, v: ValueId, info: &Info) {
        if !info.fresh_blocked && !info.mentions.is_empty() {
            self.dedup.sources.insert(v, info.mentions.clone());
        }
        if !info.parts.is_empty() {
            self.dedup.parts.insert(v, info.parts.clone());
        }
    }

    /// A value taken from the value `from`, its field `name`: of a struct literal, made
    /// from what that field was given (and the fresh id only if it holds one).
    pub(super) fn note_source(&mut self, v: ValueId, from: ValueId, name: &str) {
        let part = self
            .dedup
            .parts
            .get(&from)
            .and_then(|ps| ps.iter().find(|(n, _)| n == name))
            .map(|(_, vals)| vals.clone());
        match part {
            Some(vals) => {
                self.values[v as usize].fresh = vals
                    .iter()
                    .find_map(|m| self.values[*m as usize].fresh.clone());
                self.dedup.field_of.insert(v, from);
                self.dedup.sources.insert(v, vals);
            }
            None => {
                self.dedup.sources.insert(v, vec![from]);
            }
        }
    }

    /// The values an argument denotes and mentions, without a struct literal's value
    /// where it only mentions a field of it (`out.dedup_id`).
    fn arg_vals(&self, a: &Info) -> Vec<ValueId> {
        let all: Vec<ValueId> = a.value.iter().chain(&a.mentions).copied().collect();
        let bases: Vec<ValueId> = all
            .iter()
            .filter_map(|v| self.dedup.field_of.get(v).copied())
            .collect();
        all.into_iter().filter(|v| !bases.contains(v)).collect()
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
            let vals = self.arg_vals(a);
            let precise = vals.len() < a.value.iter().chain(&a.mentions).count();
            if !a.fresh_blocked {
                let own = if precise { None } else { a.fresh.clone() };
                let fresh = own.or_else(|| {
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
        self.received_yet();
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
            let vals = self.arg_vals(a);
            let precise = vals.len() < a.value.iter().chain(&a.mentions).count();
            let own = if precise { None } else { a.fresh.clone() };
            let fresh = own.or_else(|| {
                vals.iter()
                    .find_map(|m| self.values[*m as usize].fresh.clone())
            });
            if !vals.is_empty() {
                self.dedup.passed.push((vals, callee.clone(), j as u32));
            }
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
    /// A parameter counts if a value made from it (through `let`s, struct
    /// literals, fields) is put in a dedup field, or is passed to the crate's function
    /// (`passed`, which the rule follows).
    pub(super) fn dedup_facts(&mut self, params: &[Option<ValueId>]) -> DedupFacts {
        let mut facts = std::mem::take(&mut self.dedup.facts);
        let passed = std::mem::take(&mut self.dedup.passed);
        if params.iter().all(Option::is_none) || (self.dedup.vals.is_empty() && passed.is_empty()) {
            return facts;
        }
        // Which parameters (bits, the first 64) each value was made from; a value is
        // made from values made before it.
        let mut from = vec![0u64; self.values.len()];
        for (i, p) in params.iter().enumerate().take(64) {
            if let Some(v) = p {
                from[*v as usize] |= 1 << i;
            }
        }
        for v in 0..from.len() {
            if let Some(srcs) = self.dedup.sources.get(&(v as ValueId)) {
                let bits = srcs
                    .iter()
                    .filter(|s| (**s as usize) < v)
                    .fold(0, |b, s| b | from[*s as usize]);
                from[v] |= bits;
            }
        }
        let bits_of = |vals: &[ValueId]| vals.iter().fold(0u64, |b, v| b | from[*v as usize]);
        let put = bits_of(&self.dedup.vals);
        facts.params = (0..params.len().min(64) as u32)
            .filter(|i| put & (1 << i) != 0)
            .collect();
        for (vals, callee, j) in passed {
            let bits = bits_of(&vals);
            for i in (0..params.len().min(64) as u32).filter(|i| bits & (1 << i) != 0) {
                facts.passes.push((i, callee.clone(), j));
            }
        }
        facts
    }
}
