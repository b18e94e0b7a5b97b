//! Lowering of function bodies to the delivery model.
//!
//! Expressions are visited in evaluation order; each appends the nodes it produces
//! (events, branches, loops, closures, exits) to an output vector and returns an
//! [`Info`] about its value: which local value it denotes, its role, a SQL text it
//! carries, a builder it starts (`sqlx::query(..)` before `.execute(..)`), and the
//! values it mentions. Roles come from declared types and from the API packs.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use proc_macro2::Span as PmSpan;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Pat, Stmt, Token};

mod calls;
mod macros;
mod outcome;
use outcome::*;

use super::types::{bounded_generic, impl_arg};
use super::{is_test_attr, resolve_path, sql, type_info, CrateIndex, TypeInfo, UseMap};
use crate::apis::{ApiEvent as Api, Apis, CallSpec, Role, Target};
use crate::diagnostic::Span;
use crate::ir::{
    AckSetting, Call, Callee, ClientFamily, ClosureRun, Event, EventKind, ExitKind, ExternalKind,
    Function, IdFlow, KafkaClient, Loc, Node, Prop, SqlFacts, SqlKind, Tables, ValueId,
};
use crate::support::lines::LineIndex;

/// Names the lowering makes facts of by themselves, besides the API knowledge:
/// consumer options that turn acks off, topics subscribed and sent to, backon's
/// retries. A function body naming none of them nor the API knowledge has no fact
/// of its own (`driver::lazy`).
pub const NAMES: &[&str] = &[
    "BasicConsumeOptions",
    "AckPolicy",
    "subscribe",
    "FutureRecord",
    "BaseRecord",
    "retry",
    "retry_if",
    "include_str",
];

/// Calls and macros whose awaited result waits for spawned tasks.
pub const TASK_JOINS: &[&str] = &[
    "join_all",
    "try_join_all",
    "join_next",
    "join_next_with_id",
    "join",
    "try_join",
];

/// What a loop's text says of a retry (`is_retry_loop`; `driver::lazy` reads the
/// same text before parsing).
pub struct RetryText {
    /// It names attempts, retries or backoff and handles an error or continues: a
    /// retry, whatever the loop.
    pub named: bool,
    pub handles_err: bool,
    /// It leaves (`break`, `return`).
    pub leaves: bool,
}

impl RetryText {
    pub fn of(text: &str) -> RetryText {
        let text = text.to_ascii_lowercase();
        let handles_err = text.contains("err") || text.contains("is_ok") || text.contains("ok(");
        let named = ["attempt", "retry", "retries", "tries", "backoff"]
            .iter()
            .any(|w| text.contains(w))
            && (handles_err || text.contains("continue"));
        RetryText {
            named,
            handles_err,
            leaves: text.contains("break") || text.contains("return"),
        }
    }
}

pub struct FileCx<'a> {
    pub path: Arc<str>,
    /// The file's path on disk (`include_str!` is relative to it).
    pub abs: &'a std::path::Path,
    pub included: &'a super::text::Included<'a>,
    pub apis: &'a Apis,
    pub index: &'a CrateIndex,
    pub uses: &'a UseMap,
    pub lines: &'a LineIndex<'a>,
    pub module: Vec<String>,
    /// The crate-wide facts the file's lowering read (the front end re-lowers a file
    /// when one of them changes; the prefilter parses the files declaring the types
    /// whose fields were read).
    pub reads: &'a std::cell::RefCell<IndexReads>,
    /// Lower only the functions whose bodies open at these positions (line,
    /// 0-based column): those parsed since the file was last lowered.
    pub only: Option<&'a HashSet<(usize, usize)>>,
}

impl FileCx<'_> {
    /// Whether the function with this body is lowered (see `only`).
    fn wanted(&self, block: &syn::Block) -> bool {
        self.only.is_none_or(|only| {
            let s = block.brace_token.span.open().start();
            only.contains(&(s.line, s.column))
        })
    }
}

/// Keys of the [`CrateIndex`] a file's lowering read, found or not (and, in the
/// front end, the keys whose entries changed).
#[derive(Clone, Debug, Default)]
pub struct IndexReads {
    /// Function names whose signatures were read whatever their owner.
    pub fns: HashSet<String>,
    /// Function names read for one owner: a type or trait (`self_type` or
    /// `trait_name`), or `""` for free functions.
    pub owned: HashMap<String, HashSet<String>>,
    /// Function names whose number of methods was read ([`links_untyped_receiver`]).
    pub counted: HashSet<String>,
    /// Types whose fields were read (`fields`).
    pub fields: HashSet<String>,
    /// Constant names (`consts`).
    pub consts: HashSet<String>,
}

impl IndexReads {
    /// Whether any key read is among the keys `changed`.
    /// Adds what `other` read.
    pub fn extend(&mut self, other: IndexReads) {
        self.fns.extend(other.fns);
        for (name, owners) in other.owned {
            self.owned.entry(name).or_default().extend(owners);
        }
        self.counted.extend(other.counted);
        self.fields.extend(other.fields);
        self.consts.extend(other.consts);
    }

    pub fn touches(&self, changed: &IndexReads) -> bool {
        self.fns.iter().any(|k| changed.fns.contains(k))
            || self.owned.iter().any(|(name, owners)| {
                changed
                    .owned
                    .get(name)
                    .is_some_and(|o| owners.iter().any(|t| o.contains(t)))
            })
            || self.counted.iter().any(|k| changed.counted.contains(k))
            || self.fields.iter().any(|k| changed.fields.contains(k))
            || self.consts.iter().any(|k| changed.consts.contains(k))
    }
}

fn note(set: &mut HashSet<String>, key: &str) {
    if !set.contains(key) {
        set.insert(key.to_string());
    }
}

impl FileCx<'_> {
    /// The crate's functions named `name`, read whatever their owner.
    fn fn_sigs(&self, name: &str) -> Option<&Vec<super::FnSig>> {
        note(&mut self.reads.borrow_mut().fns, name);
        self.index.fns.get(name)
    }

    /// The crate's functions named `name`, of which only those of `owner` (a type
    /// or trait; `""`: free functions) will be used.
    fn owned_sigs(&self, name: &str, owner: &str) -> Option<&Vec<super::FnSig>> {
        let mut reads = self.reads.borrow_mut();
        match reads.owned.get_mut(name) {
            Some(owners) => note(owners, owner),
            None => {
                reads
                    .owned
                    .insert(name.to_string(), HashSet::from([owner.to_string()]));
            }
        }
        self.index.fns.get(name)
    }

    /// The value of the crate's constant `name`.
    fn const_value(&self, name: &str) -> Option<&String> {
        note(&mut self.reads.borrow_mut().consts, name);
        self.index.consts.get(name)
    }

    /// The SQL the crate's struct literals put in field `field` of type `ty`.
    fn field_text(&self, ty: &str, field: &str) -> Option<String> {
        self.const_value(&format!("{ty}.{field}"))
            .filter(|t| !t.is_empty())
            .cloned()
    }

    /// The fields of the crate's type `ty`.
    fn fields_of(&self, ty: &str) -> Option<&HashMap<String, TypeInfo>> {
        note(&mut self.reads.borrow_mut().fields, ty);
        self.index.fields.get(ty)
    }

    /// [`links_untyped_receiver`], noted as a read.
    fn links_untyped(&self, name: &str) -> bool {
        note(&mut self.reads.borrow_mut().counted, name);
        links_untyped_receiver(self.index, name)
    }
}

impl super::text::ArgNames for FileCx<'_> {
    fn name_of(&self, arg: &Expr) -> String {
        sql::placeholder_name(&self.text_of(expr_span(arg)))
    }
}

impl FileCx<'_> {
    /// Evaluates strings the code fixes here (a `format!` argument is named by its
    /// text's last name).
    fn eval<'c>(&'c self) -> super::text::Eval<'c> {
        super::text::Eval {
            from: self.abs,
            included: self.included,
            name_of: self,
        }
    }

    fn span(&self, start: PmSpan, end: PmSpan) -> Span {
        self.lines.span(start, end)
    }

    fn loc(&self, start: PmSpan, end: PmSpan) -> Loc {
        Loc {
            path: self.path.clone(),
            span: self.span(start, end),
        }
    }

    /// The source text of a node, whitespace collapsed.
    fn text_of(&self, span: PmSpan) -> String {
        let sp = self.span(span, span);
        let text = self.lines.text();
        let s = text
            .get(sp.byte_start..sp.byte_end.max(sp.byte_start))
            .unwrap_or("");
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace(" .", ".")
            .replace(". ", ".")
    }
}

/// A call that starts a builder; the event happens at one of its terminals.
#[derive(Clone, Debug)]
struct Builder {
    spec: CallSpec,
    loc: Loc,
    text: String,
    sql: Option<SqlFacts>,
    mentions: Vec<ValueId>,
    /// String literals passed along the chain (`.arg("NX")`).
    strs: Vec<String>,
}

#[derive(Clone, Debug, Default)]
struct Info {
    /// The local value this expression denotes (an alias), or the value an event made.
    value: Option<ValueId>,
    role: Option<String>,
    crate_type: Option<String>,
    /// Of a type outside the analyzed code, or a collection ([`TypeInfo::outside`]).
    outside: bool,
    sql: Option<SqlFacts>,
    builder: Option<Box<Builder>>,
    /// Values whose identity appears in the expression.
    mentions: Vec<ValueId>,
    /// Identifiers of paths in the expression (`CommitMode`, `FutureRecord`, `POST`).
    idents: Vec<String>,
    str_lit: Option<String>,
    kafka_config: Option<Box<KafkaClient>>,
    kafka_client: Option<usize>,
    /// A fresh id the expression evaluates to (a helper that mints one).
    fresh: Option<(Loc, String, Option<u32>)>,
    /// The value is not the fresh id its mentions carry (an unknown call's result).
    fresh_blocked: bool,
}

