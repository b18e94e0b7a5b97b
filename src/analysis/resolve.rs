//! Call resolution: which functions of the crate a call may reach (docs/what-is-analyzed.md, "Calls
//! are followed only where they resolve"): paths through the module tree and
//! re-exports, methods through their receiver's type or trait, an unknown receiver
//! only to the one method so named.

use std::collections::HashMap;

use crate::ir::{Call, Callee, Crate, Function};

/// Finds the functions a call may reach in the crate.
pub struct Resolver<'c> {
    krate: &'c Crate,
    by_name: HashMap<&'c str, Vec<Candidate>>,
}

/// A function a call may reach: one of the crate's lowered functions (an index into
/// `Crate::functions`), or one declared in a file the prefilter did not parse (an
/// index into `Crate::unparsed`). Unparsed ones count for ambiguity exactly as they
/// would parsed, so a call resolves the same whichever files were parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidate {
    Parsed(usize),
    Unparsed(usize),
}

impl<'c> Resolver<'c> {
    pub fn new(krate: &'c Crate) -> Self {
        let mut by_name: HashMap<&str, Vec<Candidate>> = HashMap::new();
        for (i, f) in krate.functions.iter().enumerate() {
            by_name
                .entry(f.ident.as_str())
                .or_default()
                .push(Candidate::Parsed(i));
        }
        for (i, f) in krate.unparsed.iter().enumerate() {
            by_name
                .entry(f.ident.as_str())
                .or_default()
                .push(Candidate::Unparsed(i));
        }
        Resolver { krate, by_name }
    }

