//! What the model of a partly parsed crate needs from the files not parsed yet
//! (the prefilter's closure; ARCHITECTURE.md "Prefilter").
//!
//! A file that mentions no API token has no delivery event of its own; it matters
//! only through what connects it to the files that have one:
//!
//! - **callers**: it mentions a *relevant* function (one that reaches a delivery
//!   event, configures a client, returns a role-typed value or a fresh id, ...) or
//!   a relevant type (a type whose fields hold roles or relevant types, or whose
//!   methods are relevant): it may be the handler that orders those events;
//! - **callees**: it defines a function that a parsed function calls and that does
//!   not resolve to a relevant one (a pass-through wrapper, or one more candidate
//!   that changes how a call resolves);
//! - **constants**: it defines a constant that a parsed file names (SQL, a TTL).
//!
//! The driver parses the files so named, lowers again and asks again, until
//! nothing new is needed.

use std::collections::HashSet;

use crate::frontend::rust::scan::FileScan;
use crate::frontend::rust::CrateIndex;
use crate::ir::{Callee, Crate, EventKind, Function};

use super::flow::Resolver;

/// Names the parsed part of a crate needs from the rest.
#[derive(Debug, Default)]
pub struct Demand {
    /// Relevant functions (by identifier) and relevant types: a file mentioning one is needed.
    pub mentioned: HashSet<String>,
    /// Functions called by name (`save(..)`, `x.save(..)`) that reach nothing relevant yet.
    pub called: HashSet<String>,
    /// `Type::name(..)` calls that reach nothing relevant yet: a file defining
    /// `name` and mentioning `Type` is needed.
    pub called_on: HashSet<(String, String)>,
}

impl Demand {
    /// Whether the unparsed file scanned as `scan` is needed; `consts` are the
    /// identifiers the parsed files mention (a constant they name is needed).
    pub fn needs(&self, scan: &FileScan, consts: &HashSet<&str>) -> bool {
        scan.idents.iter().any(|id| self.mentioned.contains(*id))
            || scan.fns.iter().any(|f| {
                self.called.contains(*f)
                    || self
                        .called_on
                        .iter()
                        .any(|(ty, name)| name == f && scan.idents.contains(ty.as_str()))
            })
            || scan.consts.iter().any(|c| consts.contains(c))
    }
}

/// What the crate lowered so far needs.
pub fn demand(krate: &Crate, index: &CrateIndex) -> Demand {
    let resolver = Resolver::new(krate);
    let fns = &krate.functions;
    let n = fns.len();
    let mut relevant = vec![false; n];
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut calls: Vec<Vec<&Callee>> = vec![Vec::new(); n];
    for (i, f) in fns.iter().enumerate() {
        relevant[i] = has_own_facts(f, index);
        // Any delivery event makes a function relevant; its calls are listed.
        for e in f.body.events() {
            match &e.kind {
                EventKind::Call(c) => {
                    edges[i].extend(resolver.resolve(f, c));
                    calls[i].push(&c.callee);
                }
                EventKind::CallValue { .. } => {}
                _ => relevant[i] = true,
            }
        }
    }
    // Callers of relevant functions are relevant, and so are the types that hold or
    // serve relevant things, to a fixpoint. (A function returning a relevant crate
    // type is not: its callers use the value through relevant methods, which they
    // name, and the call itself is a callee the forward rule finds.)
    let mut types: HashSet<String> = HashSet::new();
    loop {
        let before = types.len();
        let mut changed = false;
        for i in 0..n {
            if !relevant[i] && edges[i].iter().any(|&j| relevant[j]) {
                relevant[i] = true;
                changed = true;
            }
        }
        for (f, _) in fns.iter().zip(&relevant).filter(|(_, r)| **r) {
            types.extend(f.self_type.iter().cloned());
            // Only the crate's own traits type a receiver (`dyn Handler`).
            types.extend(
                f.trait_name
                    .iter()
                    .filter(|t| index.traits.contains(*t))
                    .cloned(),
            );
        }
        for (ty, fields) in &index.fields {
            if !types.contains(ty)
                && fields.values().any(|t| {
                    t.role.is_some() || t.crate_type.as_ref().is_some_and(|c| types.contains(c))
                })
            {
                types.insert(ty.clone());
            }
        }
        if !changed && types.len() == before {
            break;
        }
    }

    let mut d = Demand::default();
    for (f, _) in fns.iter().zip(&relevant).filter(|(_, r)| **r) {
        // `Repo::new` is called as `Repo::new(..)`: the type's name finds its callers.
        if f.has_self || f.self_type.is_none() {
            d.mentioned.insert(f.ident.clone());
        }
    }
    d.mentioned.extend(types);

    // Calls that reach nothing relevant: their callee may be a wrapper not parsed yet.
    for (i, cs) in calls.iter().enumerate() {
        for callee in cs {
            let cands = resolver.resolve_callee(&fns[i], callee);
            if cands.iter().any(|&j| relevant[j]) {
                continue;
            }
            match callee {
                Callee::Path(segs) => {
                    let Some(name) = segs.last() else { continue };
                    let owner = segs
                        .len()
                        .checked_sub(2)
                        .map(|k| segs[k].as_str())
                        .filter(|o| o.starts_with(|c: char| c.is_ascii_uppercase()));
                    match owner {
                        Some("Self") => {
                            if let Some(t) = &fns[i].self_type {
                                d.called_on.insert((t.clone(), name.clone()));
                            }
                        }
                        Some(t) => {
                            d.called_on.insert((t.to_string(), name.clone()));
                        }
                        None => {
                            d.called.insert(name.clone());
                        }
                    }
                }
                Callee::Method { name, .. } => {
                    d.called.insert(name.clone());
                }
            }
        }
    }
    d
}

/// A function that matters whatever it calls: it configures a client, makes a
/// fresh id that reaches a send, returns a claim or a role-typed value, retries.
fn has_own_facts(f: &Function, index: &CrateIndex) -> bool {
    !f.kafka_clients.is_empty()
        || !f.kafka_sent_topics.is_empty()
        || !f.ack_settings.is_empty()
        || !f.id_flows.is_empty()
        || !f.returns_claims.is_empty()
        || !f.retries.is_empty()
        || index.fns.get(&f.ident).is_some_and(|sigs| {
            sigs.iter().any(|s| {
                s.self_type == f.self_type && (s.ret.role.is_some() || s.returns_fresh.is_some())
            })
        })
}