impl Info {
    fn absorb(&mut self, other: &Info) {
        for m in &other.mentions {
            if !self.mentions.contains(m) {
                self.mentions.push(*m);
            }
        }
        self.idents.extend(other.idents.iter().cloned());
        if self.fresh.is_none() {
            self.fresh.clone_from(&other.fresh);
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Value {
    name: String,
    /// The string literal (or constant) the value was bound to (`let key = "..."`).
    text: Option<String>,
    role: Option<String>,
    crate_type: Option<String>,
    outside: bool,
    sql: Option<SqlFacts>,
    builder: Option<Box<Builder>>,
    /// A received message, or a value taken from one (its root message).
    msg_root: Option<ValueId>,
    /// A fresh id (or a value made from one): where it was generated, and the retry
    /// scope it was generated in.
    fresh: Option<(Loc, String, Option<u32>)>,
    /// A Kafka client config being built, or the client made from one (index into
    /// `kafka_clients`).
    kafka_config: Option<Box<KafkaClient>>,
    kafka_client: Option<usize>,
    /// Identifiers of the expression the value was made from (`ExistenceCheck::NX`).
    idents: Vec<String>,
    /// An async block or closure bound to this name: it runs where it is awaited,
    /// called, spawned or handed to another call, not where it is written.
    deferred: Option<Box<Node>>,
    /// A channel made by a `ChannelOpen` and not yet bound: its first binding names it.
    opened: bool,
}

struct Lowerer<'a, 'b> {
    /// The `impl` block of the method being lowered: its bounds type the self type's
    /// generic fields.
    impl_of: Option<&'b syn::ItemImpl>,
    cx: &'a FileCx<'b>,
    values: Vec<Value>,
    scopes: Vec<HashMap<String, ValueId>>,
    fields: HashMap<(ValueId, String), ValueId>,
    self_type: Option<String>,
    labels: Vec<(String, u32)>,
    next_label: u32,
    /// How often each value is mentioned, and how often committed or rolled back.
    uses: Vec<u32>,
    finishes: Vec<u32>,
    /// Claims whose result is discarded (by location), and claims bound to a name
    /// that may or may not be used later.
    unchecked: HashSet<Loc>,
    bound_claims: Vec<(ValueId, Loc)>,
    /// lapin publishes (their confirmation can be awaited), and those whose
    /// confirmation is dropped.
    confirmable: HashSet<Loc>,
    unconfirmed: HashSet<Loc>,
    bound_publishes: Vec<(ValueId, Loc)>,
    /// String literals of the builder chain whose event is being emitted.
    builder_strs: Vec<String>,
    /// A binding of a call's result made by the last statement (value, and where the
    /// output stood after it): a `match` on it right after splits by outcome.
    last_outcome: Option<(ValueId, usize, usize)>,
    /// Lowering the function's return value (its tail or a `return`), outside closures.
    in_return: bool,
    closure_depth: u32,
    /// The element type a closure's first parameter takes (`xs.iter().map(|x| ..)`).
    closure_param_hint: Option<TypeInfo>,
    /// Claims run as statements (their result dropped), with their connection: the
    /// connection may still tell the result (rusqlite `changes()`).
    dropped_claims: Vec<(Option<ValueId>, Loc)>,
    returned: HashSet<ValueId>,
    returns_claims: Vec<Loc>,
    /// Calls of the crate's functions whose result is dropped, by location, and
    /// calls whose result is bound (unused if the binding is never read).
    unused_calls: HashSet<Loc>,
    bound_calls: Vec<(ValueId, Loc)>,
    /// Retry scopes being lowered (innermost last), and fresh ids that reached what a
    /// retried step sends (MA002), by the scope they belong to.
    retry_scopes: Vec<(u32, Loc, String)>,
    /// Every retry scope lowered (not consume loops), for the review checklist.
    retries_seen: Vec<(Loc, String)>,
    next_scope: u32,
    id_flows: Vec<(Option<u32>, IdFlow)>,
    kafka_clients: Vec<KafkaClient>,
    ack_settings: Vec<AckSetting>,
    /// Topics this function sends Kafka records to (`FutureRecord::to("t")`).
    sent_topics: Vec<String>,
}

/// Lowers every function and method in `items`; returns how many test items were skipped.
pub fn lower_items(
    cx: &FileCx,
    items: &[syn::Item],
    include_tests: bool,
    out: &mut Vec<Function>,
) -> usize {
    let mut skipped = 0;
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                if !include_tests && is_test_attr(&f.attrs) {
                    skipped += 1;
                    continue;
                }
                if cx.wanted(&f.block) {
                    out.push(lower_fn(
                        cx,
                        &f.sig,
                        &f.block,
                        (None, None),
                        &cx.module,
                        None,
                    ));
                }
            }
            syn::Item::Impl(imp) => {
                if !include_tests && is_test_attr(&imp.attrs) {
                    skipped += 1;
                    continue;
                }
                let self_ty = super::type_name(&imp.self_ty);
                let trait_name = super::impl_trait_name(imp);
                for it in &imp.items {
                    if let syn::ImplItem::Fn(m) = it {
                        if !include_tests && is_test_attr(&m.attrs) {
                            skipped += 1;
                            continue;
                        }
                        if !cx.wanted(&m.block) {
                            continue;
                        }
                        out.push(lower_fn(
                            cx,
                            &m.sig,
                            &m.block,
                            (self_ty.clone(), trait_name.clone()),
                            &cx.module,
                            Some(imp),
                        ));
                    }
                }
            }
            syn::Item::Trait(t) => {
                for it in &t.items {
                    if let syn::TraitItem::Fn(m) = it {
                        if let Some(block) = m.default.as_ref().filter(|b| cx.wanted(b)) {
                            let name = Some(t.ident.to_string());
                            out.push(lower_fn(
                                cx,
                                &m.sig,
                                block,
                                (name.clone(), name),
                                &cx.module,
                                None,
                            ));
                        }
                    }
                }
            }
            syn::Item::Mod(m) => {
                if !include_tests && is_test_attr(&m.attrs) {
                    skipped += 1;
                    continue;
                }
                if let Some((_, inner)) = &m.content {
                    let mut sub = FileCx {
                        path: cx.path.clone(),
                        abs: cx.abs,
                        included: cx.included,
                        apis: cx.apis,
                        index: cx.index,
                        uses: cx.uses,
                        lines: cx.lines,
                        module: cx.module.clone(),
                        reads: cx.reads,
                        only: cx.only,
                    };
                    sub.module.push(m.ident.to_string());
                    skipped += lower_items(&sub, inner, include_tests, out);
                }
            }
            _ => {}
        }
    }
    skipped
}

/// Lowers one function: `owner` is its `impl`'s self type and trait (or a trait's, for
/// a default method), `imp` the `impl` block it is written in.
fn lower_fn(
    cx: &FileCx,
    sig: &syn::Signature,
    block: &syn::Block,
    owner: (Option<String>, Option<String>),
    module: &[String],
    imp: Option<&syn::ItemImpl>,
) -> Function {
    let (self_type, trait_name) = owner;
    let mut l = Lowerer {
        impl_of: imp,
        cx,
        values: Vec::new(),
        scopes: vec![HashMap::new()],
        fields: HashMap::new(),
        self_type: self_type.clone(),
        labels: Vec::new(),
        next_label: 0,
        uses: Vec::new(),
        finishes: Vec::new(),
        unchecked: HashSet::new(),
        bound_claims: Vec::new(),
        confirmable: HashSet::new(),
        unconfirmed: HashSet::new(),
        bound_publishes: Vec::new(),
        builder_strs: Vec::new(),
        last_outcome: None,
        in_return: false,
        closure_depth: 0,
        closure_param_hint: None,
        dropped_claims: Vec::new(),
        returned: HashSet::new(),
        returns_claims: Vec::new(),
        unused_calls: HashSet::new(),
        bound_calls: Vec::new(),
        retry_scopes: Vec::new(),
        retries_seen: Vec::new(),
        next_scope: 0,
        id_flows: Vec::new(),
        kafka_clients: Vec::new(),
        ack_settings: Vec::new(),
        sent_topics: Vec::new(),
    };
    let mut params = Vec::new();
    let mut has_self = false;
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(_) => {
                has_self = true;
                let v = l.new_value(
                    "self",
                    TypeInfo {
                        role: None,
                        crate_type: self_type.clone(),
                        outside: false,
                        generic: None,
                    },
                );
                l.bind("self", v);
                params.push(Some(v));
            }
            syn::FnArg::Typed(pt) => {
                let mut ti = l.type_info(&pt.ty);
                // `store: &S` with `S: Store` (or `where S: Store`): the crate's trait,
                // whose implementations a call on it may reach.
                // (`mailer: &M` with `M: lettre::AsyncTransport`: the API's role.)
                if ti.crate_type.is_none() && ti.role.is_none() {
                    if let Some(b) = bounded_generic(
                        l.cx.apis,
                        l.cx.uses,
                        &l.cx.index.traits,
                        &sig.generics,
                        &pt.ty,
                    ) {
                        ti = b;
                    }
                }
                params.push(l.bind_param(&pt.pat, ti));
            }
        }
    }
    let mut body = Node::Seq(l.fn_body(block));
    l.finish(&mut body);
    let ident = sig.ident.to_string();
    Function {
        name: match &self_type {
            Some(t) => format!("{t}::{ident}"),
            None => ident.clone(),
        },
        ident,
        self_type,
        trait_name,
        module: module.to_vec(),
        loc: cx.loc(sig.ident.span(), sig.ident.span()),
        params,
        has_self,
        body,
        value_names: l.values.iter().map(|v| v.name.clone()).collect(),
        id_flows: l.id_flows.into_iter().map(|(_, f)| f).collect(),
        returns_claims: l.returns_claims,
        kafka_clients: l.kafka_clients,
        kafka_sent_topics: l.sent_topics,
        ack_settings: l.ack_settings,
        retries: l.retries_seen,
        dependency: false,
    }
}

const ALIAS_METHODS: &[&str] = &[
    "clone",
    "as_mut",
    "as_ref",
    "deref",
    "deref_mut",
    "borrow",
    "borrow_mut",
    "unwrap",
    "expect",
    "lock",
    "read",
    "write",
    "to_owned",
    "as_str",
    "into",
    "as_deref",
    "as_deref_mut",
    "unwrap_or_default",
    "get_mut",
    "by_ref",
    "detach",
    "into_inner",
    "context",
    "with_context",
    "map_err",
    "ok_or",
    "ok_or_else",
    "ok",
];

/// Method names of standard types: a receiver of unknown type calling one of these is
/// not taken for the crate's own method of that name.
/// Whether `x.name(..)`, `x` of unknown type, is lowered as a call into the crate:
/// the crate has one to three methods so named, and standard types have no method
/// of that name. (The prefilter's demand relies on this rule.)
pub(crate) fn links_untyped_receiver(index: &CrateIndex, name: &str) -> bool {
    if STD_METHODS.contains(&name) || ALIAS_METHODS.contains(&name) {
        return false;
    }
    let n = index
        .fns
        .get(name)
        .map_or(0, |v| v.iter().filter(|s| s.self_type.is_some()).count());
    // SPEC §2: an unknown receiver links to a crate method only when exactly one
    // method has that name.
    n == 1
}

const STD_METHODS: &[&str] = &[
    "as_str",
    "as_bytes",
    "as_slice",
    "to_string",
    "to_vec",
    "len",
    "is_empty",
    "iter",
    "iter_mut",
    "into_iter",
    "get",
    "get_mut",
    "insert",
    "remove",
    "push",
    "push_str",
    "pop",
    "contains",
    "contains_key",
    "map",
    "and_then",
    "unwrap_or",
    "unwrap_or_else",
    "parse",
    "trim",
    "split",
    "join",
    "extend",
    "first",
    "last",
    "keys",
    "values",
    "entry",
    "sort",
    "dedup",
    "retain",
    "filter",
    "find",
    "any",
    "all",
    "collect",
    "take",
    "skip",
    "chain",
    "next",
    "send",
    "recv",
    "try_send",
    "try_recv",
    "lock",
    "read",
    "write",
    "flush",
    "close",
    "cmp",
    "eq",
    "hash",
    "fmt",
    "from",
    "into",
    "try_into",
    "new",
    "default",
    "build",
    "finish",
    "with",
    "set",
    "replace",
    "swap",
    "is_some",
    "is_none",
    "is_ok",
    "is_err",
    "ok",
    "err",
    "expect",
    "unwrap",
];