    fn self_type(&self, c: Candidate) -> Option<&'c str> {
        match c {
            Candidate::Parsed(i) => self.krate.functions[i].self_type.as_deref(),
            Candidate::Unparsed(i) => self.krate.unparsed[i].self_type.as_deref(),
        }
    }

    fn trait_name(&self, c: Candidate) -> Option<&'c str> {
        match c {
            Candidate::Parsed(i) => self.krate.functions[i].trait_name.as_deref(),
            Candidate::Unparsed(i) => self.krate.unparsed[i].trait_name.as_deref(),
        }
    }

    fn module(&self, c: Candidate) -> &'c [String] {
        match c {
            Candidate::Parsed(i) => &self.krate.functions[i].module,
            Candidate::Unparsed(i) => &self.krate.unparsed[i].module,
        }
    }

    fn has_self(&self, c: Candidate) -> bool {
        match c {
            Candidate::Parsed(i) => self.krate.functions[i].has_self,
            Candidate::Unparsed(i) => self.krate.unparsed[i].has_self,
        }
    }

    /// Candidate callees of `call` made from `caller`; empty when unknown or ambiguous.
    pub fn resolve(&self, caller: &Function, call: &Call) -> Vec<usize> {
        self.resolve_callee(caller, &call.callee)
    }

    /// The lowered functions `callee` may reach when called from `caller` (those in
    /// files not parsed left out).
    pub fn resolve_callee(&self, caller: &Function, callee: &Callee) -> Vec<usize> {
        self.candidates(caller, callee)
            .into_iter()
            .filter_map(|c| match c {
                Candidate::Parsed(i) => Some(i),
                Candidate::Unparsed(_) => None,
            })
            .collect()
    }

    /// Every function `callee` may reach when called from `caller`; empty when
    /// unknown or ambiguous.
    pub fn candidates(&self, caller: &Function, callee: &Callee) -> Vec<Candidate> {
        let found = self.direct_candidates(caller, callee);
        let Callee::Path(segs) = callee else {
            return found;
        };
        if !found.is_empty() || segs.len() < 2 {
            return found;
        }
        // A path through a facade (`platform::mailer::send`, `pub use notify::mailer;`
        // in `platform`): the same path below what the facade re-exports, a facade
        // of a facade too.
        for path in crate::ir::through_reexports(&self.krate.reexports, segs) {
            let found = self.direct_candidates(caller, &Callee::Path(path));
            if !found.is_empty() {
                return found;
            }
        }
        found
    }

    fn direct_candidates(&self, caller: &Function, callee: &Callee) -> Vec<Candidate> {
        /// `module` lies strictly below a module whose path ends with `quals`.
        fn below_module(module: &[String], quals: &[&String]) -> bool {
            (0..module.len().saturating_sub(quals.len())).any(|i| {
                module[i..i + quals.len()]
                    .iter()
                    .zip(quals)
                    .all(|(a, b)| a == *b)
            })
        }
        match callee {
            Callee::Path(segs) => {
                let Some(name) = segs.last() else {
                    return vec![];
                };
                let Some(cands) = self.by_name.get(name.as_str()) else {
                    return vec![];
                };
                if segs.len() >= 2 {
                    let owner = &segs[segs.len() - 2];
                    let owner = if owner == "Self" {
                        caller.self_type.clone().unwrap_or_default()
                    } else {
                        owner.clone()
                    };
                    if owner.starts_with(|c: char| c.is_ascii_uppercase()) {
                        return cands
                            .iter()
                            .copied()
                            .filter(|&c| self.self_type(c) == Some(owner.as_str()))
                            .collect();
                    }
                    let quals: Vec<&String> = segs[..segs.len() - 1]
                        .iter()
                        .filter(|s| !matches!(s.as_str(), "crate" | "self" | "super"))
                        .collect();
                    let free: Vec<Candidate> = cands
                        .iter()
                        .copied()
                        .filter(|&c| self.self_type(c).is_none())
                        .filter(|&c| {
                            let m = self.module(c);
                            m.len() >= quals.len()
                                && m[m.len() - quals.len()..]
                                    .iter()
                                    .zip(&quals)
                                    .all(|(a, b)| a == *b)
                        })
                        .collect();
                    if free.is_empty() && !quals.is_empty() {
                        // `storage::log(..)` where `storage` re-exports its submodules
                        // (`pub use audit::*;`): the one function so named below it.
                        let below: Vec<Candidate> = cands
                            .iter()
                            .copied()
                            .filter(|&c| self.self_type(c).is_none())
                            .filter(|&c| below_module(self.module(c), &quals))
                            .collect();
                        return self.one_definition(below);
                    }
                    return self.one_definition(free);
                }
                let free: Vec<Candidate> = cands
                    .iter()
                    .copied()
                    .filter(|&c| self.self_type(c).is_none())
                    .collect();
                let same: Vec<Candidate> = free
                    .iter()
                    .copied()
                    .filter(|&c| self.module(c) == caller.module.as_slice())
                    .collect();
                if !same.is_empty() {
                    return self.one_definition(same);
                }
                self.one_definition(free)
            }
            Callee::Method {
                name,
                receiver_type,
            } => self.method_candidates(name, receiver_type.as_deref()),
        }
    }

    /// The functions `x.name(..)` may reach, `x` of type `receiver_type` (a crate
    /// type or trait) or of unknown type; empty when ambiguous.
    pub fn method_candidates(&self, name: &str, receiver_type: Option<&str>) -> Vec<Candidate> {
        let Some(cands) = self.by_name.get(name) else {
            return vec![];
        };
        let methods: Vec<Candidate> = match receiver_type {
            Some(t) => cands
                .iter()
                .copied()
                .filter(|&c| self.self_type(c) == Some(t) || self.trait_name(c) == Some(t))
                .collect(),
            None => cands
                .iter()
                .copied()
                .filter(|&c| self.has_self(c))
                .collect(),
        };
        // A trait or type receiver may reach several implementations; a receiver of
        // unknown type links only when exactly one method has that name.
        let limit = if receiver_type.is_some() {
            MAX_METHOD_CANDIDATES
        } else {
            1
        };
        if methods.len() <= limit {
            methods
        } else if receiver_type.is_none() {
            self.one_definition(methods)
        } else {
            vec![]
        }
    }

    /// `cands` when they are one definition: a single function, or the same path
    /// defined more than once (`#[cfg(debug_assertions)] fn send_email` beside
    /// `#[cfg(not(debug_assertions))] fn send_email`), which only mutually exclusive
    /// cfgs allow; either may be compiled, so each is a callee. Test-only
    /// definitions are not lowered, so never among them. Empty otherwise
    /// (ambiguous).
    fn one_definition(&self, cands: Vec<Candidate>) -> Vec<Candidate> {
        let Some(&first) = cands.first() else {
            return cands;
        };
        let same_path = |c: Candidate| {
            self.module(c) == self.module(first) && self.self_type(c) == self.self_type(first)
        };
        if cands.iter().all(|&c| same_path(c)) {
            cands
        } else {
            vec![]
        }
    }

    /// How many free functions (no `self` type) are named `name`.
    pub fn free_count(&self, name: &str) -> usize {
        self.by_name.get(name).map_or(0, |cands| {
            cands
                .iter()
                .filter(|&&c| self.self_type(c).is_none())
                .count()
        })
    }

    /// The one function whose signature a call to `name` on `owner` (a type or trait;
    /// `None`: any) takes its return type from, as the lowering picks it.
    pub fn signature_of(&self, name: &str, owner: Option<&str>) -> Option<Candidate> {
        let mut found = self.by_name.get(name)?.iter().copied().filter(|&c| {
            owner.is_none() || self.self_type(c) == owner || self.trait_name(c) == owner
        });
        match (found.next(), found.next()) {
            (Some(c), None) => Some(c),
            _ => None,
        }
    }
}

/// A method call on a receiver of a known type or trait resolves to at most this many
/// candidates (more: unknown). Plugin traits with dozens of implementations (a sink per
/// backend) stay below it; a method every type of a large crate defines does not.
pub const MAX_METHOD_CANDIDATES: usize = 32;
