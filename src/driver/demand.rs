//! What the model of a partly parsed crate needs from the files not parsed yet
//! (the prefilter's closure; ARCHITECTURE.md "Prefilter").
//!
//! A file that mentions no API token has no delivery event of its own; it matters
//! only through what connects it to the files that have one. The links are those
//! the lowering and the call resolution follow, so a file is needed when it could
//! change the model of the parsed ones:
//!
//! - **callers**: it may call a *relevant* function (one that reaches a delivery
//!   event, configures a client, returns a role-typed value or a fresh id, ...):
//!   it names a relevant free function; it names a relevant method that a call on
//!   a receiver of unknown type links to (see `links_untyped_receiver`); or it
//!   names a type through which such a call resolves (the method's own type, its
//!   trait when a call on the trait resolves, a type whose fields hold one, a type
//!   whose functions return one): it may be the handler that orders those events;
//! - **callees**: it declares a function a call of a parsed function may reach, or
//!   whose signature gives the call its return type (the call resolves the same
//!   whichever files are parsed: unparsed functions count as candidates);
//! - **fields**: it declares a type whose fields a parsed function reads;
//! - **constants**: it defines a constant that a parsed file names (SQL, a TTL).
//!
//! The driver parses the files so named, lowers again and asks again, until
//! nothing new is needed.

use std::collections::{HashMap, HashSet};

use crate::apis::Apis;
use crate::frontend::rust::scan::FileScan;
use crate::frontend::rust::{links_untyped_receiver, stored, CrateIndex, CrateOutput};
use crate::ir::{Callee, Crate, EventKind, Function};

use crate::analysis::flow::{Candidate, Resolver};

/// What the parsed part of a crate needs from the rest.
#[derive(Debug, Default)]
pub struct Demand {
    /// Crate types and traits that relevant calls resolve through: a file
    /// mentioning one is needed.
    pub types: HashSet<String>,
    /// Other types with relevant methods (`impl Trait for String`): a file with a
    /// method for one is needed (`self` is of that type there).
    pub impl_types: HashSet<String>,
    /// Methods a call on a receiver of unknown type reaches: a file calling
    /// `.name(..)` is needed.
    pub methods: HashSet<String>,
    /// Functions reached by path: a file calling `path::name(..)` is needed.
    pub paths: HashSet<String>,
    /// Free functions reached by a bare call `name(..)`: from any module (`None`),
    /// or only from the modules listed (where one is the module's own).
    pub bare: HashMap<String, Option<HashSet<Vec<String>>>>,
    /// Files declaring a function a parsed call may reach (by path).
    pub files: HashSet<String>,
    /// Functions the analysis runs (relevant ones, and those a closure is handed to
    /// from one it runs: it runs the closure where they call it), by file and the
    /// position of their name: their bodies are needed.
    pub bodies: HashMap<String, HashSet<usize>>,
    /// Of each type and trait, the names of its relevant methods and of its
    /// methods returning a type in `types` (a trait's: those it provides, and those
    /// its impls define): a function body using a value of a type in `types`
    /// matters only if it calls one of these or reads one of `fields`.
    pub methods_of: HashMap<String, HashSet<String>>,
    /// The union of the traits' sets in `methods_of` (a type's value may call
    /// what any trait it implements gives it).
    pub trait_methods: HashSet<String>,
    /// Of each type in `types`, the fields that hold a role or such a type.
    pub fields: HashMap<String, Vec<String>>,
    /// The crate's fn-pointer aliases (`type HandlerFn = fn(..)`): code naming one
    /// and a relevant function may store the function as a value of it
    /// (`on_paid as HandlerFn`), which a call of such a value reaches.
    pub fn_aliases: HashSet<String>,
    /// The names of the functions reached (`reach`), free or methods.
    pub reached: HashSet<String>,
    /// When the crate has callable fields (slots): the names a setter's signature
    /// may type a callable parameter with (`Fn`, `FnMut`, `FnOnce`, the crate's
    /// aliases of callables); a method naming one and storing a value (the runtime
    /// pack's `store_methods`) may fill a slot with what its callers pass
    /// (`stored::stored_param`).
    pub callables: HashSet<String>,
    pub store_methods: HashSet<String>,
    /// When the crate has slots: the names of its setters (`FnSig::stores_param`)
    /// and of the methods several types define (a setter's body not parsed yet
    /// gives no fact). The stored closures' lowering picks the setter a call
    /// `x.name(..)` reaches by the receiver's type, or by the name when one method
    /// of the crate has it: every method so named counts, so a file declaring one
    /// is needed, and a body of one that may store a callable.
    pub setter_names: HashSet<String>,
    /// Fields of the crate's types a subscription reads its topics from and no
    /// parsed struct literal filled (`KafkaClient::topic_fields`), by type: code
    /// naming the type (or a method of it) and the field may fill it.
    pub name_fields: HashMap<String, HashSet<String>>,
}