/// Iterator methods whose items are the receiver's elements.
const ELEMENT_METHODS: &[&str] = &[
    "iter",
    "iter_mut",
    "into_iter",
    "drain",
    "values",
    "values_mut",
    "into_values",
    "filter",
    "rev",
    "skip",
    "take",
    "chain",
    "cloned",
    "copied",
    "peekable",
    "skip_while",
    "take_while",
];

/// Iterator adapters whose closure's first parameter is an element.
const ELEMENT_CLOSURES: &[&str] = &[
    "map",
    "for_each",
    "filter",
    "filter_map",
    "flat_map",
    "inspect",
    "any",
    "all",
    "find",
    "find_map",
    "try_for_each",
    "position",
    "skip_while",
    "take_while",
    "then",
];

const STREAM_CALLBACKS: &[&str] = &[
    "for_each",
    "try_for_each",
    "for_each_concurrent",
    "try_for_each_concurrent",
    "then",
    "and_then",
];

impl<'a, 'b> Lowerer<'a, 'b> {
    // ----- values and scopes -------------------------------------------------

    /// Settles what is known only at the end of the body: which begun transactions
    /// were used, and which claims' results were never looked at.
    fn finish(&mut self, body: &mut Node) {
        for (v, loc) in &self.bound_claims {
            if self.returned.contains(v) && !self.returns_claims.contains(loc) {
                self.returns_claims.push(loc.clone());
            }
        }
        for (v, loc) in std::mem::take(&mut self.bound_calls) {
            if self.uses[v as usize] == 0 {
                self.unused_calls.insert(loc);
            }
        }
        self.bound_claims.clear();
        for (v, loc) in std::mem::take(&mut self.bound_publishes) {
            if self.uses[v as usize] == 0 {
                self.unconfirmed.insert(loc);
            }
        }
        for v in &self.values {
            if let (Some(i), Some(role)) = (v.kafka_client, v.role.as_deref()) {
                if matches!(
                    Role::of(role),
                    Some(Role::KafkaConsumer | Role::KafkaProducer)
                ) && self.kafka_clients[i].role.is_none()
                {
                    self.kafka_clients[i].role = Some(role.to_string());
                }
            }
        }
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            match n {
                Node::Seq(v) | Node::Branch(v) => stack.extend(v.iter_mut()),
                Node::Loop { body, .. } | Node::Closure { body, .. } => stack.push(body),
                Node::ResultBranch { scrutinee, ok, err } => {
                    stack.push(scrutinee);
                    stack.push(ok);
                    stack.push(err);
                }
                Node::Event(e) => match &mut e.kind {
                    EventKind::Begin { tx, used, .. } => {
                        let t = *tx as usize;
                        *used = self.uses[t] > self.finishes[t];
                    }
                    EventKind::Write { unchecked, .. } => {
                        *unchecked = self.unchecked.contains(&e.loc)
                    }
                    EventKind::Publish {
                        confirm: Some(c), ..
                    } => *c = !self.unconfirmed.contains(&e.loc),
                    EventKind::Call(c) => {
                        c.result_unused = self.unused_calls.contains(&e.loc);
                        for (_, n) in c.closures.iter_mut() {
                            stack.push(n);
                        }
                    }
                    _ => {}
                },
                Node::Exit(_) => {}
            }
        }
    }

    /// The event a statement's own call chain ends in (`pool.begin().await?`,
    /// `sqlx::query(..).execute(..).await?`), if it is a call chain.
    fn last_event_of_statement<'n>(e: &Expr, nodes: &'n [Node]) -> Option<&'n Event> {
        let mut e = strip(e);
        while let Expr::Try(t) = e {
            e = strip(&t.expr);
            if let Expr::Await(a) = e {
                e = strip(&a.base);
            }
        }
        if let Expr::Await(a) = e {
            e = strip(&a.base);
        }
        if !matches!(e, Expr::MethodCall(_) | Expr::Call(_) | Expr::Macro(_)) {
            return None;
        }
        for n in nodes.iter().rev() {
            match n {
                // `op?` puts the operation on the success edge: `[op] | return Err`.
                Node::Branch(alts) => match alts.as_slice() {
                    [Node::Seq(ok), Node::Exit(_) | Node::Seq(_)] => match ok.as_slice() {
                        [Node::Event(ev)] => return Some(ev),
                        _ => continue,
                    },
                    _ => continue,
                },
                Node::Exit(_) => continue,
                // The handling of its error, right after it.
                Node::Event(Event {
                    kind: EventKind::ErrorIgnored { .. },
                    ..
                }) => continue,
                Node::Event(ev) => return Some(ev),
                _ => return None,
            }
        }
        None
    }

    /// A confirmable publish a statement awaits only once (`basic_publish(..).await?;`):
    /// the confirmation the first await returns is dropped.
    fn unconfirmed_publish(&self, e: &Expr, nodes: &[Node]) -> Option<Loc> {
        let ev = Self::last_event_of_statement(e, nodes)?;
        if !matches!(ev.kind, EventKind::Publish { .. }) || !self.confirmable.contains(&ev.loc) {
            return None;
        }
        let mut awaits = 0;
        let mut cur = strip(e);
        loop {
            match cur {
                Expr::Try(t) => cur = strip(&t.expr),
                Expr::Await(a) => {
                    awaits += 1;
                    cur = strip(&a.base);
                }
                Expr::MethodCall(m) if ALIAS_METHODS.contains(&m.method.to_string().as_str()) => {
                    cur = strip(&m.receiver)
                }
                _ => break,
            }
        }
        (awaits < 2).then(|| ev.loc.clone())
    }

    /// The call into the crate a statement's own call chain ends in.
    fn crate_call_of_statement(e: &Expr, nodes: &[Node]) -> Option<Loc> {
        match Self::last_event_of_statement(e, nodes) {
            Some(ev) if matches!(ev.kind, EventKind::Call(_)) => Some(ev.loc.clone()),
            _ => None,
        }
    }

    /// `e` names the call result bound by the statement just before, with nothing
    /// emitted since: a match on it splits by the call's outcome.
    fn bound_outcome(&self, e: &Expr, out: &[Node]) -> bool {
        let Expr::Path(p) = strip(e) else {
            return false;
        };
        let Some(v) = p
            .path
            .get_ident()
            .and_then(|id| self.lookup(&id.to_string()))
        else {
            return false;
        };
        self.last_outcome == Some((v, out.len(), out.as_ptr() as usize))
    }

    /// The claim (`ON CONFLICT DO NOTHING`) a statement's own call chain ends in.
    fn claim_of_statement(e: &Expr, nodes: &[Node]) -> Option<Loc> {
        Self::claim_target_of_statement(e, nodes).map(|(loc, _)| loc)
    }

    /// The claim a statement's call chain ends in, with the connection it runs on.
    fn claim_target_of_statement(e: &Expr, nodes: &[Node]) -> Option<(Loc, Option<ValueId>)> {
        match Self::last_event_of_statement(e, nodes) {
            Some(ev) => match &ev.kind {
                EventKind::Write { sql, target, .. } if sql.ignores_conflict => {
                    Some((ev.loc.clone(), *target))
                }
                _ => None,
            },
            None => None,
        }
    }

    /// A statement that begins a transaction and keeps it only in a binding (or
    /// nowhere): the transaction counts as used only if the binding is used.
    fn reset_begin_uses(&mut self, e: &Expr, nodes: &[Node]) {
        if let Some(Event {
            kind: EventKind::Begin {
                tx, fresh: true, ..
            },
            ..
        }) = Self::last_event_of_statement(e, nodes)
        {
            self.uses[*tx as usize] = 0;
        }
    }

    /// A write to a pool or connection (or to another store such as Redis) commits by
    /// itself unless a transaction is open on it; a transaction or unknown target may not.
    fn autocommit_target(&self, target: Option<ValueId>, facts: &SqlFacts) -> bool {
        match target {
            Some(t) => matches!(
                self.values[t as usize].role.as_deref().and_then(Role::of),
                Some(Role::DbPool | Role::DbConn | Role::RedisConn)
            ),
            None => facts.tables.iter().any(|t| t == "redis"),
        }
    }

    /// The error of the operation just lowered is handled at `sp` and the code goes on.
    fn error_ignored(&self, sp: PmSpan, how: &str, told: bool) -> Node {
        Node::Event(Event {
            kind: EventKind::ErrorIgnored {
                told,
                arm: matches!(
                    how,
                    "if let Err(..)" | "Err(..) =>" | "let Ok(..) = .. else"
                ),
            },
            loc: self.cx.loc(sp, sp),
            text: how.to_string(),
            describe: "error handled".into(),
        })
    }

    fn new_value(&mut self, name: &str, ti: TypeInfo) -> ValueId {
        self.uses.push(0);
        self.finishes.push(0);
        self.values.push(Value {
            name: name.to_string(),
            role: ti.role,
            crate_type: ti.crate_type,
            outside: ti.outside,
            ..Value::default()
        });
        (self.values.len() - 1) as ValueId
    }

    fn bind(&mut self, name: &str, v: ValueId) {
        if let Some(val) = self.values.get_mut(v as usize).filter(|val| val.opened) {
            val.opened = false;
            val.name = name.to_string();
        }
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), v);
        }
    }

    fn lookup(&self, name: &str) -> Option<ValueId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn type_info(&self, ty: &syn::Type) -> TypeInfo {
        type_info(
            self.cx.apis,
            self.cx.uses,
            self.cx.index,
            ty,
            self.self_type.as_deref(),
        )
    }

    /// Which spawned tasks an `.await` waits for: `Some(Some(h))` the task of handle
    /// `h`; `Some(None)` possibly any task (`join_all(handles)`, `set.join_next()`, a
    /// local whose type is unknown, which may hold a handle taken from a collection).
    fn awaited_tasks(&self, base: &Expr, info: &Info) -> Option<Option<ValueId>> {
        if let Some(v) = info.value {
            let val = &self.values[v as usize];
            if Role::JoinHandle.is(val.role.as_deref()) {
                return Some(Some(v));
            }
            if val.role.is_none() && val.msg_root.is_none() && matches!(strip(base), Expr::Path(_))
            {
                return Some(None);
            }
        }
        // `dispatch(job).await`, `dispatch` returning the `JoinHandle` of the task it
        // spawned: the tasks it spawned are awaited.
        if info.value.is_none() && Role::JoinHandle.is(info.role.as_deref()) {
            return Some(None);
        }
        let joins = TASK_JOINS;
        let callee = match strip(base) {
            Expr::Call(c) => match strip(&c.func) {
                Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                _ => None,
            },
            Expr::MethodCall(m) => Some(m.method.to_string()),
            Expr::Macro(m) => m.mac.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        callee.filter(|c| joins.contains(&c.as_str())).map(|_| None)
    }

    fn bind_param(&mut self, pat: &Pat, ti: TypeInfo) -> Option<ValueId> {
        match pat {
            Pat::Ident(pi) => {
                let name = pi.ident.to_string();
                let is_msg = ti.role.as_deref().is_some_and(is_message_role);
                let v = self.new_value(&name, ti);
                if is_msg {
                    self.values[v as usize].msg_root = Some(v);
                }
                self.bind(&name, v);
                Some(v)
            }
            Pat::Type(pt) => {
                let ti = self.type_info(&pt.ty);
                self.bind_param(&pt.pat, ti)
            }
            Pat::Reference(r) => self.bind_param(&r.pat, ti),
            // Extractors: `State(state): State<AppState>`, `Json(body): Json<T>`.
            Pat::TupleStruct(ts) if ts.elems.len() == 1 => self.bind_param(&ts.elems[0], ti),
            other => {
                self.bind_pattern(other, &Info::default());
                None
            }
        }
    }

    fn is_message(&self, v: ValueId) -> bool {
        self.values
            .get(v as usize)
            .is_some_and(|x| x.msg_root.is_some())
    }

    fn root(&self, v: ValueId) -> Option<ValueId> {
        self.values.get(v as usize).and_then(|x| x.msg_root)
    }

    /// Binds the identifiers of a pattern to the value of `info`: a single binding
    /// (through `Some(..)`, `Ok(..)`, references) aliases the value; bindings inside
    /// structs and tuples become new values taken from it.
    fn bind_pattern(&mut self, pat: &Pat, info: &Info) {
        match pat {
            Pat::Ident(pi) => {
                let name = pi.ident.to_string();
                if let Some((_, sub)) = &pi.subpat {
                    self.bind_pattern(sub, info);
                }
                let v = match info.value {
                    Some(v) => v,
                    None => self.value_from(&name, info),
                };
                self.bind(&name, v);
            }
            Pat::Type(pt) => {
                let ti = self.type_info(&pt.ty);
                let mut info = info.clone();
                if info.value.is_none() {
                    if ti.role.is_some() {
                        info.role = ti.role.clone();
                    }
                    if ti.crate_type.is_some() {
                        info.crate_type = ti.crate_type.clone();
                    }
                } else if let Some(v) = info.value {
                    let val = &mut self.values[v as usize];
                    if val.role.is_none() {
                        val.role = ti.role;
                    }
                    if val.crate_type.is_none() {
                        val.crate_type = ti.crate_type;
                    }
                }
                self.bind_pattern(&pt.pat, &info);
            }
            Pat::Reference(r) => self.bind_pattern(&r.pat, info),
            Pat::Paren(p) => self.bind_pattern(&p.pat, info),
            Pat::TupleStruct(ts) => {
                let wrapper =
                    ts.path.segments.last().is_some_and(|s| {
                        matches!(s.ident.to_string().as_str(), "Some" | "Ok" | "Err")
                    });
                if wrapper && ts.elems.len() == 1 {
                    self.bind_pattern(&ts.elems[0], info);
                } else {
                    let derived = self.derived(info);
                    for e in &ts.elems {
                        self.bind_pattern(e, &derived);
                    }
                }
            }
            Pat::Tuple(t) => {
                let derived = self.derived(info);
                for e in &t.elems {
                    self.bind_pattern(e, &derived);
                }
            }
            Pat::Struct(s) => {
                let derived = self.derived(info);
                for f in &s.fields {
                    self.bind_pattern(&f.pat, &derived);
                }
            }
            Pat::Slice(s) => {
                let derived = self.derived(info);
                for e in &s.elems {
                    self.bind_pattern(e, &derived);
                }
            }
            Pat::Or(o) => {
                for c in &o.cases {
                    self.bind_pattern(c, info);
                }
            }
            _ => {}
        }
    }

    /// Info for a part of a value: no identity of its own, taken from the message.
    fn derived(&self, info: &Info) -> Info {
        let mut mentions = info.mentions.clone();
        if let Some(v) = info.value {
            mentions.insert(0, v);
        }
        let mut idents = info.idents.clone();
        idents.truncate(32);
        Info {
            mentions,
            idents,
            ..Info::default()
        }
    }

    /// A new value for a binding of an expression that denotes no existing value.
    fn value_from(&mut self, name: &str, info: &Info) -> ValueId {
        let v = self.new_value(
            name,
            TypeInfo {
                role: info.role.clone(),
                crate_type: info.crate_type.clone(),
                outside: info.outside,
                generic: None,
            },
        );
        let root = info.mentions.iter().find_map(|m| self.root(*m));
        let fresh = if info.fresh_blocked {
            None
        } else {
            info.fresh.clone().or_else(|| {
                info.mentions
                    .iter()
                    .find_map(|m| self.values[*m as usize].fresh.clone())
            })
        };
        let val = &mut self.values[v as usize];
        val.text.clone_from(&info.str_lit);
        val.fresh = fresh;
        val.kafka_config = info.kafka_config.clone();
        val.kafka_client = info.kafka_client;
        val.idents = info.idents.iter().take(16).cloned().collect();
        val.sql = info
            .sql
            .clone()
            .or_else(|| info.str_lit.as_deref().map(sql::facts));
        val.builder = info.builder.clone();
        val.msg_root = root;
        v
    }

    fn value_info(&mut self, v: ValueId) -> Info {
        self.uses[v as usize] += 1;
        if self.in_return {
            self.returned.insert(v);
        }
        let val = &self.values[v as usize];
        Info {
            idents: val.idents.clone(),
            kafka_config: val.kafka_config.clone(),
            kafka_client: val.kafka_client,
            value: Some(v),
            role: val.role.clone(),
            crate_type: val.crate_type.clone(),
            outside: val.outside,
            sql: val.sql.clone(),
            builder: val.builder.clone(),
            mentions: vec![v],
            ..Info::default()
        }
    }

    // ----- blocks and statements ---------------------------------------------

    /// The function's own body: its tail expression is what the function returns.
    fn fn_body(&mut self, block: &syn::Block) -> Vec<Node> {
        self.scopes.push(HashMap::new());
        let mut out = Vec::new();
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            let tail = i + 1 == n && matches!(stmt, Stmt::Expr(_, None));
            self.in_return = tail;
            self.stmt(stmt, &mut out);
            self.in_return = false;
        }
        self.scopes.pop();
        out
    }

    fn block(&mut self, block: &syn::Block) -> Vec<Node> {
        self.scopes.push(HashMap::new());
        let mut out = Vec::new();
        for stmt in &block.stmts {
            self.stmt(stmt, &mut out);
        }
        self.scopes.pop();
        out
    }

    /// A block used as a value: its nodes go to `out`, its tail expression's info is returned.
    fn block_value(&mut self, block: &syn::Block, out: &mut Vec<Node>) -> Info {
        self.scopes.push(HashMap::new());
        let mut info = Info::default();
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                Stmt::Expr(e, None) if i + 1 == n => info = self.expr(e, out),
                _ => self.stmt(stmt, out),
            }
        }
        self.scopes.pop();
        info
    }

    fn stmt(&mut self, stmt: &Stmt, out: &mut Vec<Node>) {
        let start = out.len();
        let before: Vec<u32> = self
            .bound_claims
            .iter()
            .map(|(v, _)| self.uses[*v as usize])
            .collect();
        self.stmt_inner(stmt, out);
        // A bound claim looked at for the first time: it is tested here, before what
        // the statement does.
        let mut tested = Vec::new();
        for (i, (v, loc)) in self.bound_claims.iter().enumerate() {
            if before.get(i).is_some_and(|b| *b == 0) && self.uses[*v as usize] > 0 {
                tested.push(Node::Event(Event {
                    kind: EventKind::ClaimTested { claim: loc.clone() },
                    loc: loc.clone(),
                    text: self.values[*v as usize].name.clone(),
                    describe: "claim tested".into(),
                }));
            }
        }
        if !tested.is_empty() {
            out.splice(start..start, tested);
        }
    }

    fn stmt_inner(&mut self, stmt: &Stmt, out: &mut Vec<Node>) {
        match stmt {
            Stmt::Local(local) => {
                let out_start = out.len();
                let mut info = Info::default();
                let mut claim_binding = None;
                let mut pending_publish = None;
                let mut pending_call = None;
                if let Some(init) = &local.init {
                    if let (Expr::Closure(_) | Expr::Async(_), Pat::Ident(pi)) =
                        (strip(&init.expr), &local.pat)
                    {
                        let mut tmp = Vec::new();
                        self.expr(&init.expr, &mut tmp);
                        let name = pi.ident.to_string();
                        let v = self.new_value(&name, TypeInfo::default());
                        self.values[v as usize].deferred = tmp.pop().map(Box::new);
                        self.bind(&name, v);
                        return;
                    }
                    let start = out.len();
                    info = self.expr(&init.expr, out);
                    if matches!(local.pat, Pat::Ident(_) | Pat::Wild(_) | Pat::Type(_)) {
                        self.reset_begin_uses(&init.expr, &out[start..]);
                    }
                    pending_publish = self.unconfirmed_publish(&init.expr, &out[start..]);
                    pending_call = Self::crate_call_of_statement(&init.expr, &out[start..]);
                    if let Some(loc) = Self::claim_of_statement(&init.expr, &out[start..]) {
                        let mut pat = &local.pat;
                        while let Pat::Type(t) = pat {
                            pat = &t.pat;
                        }
                        match pat {
                            Pat::Ident(pi) => claim_binding = Some((pi.ident.to_string(), loc)),
                            Pat::Wild(_) => {
                                self.unchecked.insert(loc);
                            }
                            _ => {}
                        }
                    }
                    let fallible = ends_in_fallible(&out[start..]);
                    if let Some((_, diverge)) = &init.diverge {
                        let mut els = Vec::new();
                        // `let Ok(v) = op else { … }`: the `else` is the failure path.
                        if fallible && result_pattern(&local.pat) == Some(true) {
                            els.push(self.error_ignored(
                                local.pat.span(),
                                "let Ok(..) = .. else",
                                false,
                            ));
                        }
                        self.expr(diverge, &mut els);
                        out.push(Node::Branch(vec![Node::Seq(vec![]), Node::Seq(els)]));
                    }
                }
                // `let _ = op.await;`: the operation's error is dropped.
                let dropped = match &local.pat {
                    Pat::Wild(_) => true,
                    Pat::Ident(pi) => pi.ident.to_string().starts_with('_') && pi.subpat.is_none(),
                    _ => false,
                };
                if dropped
                    && local
                        .init
                        .as_ref()
                        .is_some_and(|i| i.diverge.is_none() && !panics_or_propagates(&i.expr))
                    && ends_in_fallible(out)
                    && out.len() > out_start
                {
                    let sp = local
                        .let_token
                        .span
                        .join(local.pat.span())
                        .unwrap_or(local.let_token.span);
                    out.push(self.error_ignored(sp, "let _ =", false));
                }
                self.bind_pattern(&local.pat, &info);
                match (pending_call, &local.pat) {
                    (Some(loc), Pat::Ident(pi)) => {
                        if let Some(v) = self.lookup(&pi.ident.to_string()) {
                            self.uses[v as usize] = 0;
                            self.bound_calls.push((v, loc));
                        }
                    }
                    (Some(loc), Pat::Wild(_)) => {
                        self.unused_calls.insert(loc);
                    }
                    _ => {}
                }
                if let (Expr::Await(_) | Expr::Call(_) | Expr::MethodCall(_), Pat::Ident(pi)) = (
                    strip(
                        local
                            .init
                            .as_ref()
                            .map(|i| &*i.expr)
                            .unwrap_or(&Expr::Verbatim(Default::default())),
                    ),
                    &local.pat,
                ) {
                    if ends_in_fallible(out) {
                        if let Some(v) = self.lookup(&pi.ident.to_string()) {
                            self.last_outcome = Some((v, out.len(), out.as_ptr() as usize));
                        }
                    }
                }
                if let (Some(loc), Pat::Ident(pi)) = (pending_publish, &local.pat) {
                    if let Some(v) = self.lookup(&pi.ident.to_string()) {
                        self.uses[v as usize] = 0;
                        self.bound_publishes.push((v, loc));
                    }
                }
                if let Some((name, loc)) = claim_binding {
                    if let Some(v) = self.lookup(&name) {
                        self.uses[v as usize] = 0;
                        self.unchecked.insert(loc.clone());
                        self.bound_claims.push((v, loc));
                    }
                }
            }
            Stmt::Expr(e, semi) => {
                let start = out.len();
                self.expr(e, out);
                // `op.await;`: a result dropped unread (rustc warns of an unused `Result`).
                if semi.is_some()
                    && matches!(strip(e), Expr::Await(_))
                    && !panics_or_propagates(e)
                    && out.len() > start
                    && ends_in_fallible(out)
                {
                    out.push(self.error_ignored(e.span(), "the statement", false));
                }
                if semi.is_some() {
                    if let Some((loc, target)) = Self::claim_target_of_statement(e, &out[start..]) {
                        self.unchecked.insert(loc.clone());
                        self.dropped_claims.push((target, loc));
                    }
                    self.reset_begin_uses(e, &out[start..]);
                    if let Some(loc) = self.unconfirmed_publish(e, &out[start..]) {
                        self.unconfirmed.insert(loc);
                    }
                    if let Some(loc) = Self::crate_call_of_statement(e, &out[start..]) {
                        self.unused_calls.insert(loc);
                    }
                }
            }
            Stmt::Macro(m) => {
                self.mac(&m.mac, out);
            }
            Stmt::Item(_) => {}
        }
    }

    // ----- expressions -------------------------------------------------------

    fn expr(&mut self, e: &Expr, out: &mut Vec<Node>) -> Info {
        match e {
            Expr::Path(p) => self.path_expr(&p.path),
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Str(s) => Info {
                    str_lit: Some(s.value()),
                    ..Info::default()
                },
                _ => Info::default(),
            },
            Expr::Reference(r) => self.expr(&r.expr, out),
            Expr::Paren(p) => self.expr(&p.expr, out),
            Expr::Group(g) => self.expr(&g.expr, out),
            Expr::Unary(u) => self.expr(&u.expr, out),
            Expr::Cast(c) => self.expr(&c.expr, out),
            Expr::Await(a) => {
                if let Some(n) = self.deferred_of(&a.base) {
                    out.push(n);
                }
                let info = self.expr(&a.base, out);
                if let Some(handle) = self.awaited_tasks(&a.base, &info) {
                    let loc = self.cx.loc(expr_span(&a.base), a.await_token.span());
                    out.push(Node::Event(Event {
                        kind: EventKind::AwaitHandle { handle },
                        loc,
                        text: format!("{}.await", short_text(&self.cx.text_of(expr_span(&a.base)))),
                        describe: "task awaited".into(),
                    }));
                }
                info
            }
            Expr::Try(t) => {
                let info = self.expr(&t.expr, out);
                if let Some(Node::Event(Event {
                    kind: EventKind::Call(c),
                    ..
                })) = out.last_mut()
                {
                    c.propagates_err = true;
                }
                // `tx.commit().await?`, `query.execute(..).await?`, `consumer.commit_message(..)?`:
                // on the error edge the operation failed, so it did not happen there.
                let failed_here = matches!(
                    out.last(),
                    Some(Node::Event(Event {
                        kind: EventKind::Commit { .. }
                            | EventKind::Write { .. }
                            | EventKind::Publish { .. }
                            | EventKind::External { .. }
                            | EventKind::Ack { .. },
                        ..
                    }))
                );
                if failed_here {
                    let commit = out.pop().unwrap_or(Node::Seq(vec![]));
                    // The error edge says what failed (MA014), except for an ack.
                    let exit = Node::Exit(ExitKind::Return { err: Some(true) });
                    let err = match &commit {
                        Node::Event(ev) if !matches!(ev.kind, EventKind::Ack { .. }) => {
                            Node::Seq(vec![
                                Node::Event(Event {
                                    kind: EventKind::Failed {
                                        what: Box::new(ev.kind.clone()),
                                    },
                                    ..ev.clone()
                                }),
                                exit,
                            ])
                        }
                        _ => exit,
                    };
                    out.push(Node::Branch(vec![Node::Seq(vec![commit]), err]));
                } else {
                    out.push(Node::Branch(vec![
                        Node::Seq(vec![]),
                        Node::Exit(ExitKind::Return { err: Some(true) }),
                    ]));
                }
                info
            }
            Expr::Field(f) => {
                let base = self.expr(&f.base, out);
                let name = match &f.member {
                    syn::Member::Named(id) => id.to_string(),
                    syn::Member::Unnamed(i) => i.index.to_string(),
                };
                self.field(&base, &name)
            }
            Expr::MethodCall(mc) => self.method_call(mc, out),
            Expr::Call(c) => self.call(c, out),
            Expr::Macro(m) => self.mac(&m.mac, out),
            Expr::Block(b) => self.block_value(&b.block, out),
            Expr::Unsafe(b) => self.block_value(&b.block, out),
            Expr::Const(b) => self.block_value(&b.block, out),
            Expr::Async(a) => {
                let mut body = Vec::new();
                self.block_value(&a.block, &mut body);
                let sp = a.async_token.span.join(a.block.brace_token.span.close());
                let sp = sp
                    .filter(|_| a.attrs.is_empty())
                    .unwrap_or_else(|| a.span());
                let loc = self.cx.loc(sp, sp);
                out.push(Node::Closure {
                    body: Box::new(Node::Seq(body)),
                    run: ClosureRun::Now,
                    param: None,
                    handle: None,
                    loc,
                    text: "async block".into(),
                });
                Info::default()
            }
            Expr::Closure(c) => {
                self.closure(c, ClosureRun::Now, None, out);
                Info::default()
            }
            Expr::If(i) => self.if_expr(i, out),
            Expr::Match(m) => {
                let mut scr_nodes = Vec::new();
                let scrut = self.expr(&m.expr, &mut scr_nodes);
                let mut arms = Vec::new();
                let mut kinds = Vec::new();
                // The roles the arms that do not diverge evaluate to.
                let mut values: Vec<(Option<String>, Option<String>)> = Vec::new();
                for arm in &m.arms {
                    self.scopes.push(HashMap::new());
                    self.bind_pattern(&arm.pat, &scrut);
                    let mut body = Vec::new();
                    if let Some((_, g)) = &arm.guard {
                        self.expr(g, &mut body);
                    }
                    let v = self.expr(&arm.body, &mut body);
                    if !matches!(body.last(), Some(Node::Exit(_))) {
                        values.push((v.role, v.crate_type));
                    }
                    self.scopes.pop();
                    arms.push(Node::Seq(body));
                    kinds.push(result_pattern(&arm.pat));
                }
                // `let mailer = match cfg.tls { .. => SmtpTransport::relay(h)?.build(),
                // .. => SmtpTransport::unencrypted_localhost() }`: every arm that yields a
                // value yields the same kind of value.
                let agreed = match values.split_first() {
                    // Messages keep their own tracking (a `match` over a receive).
                    Some((first, rest))
                        if (first.0.is_some() || first.1.is_some())
                            && !first.0.as_deref().is_some_and(is_message_role) =>
                    {
                        rest.iter().all(|v| v == first).then(|| first.clone())
                    }
                    _ => None,
                };
                // `match handle(..).await { Ok(..) => …, Err(..) => … }`.
                let bound = self.bound_outcome(&m.expr, out);
                // The arms that take every error handle it and go on (MA014): `Err(e)`
                // (not `Err(e) if …`, nor one error variant), or `_` beside an `Ok` arm.
                let fallible = (is_call_chain(&m.expr) && ends_in_fallible(&scr_nodes))
                    || (bound && ends_in_fallible(out));
                if fallible && kinds.contains(&Some(true)) {
                    for (arm, body) in m.arms.iter().zip(arms.iter_mut()) {
                        let takes_all = arm.guard.is_none()
                            && (catch_all_err(&arm.pat) || matches!(arm.pat, Pat::Wild(_)));
                        if let (true, Node::Seq(v)) = (takes_all, body) {
                            v.insert(
                                0,
                                self.error_ignored(
                                    arm.pat.span(),
                                    "Err(..) =>",
                                    !hides_failure(&arm.body),
                                ),
                            );
                        }
                    }
                }
                let by_outcome = ((is_call_chain(&m.expr) && ends_in_call(&scr_nodes)) || bound)
                    && kinds.contains(&Some(true))
                    && kinds.contains(&Some(false))
                    && m.arms
                        .iter()
                        .zip(&kinds)
                        .all(|(a, k)| k.is_some() || matches!(a.pat, Pat::Wild(_)));
                if by_outcome {
                    let (mut ok, mut err) = (Vec::new(), Vec::new());
                    for (arm, k) in arms.into_iter().zip(kinds) {
                        match k {
                            Some(true) => ok.push(arm),
                            Some(false) => err.push(arm),
                            None => {
                                // A `_` arm: its failure marker is for the error side.
                                let mut on_ok = arm.clone();
                                if let Node::Seq(v) = &mut on_ok {
                                    if matches!(
                                        v.first(),
                                        Some(Node::Event(Event {
                                            kind: EventKind::ErrorIgnored { .. },
                                            ..
                                        }))
                                    ) {
                                        v.remove(0);
                                    }
                                }
                                ok.push(on_ok);
                                err.push(arm);
                            }
                        }
                    }
                    out.push(Node::ResultBranch {
                        scrutinee: Box::new(Node::Seq(scr_nodes)),
                        ok: Box::new(Node::Branch(ok)),
                        err: Box::new(Node::Branch(err)),
                    });
                } else {
                    out.extend(scr_nodes);
                    out.push(Node::Branch(arms));
                }
                let (role, crate_type) = agreed.unwrap_or_default();
                Info {
                    role,
                    crate_type,
                    ..Info::default()
                }
            }
            Expr::While(_) | Expr::ForLoop(_) | Expr::Loop(_) => self.loop_expr(e, out),
            Expr::Break(b) => {
                if let Some(v) = &b.expr {
                    self.expr(v, out);
                }
                let label = self.find_label(b.label.as_ref());
                out.push(Node::Exit(ExitKind::Break { label }));
                Info::default()
            }
            Expr::Continue(c) => {
                let label = self.find_label(c.label.as_ref());
                out.push(Node::Exit(ExitKind::Continue { label }));
                Info::default()
            }
            Expr::Return(r) => {
                let err = r.expr.as_deref().and_then(result_kind);
                if let Some(v) = &r.expr {
                    let was = self.in_return;
                    self.in_return = self.closure_depth == 0;
                    self.expr(v, out);
                    self.in_return = was;
                }
                out.push(Node::Exit(ExitKind::Return { err }));
                Info::default()
            }
            Expr::Let(l) => {
                // Only reached outside `if`/`while` conditions (let chains inside `&&`).
                let info = self.expr(&l.expr, out);
                self.bind_pattern(&l.pat, &info);
                Info::default()
            }
            Expr::Assign(a) => {
                let rhs = self.expr(&a.right, out);
                if let Expr::Path(p) = strip(&a.left) {
                    if let Some(id) = p.path.get_ident() {
                        let name = id.to_string();
                        let v = match rhs.value {
                            Some(v) => v,
                            None => self.value_from(&name, &rhs),
                        };
                        // Re-assignment rebinds the name in the scope that holds it.
                        if let Some(scope) =
                            self.scopes.iter_mut().rev().find(|s| s.contains_key(&name))
                        {
                            scope.insert(name, v);
                        }
                        return Info::default();
                    }
                }
                self.expr(&a.left, out);
                Info::default()
            }
            Expr::Binary(b) => {
                let l = self.expr(&b.left, out);
                let r = self.expr(&b.right, out);
                let mut info = Info::default();
                info.absorb(&l);
                info.absorb(&r);
                info
            }
            Expr::Index(i) => {
                let base = self.expr(&i.expr, out);
                self.expr(&i.index, out);
                self.derived(&base)
            }
            Expr::Tuple(t) => self.collect(t.elems.iter(), out),
            Expr::Array(a) => self.collect(a.elems.iter(), out),
            Expr::Struct(s) => {
                let mut info = self.collect(s.fields.iter().map(|f| &f.expr), out);
                if let Some(rest) = &s.rest {
                    let r = self.expr(rest, out);
                    info.absorb(&r);
                }
                info.idents
                    .extend(s.path.segments.iter().map(|s| s.ident.to_string()));
                self.ack_setting_in_struct(s);
                if let Some(last) = s.path.segments.last() {
                    let name = last.ident.to_string();
                    if self.cx.index.type_names.contains(&name) {
                        info.crate_type = Some(name);
                    } else if name == "Self" {
                        info.crate_type.clone_from(&self.self_type);
                    }
                }
                info
            }
            Expr::Range(r) => {
                let mut info = Info::default();
                for e in r.start.iter().chain(r.end.iter()) {
                    let i = self.expr(e, out);
                    info.absorb(&i);
                }
                info
            }
            Expr::Repeat(r) => self.expr(&r.expr, out),
            Expr::TryBlock(t) => {
                let mut body = Vec::new();
                self.block_value(&t.block, &mut body);
                out.push(Node::Closure {
                    body: Box::new(Node::Seq(body)),
                    run: ClosureRun::Now,
                    param: None,
                    handle: None,
                    loc: self.cx.loc(t.span(), t.span()),
                    text: "try block".into(),
                });
                Info::default()
            }
            _ => Info::default(),
        }
    }

    /// A loop; a retry loop (one that re-runs a failing step: its text names attempts,
    /// retries or backoff and it handles an error) is a retry scope for MA002.
    fn loop_expr(&mut self, e: &Expr, out: &mut Vec<Node>) -> Info {
        let retry = self.is_retry_loop(e);
        if retry {
            self.next_scope += 1;
            let sp = expr_span(e);
            let loc = self.cx.loc(sp, sp);
            let text = self.cx.text_of(sp).chars().take(40).collect();
            self.retry_scopes.push((self.next_scope, loc, text));
        }
        let start = out.len();
        let info = self.loop_inner(e, out);
        if retry {
            if let Some((id, loc, text)) = self.retry_scopes.pop() {
                // A loop that receives messages is a consume loop, not a retry.
                if contains_receive(&out[start..]) {
                    self.id_flows.retain(|(scope, _)| *scope != Some(id));
                } else {
                    self.retries_seen.push((loc, text));
                }
            }
        }
        info
    }

    /// Fresh ids among `mentions` reaching a sink: inside the retry scope they were
    /// generated in, or (in a handler) into its dedup record.
    fn record_id_flows(
        &mut self,
        mentions: &[ValueId],
        loc: &Loc,
        text: &str,
        dedup_write: bool,
        sink_call: Option<Callee>,
    ) {
        let handler = self.values.iter().any(|v| v.msg_root.is_some());
        for m in mentions {
            let Some((idloc, idtext, scope)) = self.values[*m as usize].fresh.clone() else {
                continue;
            };
            let retry = match scope {
                Some(id) => match self.retry_scopes.iter().find(|(s, _, _)| *s == id) {
                    Some((_, l, t)) => Some((l.clone(), t.clone())),
                    None => continue,
                },
                None if handler && dedup_write && sink_call.is_none() => None,
                None => continue,
            };
            let flow = IdFlow {
                idgen: idloc,
                idgen_text: idtext,
                sink: loc.clone(),
                sink_text: text.to_string(),
                retry,
                sink_call: sink_call.clone(),
            };
            if !self.id_flows.iter().any(|(_, f)| *f == flow) {
                self.id_flows.push((scope, flow));
            }
        }
    }

    /// `BasicConsumeOptions { no_ack: true, .. }`, `ack_policy: AckPolicy::None`.
    fn ack_setting_in_struct(&mut self, s: &syn::ExprStruct) {
        let ty = s
            .path
            .segments
            .last()
            .map(|x| x.ident.to_string())
            .unwrap_or_default();
        for f in &s.fields {
            let syn::Member::Named(field) = &f.member else {
                continue;
            };
            let value = strip(&f.expr);
            let what = match (field.to_string().as_str(), value) {
                (
                    "no_ack",
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Bool(b),
                        ..
                    }),
                ) if b.value && ty == "BasicConsumeOptions" => "`no_ack: true`",
                ("ack_policy", Expr::Path(p))
                    if p.path.segments.len() >= 2
                        && p.path
                            .segments
                            .iter()
                            .rev()
                            .nth(1)
                            .is_some_and(|s| s.ident == "AckPolicy")
                        && p.path.segments.last().is_some_and(|s| s.ident == "None") =>
                {
                    "`AckPolicy::None`"
                }
                _ => continue,
            };
            let loc = self.cx.loc(field.span(), expr_span(&f.expr));
            self.ack_settings.push(AckSetting {
                what: what.into(),
                loc,
            });
        }
    }

    fn turbofish_role(&self, mc: &syn::ExprMethodCall) -> Option<String> {
        let tf = mc.turbofish.as_ref()?;
        tf.args.iter().find_map(|a| match a {
            syn::GenericArgument::Type(t) => self.type_info(t).role,
            _ => None,
        })
    }

    /// `.set(key, value)`, `.create()` and the rest on an rdkafka `ClientConfig`.
    fn kafka_config_call(
        &mut self,
        mc: &syn::ExprMethodCall,
        recv: Info,
        args: &[&Expr],
        loc: Loc,
        out: &mut Vec<Node>,
    ) -> Info {
        let name = mc.method.to_string();
        let arg_infos = self.plain_args(args, out);
        let mut cfg = recv.kafka_config.clone().unwrap_or_else(|| {
            Box::new(KafkaClient {
                new_loc: loc.clone(),
                family: ClientFamily::Librdkafka,
                framework: false,
                props: Vec::new(),
                dynamic: true,
                role: None,
                topics: Vec::new(),
            })
        });
        match name.as_str() {
            "set" => {
                let key = arg_infos.first().and_then(|a| a.str_lit.clone());
                match key {
                    Some(key) => {
                        let value = arg_infos.get(1).and_then(|a| a.str_lit.clone());
                        cfg.props.push(Prop {
                            key,
                            value,
                            loc: loc.clone(),
                        });
                    }
                    None => cfg.dynamic = true,
                }
            }
            "set_log_level" => {}
            "create" | "create_with_context" => {
                let role = self.turbofish_role(mc);
                let mut client = *cfg;
                client.role = role.clone();
                self.kafka_clients.push(client);
                return Info {
                    role: role.or_else(|| Role::KafkaClient.some()),
                    kafka_client: Some(self.kafka_clients.len() - 1),
                    ..Info::default()
                };
            }
            _ => cfg.dynamic = true,
        }
        if let Some(v) = recv.value {
            self.values[v as usize].kafka_config = Some(cfg.clone());
        }
        Info {
            value: recv.value,
            role: Role::KafkaConfig.some(),
            kafka_config: Some(cfg),
            ..Info::default()
        }
    }

    /// A loop that re-runs a failing step: its text names attempts, retries or backoff
    /// and it handles an error; or a `loop`/`while` (not `while let`: that iterates)
    /// that handles an `Err` and leaves on success (`break`/`return`); or `for _ in
    /// 0..n` that handles an `Err`. Loops that receive messages are consume loops.
    fn is_retry_loop(&self, e: &Expr) -> bool {
        let t = RetryText::of(&self.cx.text_of(expr_span(e)));
        if t.named {
            return true;
        }
        match e {
            Expr::Loop(_) => t.handles_err && t.leaves,
            Expr::While(w) => !matches!(&*w.cond, Expr::Let(_)) && t.handles_err && t.leaves,
            Expr::ForLoop(f) => matches!(strip(&f.expr), Expr::Range(_)) && t.handles_err,
            _ => false,
        }
    }

    fn loop_inner(&mut self, e: &Expr, out: &mut Vec<Node>) -> Info {
        match e {
            Expr::While(w) => {
                let label = self.push_label(w.label.as_ref());
                let mut body = Vec::new();
                self.scopes.push(HashMap::new());
                let mut then = Vec::new();
                self.cond(&w.cond, &mut body);
                then.extend(self.block(&w.body));
                self.scopes.pop();
                body.push(Node::Branch(vec![
                    Node::Exit(ExitKind::Break { label }),
                    Node::Seq(then),
                ]));
                self.pop_label(w.label.as_ref());
                out.push(Node::Loop {
                    body: Box::new(Node::Seq(body)),
                    label,
                    each: false,
                });
                Info::default()
            }
            Expr::ForLoop(f) => {
                let iter = self.expr(&f.expr, out);
                let label = self.push_label(f.label.as_ref());
                self.scopes.push(HashMap::new());
                let mut then = Vec::new();
                // Iterating over received messages: each item is a message of its own.
                // Not the crate's own values decoded from one (`for e in &batch.entries`
                // with `entries: Vec<Entry>`): a message is never of a crate type.
                let batch = iter
                    .value
                    .filter(|v| self.is_message(*v))
                    .or_else(|| iter.mentions.iter().copied().find(|m| self.is_message(*m)))
                    .filter(|_| iter.crate_type.is_none());
                match batch {
                    Some(b) => {
                        let v = self.value_from(&pat_name(&f.pat), &Info::default());
                        self.values[v as usize].msg_root = Some(v);
                        let _ = b;
                        let loc = self.cx.loc(f.pat.span(), f.pat.span());
                        then.push(Node::Event(Event {
                            kind: EventKind::Receive {
                                msg: v,
                                element: true,
                                client: None,
                            },
                            loc,
                            text: pat_name(&f.pat),
                            describe: "message taken from a batch".into(),
                        }));
                        let info = Info {
                            value: Some(v),
                            ..Info::default()
                        };
                        self.bind_pattern(&f.pat, &info);
                    }
                    None => {
                        let mut derived = self.derived(&iter);
                        // `for x in &self.items` (`Vec<Item>` is seen as `Item`): the element's type.
                        derived.crate_type = iter.crate_type.clone();
                        self.bind_pattern(&f.pat, &derived);
                    }
                }
                then.extend(self.block(&f.body));
                self.scopes.pop();
                self.pop_label(f.label.as_ref());
                let body =
                    Node::Branch(vec![Node::Exit(ExitKind::Break { label }), Node::Seq(then)]);
                out.push(Node::Loop {
                    body: Box::new(body),
                    label,
                    each: !matches!(strip(&f.expr), Expr::Range(_)),
                });
                Info::default()
            }
            Expr::Loop(lp) => {
                let label = self.push_label(lp.label.as_ref());
                let body = self.block(&lp.body);
                self.pop_label(lp.label.as_ref());
                out.push(Node::Loop {
                    body: Box::new(Node::Seq(body)),
                    label,
                    each: false,
                });
                Info::default()
            }
            _ => Info::default(),
        }
    }

    fn collect<'e>(&mut self, es: impl Iterator<Item = &'e Expr>, out: &mut Vec<Node>) -> Info {
        let mut info = Info::default();
        for e in es {
            let i = self.arg(e, out);
            info.absorb(&i);
        }
        info
    }

    fn path_expr(&mut self, path: &syn::Path) -> Info {
        if let Some(id) = path.get_ident() {
            let name = id.to_string();
            if let Some(v) = self.lookup(&name) {
                return self.value_info(v);
            }
            if let Some(s) = self.cx.const_value(&name) {
                return Info {
                    str_lit: Some(s.clone()),
                    idents: vec![name],
                    ..Info::default()
                };
            }
            return Info {
                idents: vec![name],
                ..Info::default()
            };
        }
        let idents: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let mut info = Info::default();
        if let Some(last) = idents.last() {
            if let Some(s) = self.cx.const_value(last) {
                info.str_lit = Some(s.clone());
            }
        }
        info.idents = idents;
        info
    }

    fn field(&mut self, base: &Info, name: &str) -> Info {
        let Some(b) = base.value else {
            return self.derived(base);
        };
        // `&self.insert_sql`, set by the type's constructor.
        let text = self.values[b as usize]
            .crate_type
            .as_deref()
            .and_then(|t| self.cx.field_text(t, name));
        if let Some(&v) = self.fields.get(&(b, name.to_string())) {
            let mut info = self.value_info(v);
            info.str_lit = text;
            return info;
        }
        let base_val = self.values[b as usize].clone();
        let mut ti = base_val
            .crate_type
            .as_ref()
            .and_then(|t| self.cx.fields_of(t))
            .and_then(|fs| fs.get(name))
            .cloned()
            .unwrap_or_default();
        // `self.mailer` with `mailer: T` and `impl<M: AsyncTransport> Notifier<M>`.
        if let (Some(i), Some(imp)) = (ti.generic, self.impl_of) {
            if base_val.crate_type.is_some() && base_val.crate_type == self.self_type {
                // A bounded parameter of the impl, or a concrete type
                // (`impl Notifier<AsyncSmtpTransport<Tokio1Executor>>`).
                if let Some(b) = impl_arg(imp, i).and_then(|arg| {
                    bounded_generic(
                        self.cx.apis,
                        self.cx.uses,
                        &self.cx.index.traits,
                        &imp.generics,
                        arg,
                    )
                    .or_else(|| {
                        Some(self.type_info(arg))
                            .filter(|t| t.role.is_some() || t.crate_type.is_some())
                    })
                }) {
                    ti = b;
                }
            }
        }
        let v = self.new_value(&format!("{}.{}", base_val.name, name), ti);
        self.values[v as usize].msg_root = base_val.msg_root;
        self.values[v as usize].fresh = base_val.fresh.clone();
        self.fields.insert((b, name.to_string()), v);
        let mut info = self.value_info(v);
        info.mentions.push(b);
        info.str_lit = text;
        info
    }

    fn if_expr(&mut self, i: &syn::ExprIf, out: &mut Vec<Node>) -> Info {
        self.scopes.push(HashMap::new());
        let mut cond = Vec::new();
        self.cond(&i.cond, &mut cond);
        let mut then = self.block(&i.then_branch);
        self.scopes.pop();
        let mut els = Vec::new();
        if let Some((_, e)) = &i.else_branch {
            self.expr(e, &mut els);
        }
        // `if let Err(e) = handle(..).await { … }`: the arms of a call's outcome.
        let bound = match &*i.cond {
            Expr::Let(l) => self.bound_outcome(&l.expr, out),
            _ => false,
        };
        let outcome = match &*i.cond {
            Expr::Let(l) if is_call_chain(&l.expr) || bound => result_pattern(&l.pat)
                .filter(|ok| *ok || catch_all_err(&l.pat))
                .map(|ok| (ok, l.pat.span())),
            // `if op.await.is_err() { … }`, `if !op.await.is_ok() { … }`.
            c => outcome_test(c),
        };
        // The failure side of an operation's outcome handles its error and goes on.
        if let Some((is_ok, sp)) = outcome {
            if ends_in_fallible(&cond) || (bound && ends_in_fallible(out)) {
                let told = match (is_ok, &i.else_branch) {
                    (false, _) => !block_hides_failure(&i.then_branch),
                    (true, Some((_, e))) => !hides_failure(e),
                    (true, None) => false,
                };
                let marker = self.error_ignored(sp, "if let Err(..)", told);
                if is_ok { &mut els } else { &mut then }.insert(0, marker);
            }
        }
        match outcome.map(|(ok, _)| ok) {
            Some(is_ok) if ends_in_call(&cond) || bound => {
                let (ok, err) = if is_ok { (then, els) } else { (els, then) };
                out.push(Node::ResultBranch {
                    scrutinee: Box::new(Node::Seq(cond)),
                    ok: Box::new(Node::Seq(ok)),
                    err: Box::new(Node::Seq(err)),
                });
            }
            _ => {
                out.extend(cond);
                out.push(Node::Branch(vec![Node::Seq(then), Node::Seq(els)]));
            }
        }
        Info::default()
    }

    /// A condition, with `let` patterns bound in the current (new) scope.
    fn cond(&mut self, c: &Expr, out: &mut Vec<Node>) {
        match c {
            Expr::Let(l) => {
                let info = self.expr(&l.expr, out);
                self.bind_pattern(&l.pat, &info);
            }
            Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) => {
                self.cond(&b.left, out);
                self.cond(&b.right, out);
            }
            Expr::Paren(p) => self.cond(&p.expr, out),
            other => {
                self.expr(other, out);
            }
        }
    }

    fn push_label(&mut self, label: Option<&syn::Label>) -> Option<u32> {
        let l = label?;
        self.next_label += 1;
        self.labels
            .push((l.name.ident.to_string(), self.next_label));
        Some(self.next_label)
    }

    fn pop_label(&mut self, label: Option<&syn::Label>) {
        if label.is_some() {
            self.labels.pop();
        }
    }

    fn find_label(&self, lt: Option<&syn::Lifetime>) -> Option<u32> {
        let name = lt?.ident.to_string();
        self.labels
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, id)| *id)
    }

    // ----- closures ----------------------------------------------------------

    /// Lowers a closure (or async block) body into a `Closure` node.
    fn closure(
        &mut self,
        c: &syn::ExprClosure,
        run: ClosureRun,
        handle: Option<ValueId>,
        out: &mut Vec<Node>,
    ) {
        self.scopes.push(HashMap::new());
        let mut param = None;
        let hint = self.closure_param_hint.take();
        for (i, p) in c.inputs.iter().enumerate() {
            let ti = if i == 0 {
                hint.clone().unwrap_or_default()
            } else {
                TypeInfo::default()
            };
            let v = self.bind_param(p, ti);
            if i == 0 {
                param = v;
            }
        }
        let mut body = Vec::new();
        if let (ClosureRun::Callback, Some(p)) = (run, param) {
            self.values[p as usize].msg_root = Some(p);
            body.push(Node::Event(Event {
                kind: EventKind::Receive {
                    msg: p,
                    element: false,
                    client: None,
                },
                loc: self.cx.loc(c.inputs.span(), c.inputs.span()),
                text: self.values[p as usize].name.clone(),
                describe: "message delivered to the callback".into(),
            }));
        }
        if let (ClosureRun::Transaction, Some(p)) = (run, param) {
            self.values[p as usize].role = Role::DbTx.some();
        }
        self.closure_body(&c.body, &mut body);
        self.scopes.pop();
        let sp = closure_span(c);
        let loc = self.cx.loc(sp, sp);
        out.push(Node::Closure {
            body: Box::new(Node::Seq(body)),
            run,
            param,
            handle,
            loc,
            text: "closure".into(),
        });
    }

    /// A closure body, seeing through `async move { .. }` and `Box::pin(async move { .. })`.
    fn closure_body(&mut self, body: &Expr, out: &mut Vec<Node>) {
        match strip(body) {
            Expr::Async(a) => {
                self.block_value(&a.block, out);
            }
            Expr::Call(c) if is_box_pin(c) && c.args.len() == 1 => {
                self.closure_body(&c.args[0], out)
            }
            Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
                Stmt::Expr(e @ (Expr::Async(_) | Expr::Call(_)), None) => self.closure_body(e, out),
                _ => {
                    self.block_value(&b.block, out);
                }
            },
            other => {
                self.expr(other, out);
            }
        }
    }

    /// Lowers the argument `arg` that a call runs in a special way (spawn, transaction, callback).
    fn special_arg(
        &mut self,
        arg: &Expr,
        run: ClosureRun,
        handle: Option<ValueId>,
        out: &mut Vec<Node>,
    ) -> bool {
        if let Some(Node::Closure {
            body,
            param,
            loc,
            text,
            ..
        }) = self.deferred_of(arg)
        {
            out.push(Node::Closure {
                body,
                run,
                param,
                handle,
                loc,
                text,
            });
            return true;
        }
        match strip(arg) {
            Expr::Closure(c) => {
                self.closure(c, run, handle, out);
                true
            }
            Expr::Async(a) if run != ClosureRun::Callback => {
                let mut body = Vec::new();
                self.block_value(&a.block, &mut body);
                out.push(Node::Closure {
                    body: Box::new(Node::Seq(body)),
                    run,
                    param: None,
                    handle,
                    loc: self.cx.loc(a.span(), a.span()),
                    text: "async block".into(),
                });
                true
            }
            // `tokio::spawn(process(msg))`: the call runs later.
            Expr::Call(c) if run != ClosureRun::Callback && !is_box_pin(c) => {
                self.task(arg, run, handle, out);
                true
            }
            Expr::Call(c) if is_box_pin(c) && c.args.len() == 1 => {
                self.special_arg(&c.args[0], run, handle, out)
            }
            Expr::MethodCall(_) if run == ClosureRun::Later => {
                self.task(arg, run, handle, out);
                true
            }
            _ => false,
        }
    }

    /// A future expression handed to a spawn (or transaction) API, as a closure node.
    fn task(&mut self, arg: &Expr, run: ClosureRun, handle: Option<ValueId>, out: &mut Vec<Node>) {
        let mut body = Vec::new();
        self.expr(arg, &mut body);
        out.push(Node::Closure {
            body: Box::new(Node::Seq(body)),
            run,
            param: None,
            handle,
            loc: self.cx.loc(arg.span(), arg.span()),
            text: "task".into(),
        });
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        Expr::Reference(r) => strip(&r.expr),
        _ => e,
    }
}

fn is_box_pin(c: &syn::ExprCall) -> bool {
    matches!(strip(&c.func), Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "pin"))
}

/// The string literals in some expressions (topics of `subscribe(&["a", "b"])`).
fn string_literals(es: &[&Expr]) -> Vec<String> {
    use syn::visit::Visit;
    struct V(Vec<String>);
    impl<'ast> Visit<'ast> for V {
        fn visit_lit_str(&mut self, s: &'ast syn::LitStr) {
            self.0.push(s.value());
        }
    }
    let mut v = V(Vec::new());
    for e in es {
        v.visit_expr(e);
    }
    v.0
}

/// Marks a Kafka topic among an expression's identifiers (`FutureRecord::to("t")`).
const TOPIC_MARK: &str = "@topic=";

fn contains_receive(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::Event(Event {
            kind: EventKind::Receive { element: false, .. },
            ..
        }) => true,
        Node::Seq(v) | Node::Branch(v) => contains_receive(v),
        Node::Loop { body, .. } | Node::Closure { body, .. } => {
            contains_receive(std::slice::from_ref(body))
        }
        Node::ResultBranch { scrutinee, ok, err } => [scrutinee, ok, err]
            .iter()
            .any(|n| contains_receive(std::slice::from_ref(&***n))),
        _ => false,
    })
}