impl Demand {
    /// Whether the unparsed file `path` of module `module`, scanned as `scan`, is
    /// needed; `consts` are the identifiers the parsed files mention (a constant
    /// they name is needed).
    pub fn needs(
        &self,
        path: &str,
        module: &[String],
        scan: &FileScan,
        consts: &HashSet<&str>,
    ) -> bool {
        self.files.contains(path)
            || self.calls_relevant(Some(module), scan)
            || self.uses_types(scan)
            || self.stores_relevant_fn(scan)
            || scan.consts.iter().any(|c| consts.contains(c))
            || scan.items.iter().any(|f| self.setter_named(f))
            || self.fills_name_field(scan)
    }

    /// Whether code scanned as `scan` names a type of [`Demand::name_fields`] (or
    /// is a method of one) and one of its fields: it may fill the field.
    pub fn fills_name_field(&self, scan: &FileScan) -> bool {
        self.fills_name_field_of(scan, scan.items.iter().filter_map(|f| f.self_type))
    }

    /// [`Demand::fills_name_field`] for code that is a method of one of `owners`.
    pub fn fills_name_field_of<'s>(
        &self,
        scan: &FileScan<'s>,
        owners: impl Iterator<Item = &'s str>,
    ) -> bool {
        !self.name_fields.is_empty()
            && (scan.idents.iter().copied())
                .chain(owners)
                .filter_map(|t| self.name_fields.get(t))
                .any(|fields| scan.idents.iter().any(|id| fields.contains(*id)))
    }

    /// Whether `f` is a method named as one of the crate's setters may be
    /// ([`Demand::setter_names`]).
    pub fn setter_named(&self, f: &crate::frontend::rust::scan::FnItem) -> bool {
        f.has_self && self.setter_names.contains(f.name)
    }

    /// Whether some code of a file scanned as `scan` may be needed, whatever its
    /// module (a superset of [`Demand::needs`] for its bodies).
    pub fn may_need(&self, scan: &FileScan) -> bool {
        self.calls_relevant(None, scan)
            || self.uses_types(scan)
            || self.stores_relevant_fn(scan)
            || self.fills_name_field(scan)
    }

    /// Whether code scanned as `scan` names one of the crate's fn-pointer aliases and a
    /// relevant function: it may store the function as a value of the alias.
    /// Whether a method scanned as `scan` (its signature with its body) may store a
    /// callable parameter in a slot ([`Demand::callables`]).
    pub fn stores_callable(&self, scan: &FileScan) -> bool {
        !self.callables.is_empty()
            && scan
                .method_calls
                .iter()
                .any(|m| self.store_methods.contains(*m))
            && scan.idents.iter().any(|id| self.callables.contains(*id))
    }

    pub fn stores_relevant_fn(&self, scan: &FileScan) -> bool {
        !self.fn_aliases.is_empty()
            && scan.idents.iter().any(|id| self.fn_aliases.contains(*id))
            && scan.idents.iter().any(|id| self.reached.contains(*id))
    }

    /// Whether code of module `module` (`None`: of any), scanned as `scan`, calls a
    /// relevant function by name (a method linked to untyped receivers, a path, a
    /// bare call).
    pub fn calls_relevant(&self, module: Option<&[String]>, scan: &FileScan) -> bool {
        scan.method_calls.iter().any(|m| self.methods.contains(*m))
            || scan.path_calls.iter().any(|m| self.paths.contains(*m))
            || scan
                .calls
                .iter()
                .any(|c| match (self.bare.get(*c), module) {
                    (Some(None), _) | (Some(Some(_)), None) => true,
                    (Some(Some(modules)), Some(module)) => modules.contains(module),
                    (None, _) => false,
                })
    }

    /// Whether code scanned as `scan` names a type through which a relevant call
    /// resolves, or has a method of another type with relevant methods.
    fn uses_types(&self, scan: &FileScan) -> bool {
        scan.idents.iter().any(|id| self.types.contains(*id))
            || scan
                .items
                .iter()
                .any(|f| f.self_type.is_some_and(|t| self.impl_types.contains(t)))
    }

    /// Records how a call can reach the function `ident` declared with
    /// `self_type`, `trait_name` in `module` (a relevant one, or one returning a
    /// type that relevant calls resolve through).
    fn reach(
        &mut self,
        cx: &Cx,
        ident: &str,
        self_type: Option<&str>,
        trait_name: Option<&str>,
        module: &[String],
    ) {
        self.reached.insert(ident.to_string());
        let Some(t) = self_type else {
            self.paths.insert(ident.to_string());
            let entry = self
                .bare
                .entry(ident.to_string())
                .or_insert_with(|| Some(HashSet::new()));
            if cx.resolver.free_count(ident) == 1 {
                *entry = None;
            } else if let Some(modules) = entry {
                modules.insert(module.to_vec());
            }
            return;
        };
        let mut of = |ty: &str| {
            self.methods_of
                .entry(ty.to_string())
                .or_default()
                .insert(ident.to_string());
        };
        of(t);
        if let Some(tr) = trait_name {
            of(tr);
        }
        // `T::name(..)`, `x.name(..)` with `x: T`, `self.name(..)` in an impl for `T`.
        if cx.index.type_names.contains(t) || cx.index.traits.contains(t) {
            self.types.insert(t.to_string());
        } else {
            self.paths.insert(ident.to_string());
            self.impl_types.insert(t.to_string());
        }
        // `x.name(..)` with `x` of unknown type.
        if links_untyped_receiver(cx.index, cx.apis, ident) {
            self.methods.insert(ident.to_string());
        }
        // `x.name(..)` with `x: dyn Trait`, when such a call resolves.
        if let Some(tr) = trait_name.filter(|tr| cx.index.traits.contains(*tr)) {
            if !cx.resolver.method_candidates(ident, Some(tr)).is_empty() {
                self.types.insert(tr.to_string());
            }
        }
    }

    fn holds(&self, ty: &str) -> bool {
        self.types.contains(ty) || self.impl_types.contains(ty)
    }
}