/// The nodes end with a call into the crate (whose outcome a `ResultBranch` splits).
fn ends_in_call(nodes: &[Node]) -> bool {
    matches!(
        nodes.last(),
        Some(Node::Event(Event {
            kind: EventKind::Call(_),
            ..
        }))
    )
}

fn is_message_role(role: &str) -> bool {
    role.ends_with(".message") || role.ends_with(".delivery")
}

fn is_stream_role(role: Option<&str>) -> bool {
    matches!(
        role.and_then(Role::of),
        Some(
            Role::KafkaStream
                | Role::KafkaConsumer
                | Role::AmqpConsumer
                | Role::NatsMessages
                | Role::PulsarConsumer
        )
    )
}

/// `Err(..)` -> error return, `Ok(..)` -> success, otherwise unknown.
fn result_kind(e: &Expr) -> Option<bool> {
    match strip(e) {
        Expr::Call(c) => match strip(&c.func) {
            Expr::Path(p) => match p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .as_deref()
            {
                Some("Err") => Some(true),
                Some("Ok") => Some(false),
                _ => None,
            },
            _ => None,
        },
        Expr::Macro(m)
            if m.mac
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "anyhow") =>
        {
            Some(true)
        }
        _ => None,
    }
}

fn pat_name(p: &Pat) -> String {
    match p {
        Pat::Ident(i) => i.ident.to_string(),
        Pat::Type(t) => pat_name(&t.pat),
        Pat::Reference(r) => pat_name(&r.pat),
        _ => "item".into(),
    }
}

/// Shortens a receiver's source text for messages: `self.consumer`, `tx`.
fn short_text(s: &str) -> String {
    if s.chars().count() <= 40 {
        return s.to_string();
    }
    let cut = s.find(['(', '{', ' ']).unwrap_or(s.len());
    let head: String = s[..cut].chars().take(40).collect();
    match s[cut..].chars().next() {
        Some('(') => format!("{head}(…)"),
        Some('{') => format!("{head} {{ … }}"),
        _ => format!("{head}…"),
    }
}

fn collect_idents(e: &Expr, out: &mut Vec<String>) {
    use syn::visit::Visit;
    struct V<'o>(&'o mut Vec<String>);
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_path(&mut self, p: &'ast syn::Path) {
            self.0
                .extend(p.segments.iter().map(|s| s.ident.to_string()));
            syn::visit::visit_path(self, p);
        }
    }
    V(out).visit_expr(e);
}

/// The table of a diesel statement: `orders::table` or `orders` -> `orders`.
fn diesel_table(e: &Expr) -> Option<String> {
    let mut idents = Vec::new();
    collect_idents(e, &mut idents);
    idents
        .into_iter()
        .find(|i| i != "table" && i != "dsl" && i != "schema" && i != "crate")
}

/// The span of an expression as `Spanned::span` gives it (its first token to its
/// last), without printing the expression to tokens, which costs as much as the
/// expression is long and is repeated at every level of a method chain or nested
/// loop. Expressions whose ends are not read here cheaply fall back to `span()`.
fn expr_span(e: &Expr) -> PmSpan {
    match (first_token(e), last_token(e)) {
        (Some(a), Some(b)) => a.join(b).unwrap_or_else(|| e.span()),
        _ => e.span(),
    }
}