struct Cx<'a> {
    resolver: &'a Resolver<'a>,
    index: &'a CrateIndex,
    apis: &'a Apis,
}

/// Which functions of the crate are relevant: they have delivery facts of their
/// own (only those for which `own` holds count) or call one that is.
pub fn relevant(
    krate: &Crate,
    index: &CrateIndex,
    own: impl Fn(&Function) -> bool + Sync,
) -> Vec<bool> {
    relevance(krate, index, &Resolver::new(krate), own).0
}

/// Relevance, and the calls of each function.
fn relevance<'k>(
    krate: &'k Crate,
    index: &CrateIndex,
    resolver: &Resolver,
    own: impl Fn(&Function) -> bool + Sync,
) -> (Vec<bool>, Vec<Vec<&'k Callee>>) {
    use rayon::prelude::*;
    let fns = &krate.functions;
    let n = fns.len();
    // Any delivery event makes a function relevant; its calls are listed.
    let per_fn: Vec<(bool, Vec<usize>, Vec<&Callee>)> = fns
        .par_iter()
        .map(|f| {
            let own = own(f);
            let mut relevant = own && has_own_facts(f, index);
            let (mut edges, mut calls) = (Vec::new(), Vec::new());
            for e in f.body.each_event() {
                match &e.kind {
                    EventKind::Call(c) => {
                        edges.extend(resolver.resolve(f, c));
                        calls.push(&c.callee);
                    }
                    EventKind::CallValue { .. } => {}
                    _ => relevant |= own,
                }
            }
            (relevant, edges, calls)
        })
        .collect();
    let mut relevant = Vec::with_capacity(n);
    let mut edges: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut calls: Vec<Vec<&Callee>> = Vec::with_capacity(n);
    for (r, e, c) in per_fn {
        relevant.push(r);
        edges.push(e);
        calls.push(c);
    }
    // Callers of relevant functions are relevant.
    loop {
        let mut changed = false;
        for i in 0..n {
            if !relevant[i] && edges[i].iter().any(|&j| relevant[j]) {
                relevant[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (relevant, calls)
}

/// What the crate lowered so far needs.
pub fn demand(lowered: &CrateOutput, apis: &Apis) -> Demand {
    let (krate, index) = (&lowered.krate, &lowered.index);
    let resolver = Resolver::new(krate);
    let cx = Cx {
        resolver: &resolver,
        index,
        apis,
    };
    let fns = &krate.functions;
    let (relevant, calls) = relevance(krate, index, &resolver, |_| true);

    // How calls reach the relevant functions; then, to a fixpoint, the types whose
    // fields hold roles or types calls resolve through, and the functions that
    // return such types.
    let mut d = Demand {
        fn_aliases: (index.aliases.iter())
            .filter(|(_, text)| stored::is_fn_pointer_text(text))
            .map(|(name, _)| name.clone())
            .collect(),
        callables: match index.has_slots {
            true => (stored::CALLABLE_TRAITS.iter().map(|t| t.to_string()))
                .chain(
                    (index.aliases.iter())
                        .filter(|(_, text)| stored::names_callable(text))
                        .map(|(name, _)| name.clone()),
                )
                .collect(),
            false => HashSet::new(),
        },
        store_methods: apis.std.store_methods.iter().cloned().collect(),
        setter_names: setter_names(index),
        ..Demand::default()
    };
    for (f, _) in fns.iter().zip(&relevant).filter(|(_, r)| **r) {
        d.reach(
            &cx,
            &f.ident,
            f.self_type.as_deref(),
            f.trait_name.as_deref(),
            &f.module,
        );
    }
    d.reach_holding_types(&cx);

    let run = functions_run(krate, &resolver, &relevant);
    for (f, _) in fns.iter().zip(&run).filter(|(_, r)| **r) {
        d.bodies
            .entry(f.loc.path.to_string())
            .or_default()
            .insert(f.loc.span.byte_start);
    }

    d.held_members(index);

    // The structs whose fields parsed functions read.
    d.files.extend(lowered.undeclared_fields.iter().cloned());
    for f in fns {
        for (ty, field) in &f.topic_fields {
            d.name_fields
                .entry(ty.clone())
                .or_default()
                .insert(field.clone());
        }
    }

    // The functions in unparsed files that a parsed call may reach, or whose
    // signature types its result.
    if !krate.unparsed.is_empty() {
        d.reach_unparsed(krate, &resolver, &calls);
    }
    d
}

impl Demand {
    /// To a fixpoint: the types whose fields hold roles or types calls resolve
    /// through, and the functions that return such types (reached as relevant).
    fn reach_holding_types(&mut self, cx: &Cx) {
        let index = cx.index;
        let mut producers: HashSet<(&str, usize)> = HashSet::new();
        loop {
            let before = (self.types.len(), self.impl_types.len());
            for (ty, fields) in &index.fields {
                if !self.types.contains(ty)
                    && fields.values().any(|t| {
                        t.role.is_some() || t.crate_type.as_deref().is_some_and(|c| self.holds(c))
                    })
                {
                    self.types.insert(ty.clone());
                }
            }
            for (name, sigs) in &index.fns {
                for (k, s) in sigs.iter().enumerate() {
                    if s.ret.crate_type.as_deref().is_some_and(|c| self.holds(c))
                        && producers.insert((name.as_str(), k))
                    {
                        self.reach(
                            cx,
                            name,
                            s.self_type.as_deref(),
                            s.trait_name.as_deref(),
                            &s.module,
                        );
                    }
                }
            }
            if (self.types.len(), self.impl_types.len()) == before {
                break;
            }
        }
    }

    /// The methods of the crate's traits that are needed, and the fields of the
    /// needed types that hold roles or needed types.
    fn held_members(&mut self, index: &CrateIndex) {
        self.trait_methods = index
            .traits
            .iter()
            .filter_map(|tr| self.methods_of.get(tr))
            .flatten()
            .cloned()
            .collect();
        for (ty, fields) in &index.fields {
            if self.types.contains(ty) {
                let held: Vec<String> = fields
                    .iter()
                    .filter(|(_, t)| {
                        t.role.is_some() || t.crate_type.as_deref().is_some_and(|c| self.holds(c))
                    })
                    .map(|(name, _)| name.clone())
                    .collect();
                if !held.is_empty() {
                    self.fields.insert(ty.clone(), held);
                }
            }
        }
    }

    /// The unparsed files holding a function that a parsed call (`calls`, per
    /// function) may reach, or whose signature types the call's result.
    fn reach_unparsed(&mut self, krate: &Crate, resolver: &Resolver, calls: &[Vec<&Callee>]) {
        let fns = &krate.functions;
        for (i, cs) in calls.iter().enumerate() {
            let caller = &fns[i];
            for callee in cs {
                let mut reach = resolver.candidates(caller, callee);
                let (name, owner) = match callee {
                    Callee::Path(segs) => {
                        let owner = segs
                            .len()
                            .checked_sub(2)
                            .map(|k| segs[k].as_str())
                            .and_then(|o| {
                                if o == "Self" {
                                    caller.self_type.as_deref()
                                } else {
                                    Some(o)
                                }
                            })
                            .filter(|o| o.starts_with(|c: char| c.is_ascii_uppercase()));
                        (segs.last().map(String::as_str), owner)
                    }
                    Callee::Method {
                        name,
                        receiver_type,
                    } => (Some(name.as_str()), receiver_type.as_deref()),
                };
                if let Some(sig) = name.and_then(|name| resolver.signature_of(name, owner)) {
                    reach.push(sig);
                }
                for c in reach {
                    if let Candidate::Unparsed(k) = c {
                        self.files.insert(krate.unparsed[k].path.clone());
                    }
                }
            }
        }
    }
}

/// The functions the analysis runs: the relevant ones, and (to a fixpoint) those
/// that take a closure from one it runs.
/// A closure handed to a function may be passed on by it to the next one
/// (`fn fire<F: Fn()>(f: F) { tokio::spawn(deliver(f)) }`): the parameters that
/// hold a closure, per function, are followed too.
fn functions_run(krate: &Crate, resolver: &Resolver, relevant: &[bool]) -> Vec<bool> {
    let fns = &krate.functions;
    let mut run = relevant.to_vec();
    let mut closure_params: Vec<Vec<crate::ir::ValueId>> = vec![Vec::new(); fns.len()];
    let mut stack: Vec<usize> = (0..fns.len()).filter(|&i| relevant[i]).collect();
    while let Some(i) = stack.pop() {
        for e in fns[i].body.each_event() {
            let EventKind::Call(c) = &e.kind else {
                continue;
            };
            let mut handed: Vec<usize> = c.closures.iter().map(|(k, _)| *k).collect();
            for (k, a) in c.args.iter().enumerate() {
                if a.is_some_and(|a| closure_params[i].contains(&a)) {
                    handed.push(k);
                }
            }
            if handed.is_empty() {
                continue;
            }
            for j in resolver.resolve(&fns[i], c) {
                let offset = usize::from(fns[j].has_self);
                let mut grew = !run[j];
                for &k in &handed {
                    if let Some(Some(p)) = fns[j].params.get(k + offset) {
                        if !closure_params[j].contains(p) {
                            closure_params[j].push(*p);
                            grew = true;
                        }
                    }
                }
                run[j] = true;
                if grew {
                    stack.push(j);
                }
            }
        }
    }
    run
}

/// [`Demand::setter_names`]: none when the crate has no slots.
fn setter_names(index: &CrateIndex) -> HashSet<String> {
    if !index.has_slots {
        return HashSet::new();
    }
    (index.fns.iter())
        .filter(|(_, sigs)| {
            let types: HashSet<&str> = sigs.iter().filter_map(|s| s.self_type.as_deref()).collect();
            types.len() > 1 || sigs.iter().any(|s| s.stores_param.is_some())
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// A function that matters whatever it calls: it configures a client, makes a
/// fresh id that reaches a send, returns a claim or a role-typed value, retries.
fn has_own_facts(f: &Function, index: &CrateIndex) -> bool {
    !f.kafka_clients.is_empty()
        || !f.kafka_sent_topics.is_empty()
        || !f.ack_settings.is_empty()
        || !f.id_flows.is_empty()
        || !f.pass_id_flows.is_empty()
        || !f.returns_claims.is_empty()
        || !f.returns_batches.is_empty()
        || !f.retries.is_empty()
        || index.fns.get(&f.ident).is_some_and(|sigs| {
            sigs.iter().any(|s| {
                s.self_type == f.self_type && (s.ret.role.is_some() || s.returns_fresh.is_some())
            })
        })
}