/// The span of the first token of `e` (outer attributes make it unknown here).
fn first_token(e: &Expr) -> Option<PmSpan> {
    let path_start = |p: &syn::Path| match &p.leading_colon {
        Some(c) => Some(c.spans[0]),
        None => p.segments.first().map(|s| s.ident.span()),
    };
    match e {
        Expr::MethodCall(m) if m.attrs.is_empty() => first_token(&m.receiver),
        Expr::Field(f) if f.attrs.is_empty() => first_token(&f.base),
        Expr::Call(c) if c.attrs.is_empty() => first_token(&c.func),
        Expr::Await(a) if a.attrs.is_empty() => first_token(&a.base),
        Expr::Try(t) if t.attrs.is_empty() => first_token(&t.expr),
        Expr::Index(i) if i.attrs.is_empty() => first_token(&i.expr),
        Expr::Binary(b) if b.attrs.is_empty() => first_token(&b.left),
        Expr::Cast(c) if c.attrs.is_empty() => first_token(&c.expr),
        Expr::Path(p) if p.attrs.is_empty() && p.qself.is_none() => path_start(&p.path),
        Expr::Macro(m) if m.attrs.is_empty() => path_start(&m.mac.path),
        Expr::Lit(l) if l.attrs.is_empty() => Some(l.lit.span()),
        Expr::Reference(r) if r.attrs.is_empty() => Some(r.and_token.span),
        Expr::Paren(p) if p.attrs.is_empty() => Some(p.paren_token.span.open()),
        Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => {
            Some(b.block.brace_token.span.open())
        }
        Expr::Async(a) if a.attrs.is_empty() => Some(a.async_token.span),
        Expr::ForLoop(f) if f.attrs.is_empty() && f.label.is_none() => Some(f.for_token.span),
        Expr::Loop(l) if l.attrs.is_empty() && l.label.is_none() => Some(l.loop_token.span),
        Expr::While(w) if w.attrs.is_empty() && w.label.is_none() => Some(w.while_token.span),
        Expr::If(i) if i.attrs.is_empty() => Some(i.if_token.span),
        Expr::Match(m) if m.attrs.is_empty() => Some(m.match_token.span),
        Expr::Unary(u) if u.attrs.is_empty() => Some(match u.op {
            syn::UnOp::Deref(t) => t.span,
            syn::UnOp::Not(t) => t.span,
            syn::UnOp::Neg(t) => t.span,
            _ => return None,
        }),
        Expr::Closure(c) => closure_first_token(c),
        _ => None,
    }
}

fn closure_first_token(c: &syn::ExprClosure) -> Option<PmSpan> {
    if !c.attrs.is_empty() || c.lifetimes.is_some() || c.constness.is_some() {
        return None;
    }
    Some(match (&c.movability, &c.asyncness, &c.capture) {
        (Some(s), _, _) => s.span,
        (None, Some(a), _) => a.span,
        (None, None, Some(m)) => m.span,
        (None, None, None) => c.or1_token.span,
    })
}

/// [`expr_span`] of a closure.
fn closure_span(c: &syn::ExprClosure) -> PmSpan {
    match (closure_first_token(c), last_token(&c.body)) {
        (Some(a), Some(b)) => a.join(b).unwrap_or_else(|| c.span()),
        _ => c.span(),
    }
}

/// The span of the last token of `e`.
fn last_token(e: &Expr) -> Option<PmSpan> {
    let delim = |d: &syn::MacroDelimiter| match d {
        syn::MacroDelimiter::Paren(p) => p.span.close(),
        syn::MacroDelimiter::Brace(b) => b.span.close(),
        syn::MacroDelimiter::Bracket(b) => b.span.close(),
    };
    match e {
        Expr::MethodCall(m) => Some(m.paren_token.span.close()),
        Expr::Call(c) => Some(c.paren_token.span.close()),
        Expr::Field(f) => Some(match &f.member {
            syn::Member::Named(id) => id.span(),
            syn::Member::Unnamed(i) => i.span,
        }),
        Expr::Await(a) => Some(a.await_token.span),
        Expr::Try(t) => Some(t.question_token.span),
        Expr::Index(i) => Some(i.bracket_token.span.close()),
        Expr::Binary(b) => last_token(&b.right),
        Expr::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .filter(|s| s.arguments.is_none())
            .map(|s| s.ident.span()),
        Expr::Macro(m) => Some(delim(&m.mac.delimiter)),
        Expr::Lit(l) => Some(l.lit.span()),
        Expr::Reference(r) => last_token(&r.expr),
        Expr::Unary(u) => last_token(&u.expr),
        Expr::Paren(p) => Some(p.paren_token.span.close()),
        Expr::Block(b) => Some(b.block.brace_token.span.close()),
        Expr::Async(a) => Some(a.block.brace_token.span.close()),
        Expr::ForLoop(f) => Some(f.body.brace_token.span.close()),
        Expr::Loop(l) => Some(l.body.brace_token.span.close()),
        Expr::While(w) => Some(w.body.brace_token.span.close()),
        Expr::If(i) => match &i.else_branch {
            Some((_, e)) => last_token(e),
            None => Some(i.then_branch.brace_token.span.close()),
        },
        Expr::Match(m) => Some(m.brace_token.span.close()),
        Expr::Closure(c) => last_token(&c.body),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `expr_span` agrees with `Spanned::span` on every expression of this crate's
    /// sources and fixtures (start and end positions).
    #[test]
    fn cheap_expression_spans_are_those_syn_gives() {
        use syn::visit::Visit;
        struct V(usize);
        impl<'ast> Visit<'ast> for V {
            fn visit_expr(&mut self, e: &'ast Expr) {
                let (a, b) = (expr_span(e), e.span());
                let pos = |s: PmSpan| (s.start(), s.end());
                assert_eq!(pos(a), pos(b), "{}", quote::quote!(#e));
                if let Expr::Closure(c) = e {
                    assert_eq!(pos(closure_span(c)), pos(b));
                }
                self.0 += 1;
                syn::visit::visit_expr(self, e);
            }
        }
        let mut v = V(0);
        for root in ["src", "fixtures", "tests"] {
            for e in ignore::WalkBuilder::new(root).build().flatten() {
                if e.path().extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                    if let Ok(file) = syn::parse_file(&text) {
                        v.visit_file(&file);
                    }
                }
            }
        }
        assert!(v.0 > 10_000, "{} expressions", v.0);
    }
}
