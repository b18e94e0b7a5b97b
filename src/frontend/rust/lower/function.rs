//! Lowering one function: a fresh [`Lowerer`], the function's parameters, the
//! entry of a serverless batch handler, its body, and the [`Function`] made of them.

use std::collections::{HashMap, HashSet};

use proc_macro2::Span as PmSpan;
use syn::spanned::Spanned;

use super::{batch, confirm, hoist, FileCx, Lowerer};
use crate::apis::{builtin_std, Role};
use crate::frontend::rust::lambda::{event_source, result_sites};
use crate::frontend::rust::types::bounded_generic;
use crate::frontend::rust::TypeInfo;
use crate::ir::{Event, EventKind, Function, Loc, Node, ValueId};

/// Lowers one function: `owner` is its `impl`'s self type and trait (or a trait's, for
/// a default method), `imp` the `impl` block it is written in, `items` the items of
/// its module (their `use`s).
pub(super) fn lower_fn(
    cx: &FileCx,
    sig: &syn::Signature,
    block: &syn::Block,
    owner: (Option<String>, Option<String>),
    module: &[String],
    imp: Option<&syn::ItemImpl>,
    items: &[syn::Item],
) -> Function {
    let (self_type, trait_name) = owner;
    let block = boxed_async_body(cx, block).unwrap_or(block);
    let mut l = Lowerer::new(cx, imp, self_type.clone());
    let names: Vec<String> = [
        Some(sig.ident.to_string()),
        self_type.clone(),
        module.last().cloned(),
    ]
    .into_iter()
    .flatten()
    .map(|n| n.to_ascii_lowercase())
    .collect();
    let named =
        |words: &[String]| (names.iter()).any(|n| words.iter().any(|w| n.contains(w.as_str())));
    l.lock_helper = named(&cx.apis.lock_keys);
    l.cache_helper = (cx.apis.cache_names.iter())
        .filter(|(_, words)| named(words))
        .map(|(pack, _)| pack.clone())
        .collect();
    let returned_batches = l.note_batch_uses(block);
    let (params, has_self) = l.lower_params(sig);
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        let ti = l.type_info(ty);
        if matches!(ti.role.as_deref(), Some("chan.tx" | "chan.rx")) {
            l.returned_chan_elem = ti.elem;
        }
    }
    let returned = cx.batch_returned(&sig.ident.to_string(), self_type.as_deref());
    // A job-queue worker's handler receives its job in its first parameter.
    if l.batch_event.is_none() && cx.handed_to_worker(&sig.ident.to_string(), self_type.as_deref())
    {
        l.batch_event = params.get(usize::from(has_self)).copied().flatten();
        l.job_handler = true;
    }
    if l.batch_event.is_some() || returned {
        let sites = result_sites(block, self_type.as_deref());
        l.batch_oks = Some(sites.oks.into_iter().map(|s| cx.line_col(s)).collect());
    }
    let mut entry = l.batch_entry(sig);
    entry.extend(l.fn_body(block));
    let mut body = Node::Seq(entry);
    l.finish(&mut body);
    l.factory_role(sig);
    let returns_batches = returned_batch_events(&body, &returned_batches);
    let confirm_ats = confirm::confirm_ats(cx, sig, block, items, &l.channel_opens);
    let confirm_awaits = confirm::confirm_awaits(cx, block, &l.unconfirmed);
    let dedup = l.dedup_facts(&params);
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
        extent: cx.loc(sig.fn_token.span, block.brace_token.span.close()),
        takes_message: params
            .iter()
            .flatten()
            .any(|v| l.values[*v as usize].msg_root.is_some()),
        params,
        has_self,
        body,
        value_names: l.values.iter().map(|v| v.name.clone()).collect(),
        fields: {
            let mut fields: Vec<(ValueId, String, ValueId)> = (l.fields.iter())
                .map(|((b, n), v)| (*b, n.clone(), *v))
                .collect();
            fields.sort();
            fields
        },
        id_flows: l
            .id_flows
            .into_iter()
            .map(|(_, f)| hoist::with_hoist(f, block, cx))
            .collect(),
        pass_id_flows: l.pass_id_flows,
        poll_loops: l.poll_loops,
        retry_bodies: l.retry_bodies,
        dedup,
        returns_claims: l.returns_claims,
        returns_batches,
        returns_confirms: l.returns_confirms,
        confirms_ignored: l.confirms_ignored,
        kafka_clients: l.kafka_clients,
        returns_kafka_client: l.returned_kafka_client.map(|i| i as u32),
        returns_kafka_config: l.returned_kafka_config,
        packs: l.packs,
        kafka_sent_topics: l.sent_topics,
        made_client_topics: l.made_client_topics,
        topic_fields: l.topic_fields,
        ack_settings: l.ack_settings,
        transient_queues: l.transient_queues,
        durable_queues: l.durable_queues,
        retries: l.retries_seen,
        chan_links: l.chan_links,
        confirm_ats,
        confirm_awaits,
        dependency: false,
    }
}

impl Lowerer<'_, '_> {
    /// A factory whose client is made without a type that names it (`let c =
    /// ClientConfig::new()..create()?; Ok(c)`): the client is what the function's
    /// declared return type says (`-> Result<StreamConsumer>`).
    fn factory_role(&mut self, sig: &syn::Signature) {
        let Some(i) = self.returned_kafka_client else {
            return;
        };
        let syn::ReturnType::Type(_, ty) = &sig.output else {
            return;
        };
        if self.kafka_clients[i].role.is_some() {
            return;
        }
        let role = self
            .type_info(ty)
            .role
            .filter(|r| matches!(Role::of(r), Some(Role::KafkaConsumer | Role::KafkaProducer)));
        self.kafka_clients[i].role = role;
    }
}

impl FileCx<'_> {
    /// The line and column where a span starts: how batch calls and `Ok(..)`s are
    /// found again when lowered.
    pub(super) fn line_col(&self, s: PmSpan) -> (u32, u32) {
        let at = self.span(s, s);
        (at.line, at.column)
    }
}

/// The async block a function's body only boxes and returns (`Box::pin(async move {
/// .. })`, `async { .. }.boxed()`; the runtime pack's `future_boxes`): awaiting the
/// function's future runs it, as the body of an `async fn`, so its `return`s are the
/// function's.
fn boxed_async_body<'b>(cx: &FileCx, block: &'b syn::Block) -> Option<&'b syn::Block> {
    use syn::Expr;
    let [syn::Stmt::Expr(e, None)] = block.stmts.as_slice() else {
        return None;
    };
    let boxes = &cx.apis.std.future_boxes;
    let inner = match super::strip(e) {
        Expr::Call(c) if c.args.len() == 1 => match super::strip(&c.func) {
            Expr::Path(p)
                if p.path
                    .segments
                    .last()
                    .is_some_and(|s| boxes.contains(&s.ident.to_string())) =>
            {
                &c.args[0]
            }
            _ => return None,
        },
        Expr::MethodCall(m) if m.args.is_empty() && boxes.contains(&m.method.to_string()) => {
            &*m.receiver
        }
        _ => return None,
    };
    match super::strip(inner) {
        Expr::Async(a) => Some(&a.block),
        _ => None,
    }
}

/// The places of the body's publishes and external calls whose result a batch
/// handler returns (`returned`: their line and column).
fn returned_batch_events(body: &Node, returned: &HashSet<(u32, u32)>) -> Vec<Loc> {
    if returned.is_empty() {
        return Vec::new();
    }
    body.events()
        .into_iter()
        .filter(|e| returned.contains(&(e.loc.span.line, e.loc.span.column)))
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Publish { .. } | EventKind::External { .. }
            )
        })
        .map(|e| e.loc.clone())
        .collect()
}

impl<'a, 'b> Lowerer<'a, 'b> {
    /// A lowerer for one function of the file `cx`, nothing lowered yet.
    fn new(
        cx: &'a FileCx<'b>,
        impl_of: Option<&'b syn::ItemImpl>,
        self_type: Option<String>,
    ) -> Self {
        Lowerer {
            impl_of,
            cx,
            values: Vec::new(),
            scopes: vec![HashMap::default()],
            fields: HashMap::default(),
            elements: HashMap::default(),
            self_type,
            labels: Vec::new(),
            next_label: 0,
            uses: Vec::new(),
            finishes: Vec::new(),
            unchecked: HashSet::default(),
            bound_claims: Vec::new(),
            handled_outcomes: Vec::new(),
            dropped_outcomes: Vec::new(),
            err_valued: Vec::new(),
            fills: HashMap::default(),
            failure_records: Vec::new(),
            cleared_records: HashSet::default(),
            held_futures: Vec::new(),
            task_sets: Vec::new(),
            task_outcomes: Vec::new(),
            set_pushes: Vec::new(),
            loops: Vec::new(),
            loop_serial: 0,
            outcome_flags: Vec::new(),
            success_fills: Vec::new(),
            success_arms: Vec::new(),
            confirmable: HashSet::default(),
            chan_keys: Vec::new(),
            chan_links: Vec::new(),
            channel_opens: Vec::new(),
            unconfirmed: HashSet::default(),
            bound_publishes: Vec::new(),
            confirmations: Vec::new(),
            confirmed_values: Vec::new(),
            confirms_ignored: Vec::new(),
            lock_helper: false,
            cache_helper: Vec::new(),
            failure_locals: Default::default(),
            builder_strs: Vec::new(),
            read_rows: Vec::new(),
            call_recv: None,
            call_keyed: false,
            last_outcome: None,
            in_return: false,
            tail_arms: false,
            closure_depth: 0,
            closure_param_hint: None,
            closure_value: None,
            dropped_claims: Vec::new(),
            returned: HashSet::default(),
            returns_claims: Vec::new(),
            returns_confirms: Vec::new(),
            calls_awaited_once: HashSet::default(),
            unused_calls: HashSet::default(),
            bound_calls: Vec::new(),
            retry_scopes: Vec::new(),
            poll_scopes: Vec::new(),
            poll_fallbacks: Vec::new(),
            poll_sends: Vec::new(),
            pass_id_flows: Vec::new(),
            poll_loops: Vec::new(),
            retry_bodies: Vec::new(),
            retries_seen: Vec::new(),
            next_scope: 0,
            id_flows: Vec::new(),
            dedup: Default::default(),
            kafka_clients: Vec::new(),
            returned_kafka_client: None,
            returned_kafka_config: None,
            packs: Vec::new(),
            ack_settings: Vec::new(),
            transient_queues: Vec::new(),
            durable_queues: false,
            in_struct_rest: false,
            sent_topics: Vec::new(),
            made_client_topics: Vec::new(),
            topic_fields: Vec::new(),
            unread_batches: HashSet::default(),
            dropped_unawaited: HashSet::default(),
            unread_calls: HashSet::default(),
            batch_failure_ifs: HashMap::default(),
            awaited_names: HashSet::default(),
            batch_locs: HashMap::default(),
            batch_event: None,
            batch_oks: None,
            job_handler: false,
            returned_chan_elem: None,
        }
    }

    /// Notes the body's batch calls whose per-entry failures nothing reads, the
    /// method calls dropped unawaited and the calls read as no batch response
    /// (`batch.rs`); returns the batch calls whose result the function returns.
    fn note_batch_uses(&mut self, block: &syn::Block) -> HashSet<(u32, u32)> {
        let cx = self.cx;
        // A crate function of the name whose every definition only logs the place.
        let logs = |name: &str, at: usize| {
            cx.fn_sigs(name)
                .is_some_and(|sigs| sigs.iter().all(|s| s.logs_params.contains(&at)))
        };
        let uses = batch::unread_batches(cx.apis, &logs, block);
        let at = |s: PmSpan| cx.line_col(s);
        self.unread_batches = uses.unread.into_iter().map(at).collect();
        self.dropped_unawaited = uses.dropped.into_iter().map(at).collect();
        self.unread_calls = uses.unread_calls.into_iter().map(at).collect();
        self.awaited_names = uses.awaited_names.into_iter().collect();
        self.batch_failure_ifs = (uses.failure_sides.into_iter())
            .map(|(i, b, side)| (at(i), (at(b), side)))
            .collect();
        uses.returned.into_iter().map(at).collect()
    }

    /// Binds the function's parameters (`self` first): their values, and whether
    /// it takes `self`. A parameter of a generic type bound by a trait is typed by
    /// the bound; the first serverless event parameter is the batch event; a channel
    /// end taken as a parameter is linked to the ends callers pass there.
    fn lower_params(&mut self, sig: &syn::Signature) -> (Vec<Option<ValueId>>, bool) {
        let mut params = Vec::new();
        let mut has_self = false;
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(_) => {
                    has_self = true;
                    let v = self.new_value(
                        "self",
                        TypeInfo {
                            role: None,
                            crate_type: self.self_type.clone(),
                            outside: false,
                            generic: None,
                            elem: None,
                            ..TypeInfo::default()
                        },
                    );
                    self.bind("self", v);
                    params.push(Some(v));
                }
                syn::FnArg::Typed(pt) => {
                    let mut ti = self.type_info(&pt.ty);
                    // `store: &S` with `S: Store` (or `where S: Store`): the crate's trait,
                    // whose implementations a call on it may reach.
                    // (`mailer: &M` with `M: lettre::AsyncTransport`: the API's role.)
                    if ti.crate_type.is_none() && ti.role.is_none() {
                        if let Some(b) = bounded_generic(
                            self.cx.apis,
                            self.cx.uses,
                            &self.cx.index.traits,
                            &sig.generics,
                            &pt.ty,
                        ) {
                            ti = b;
                        }
                    }
                    let batch = self.batch_event.is_none()
                        && event_source(&self.cx.apis.serverless, self.cx.uses, &pt.ty).is_some();
                    let v = self.bind_param(&pt.pat, ti);
                    if let Some(v) = v {
                        let i = params.len() - usize::from(has_self);
                        self.param_from_callers(sig, v, i);
                    }
                    if batch {
                        self.batch_event = v;
                    }
                    // `hs: Vec<JoinHandle<anyhow::Result<()>>>`, `set: JoinSet<Result<..>>`:
                    // spawned tasks that may fail, whose effects are the caller's. Joined
                    // here (lower/joined.rs), their failures are handled here.
                    if let Some(v) = v.filter(|_| self.fallible_tasks_in(&pt.ty, true)) {
                        self.task_sets.push(v);
                        self.set_pushes.push((v, 2, Vec::new()));
                    }
                    // A channel end taken as a parameter: the ends callers pass here.
                    if let Some(v) = v.filter(|v| self.is_chan_end(*v)) {
                        let i = params.len() - usize::from(has_self);
                        let callee = match (&self.self_type, has_self) {
                            (_, true) => format!(".{}", sig.ident),
                            (Some(t), false) => format!("{t}::{}", sig.ident),
                            (None, false) => sig.ident.to_string(),
                        };
                        self.values[v as usize].chan.push(format!("A:{callee}#{i}"));
                    }
                    params.push(v);
                }
            }
        }
        (params, has_self)
    }

    /// A parameter every call of the crate passes the same collection or SQL text
    /// (`process(&hog, d)` after `let hog = db.collection("hog")`; `exec(pool,
    /// "INSERT ..")`): it holds that collection or text ([`FileCx::param_arg`]).
    fn param_from_callers(&mut self, sig: &syn::Signature, v: ValueId, i: usize) {
        use super::file_cx::ParamArg;
        if self.values[v as usize].sql.is_some() {
            return;
        }
        let method = matches!(sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
        let n = sig.inputs.len() - usize::from(method);
        let arg = self.cx.param_arg(&sig.ident.to_string(), i, n, method);
        let val = &mut self.values[v as usize];
        match arg {
            Some(ParamArg::Table(t)) => {
                val.sql = Some(crate::ir::SqlFacts {
                    verb: super::events::TABLE_VERB.into(),
                    tables: vec![t],
                    ..crate::ir::SqlFacts::unknown()
                });
            }
            Some(ParamArg::Text(t)) => {
                val.sql = Some(crate::frontend::rust::sql::facts(&t));
                val.text = Some(t);
            }
            None => {}
        }
    }

    /// `ty` holds spawned tasks whose output is a result (`JoinSet<Result<..>>`, the
    /// runtime pack's `task_set_types`; a `JoinHandle<Result<..>>` in a collection or
    /// a wrapper, not `top`, the type itself). Tasks of `JoinHandle<()>` cannot fail.
    fn fallible_tasks_in(&self, ty: &syn::Type, top: bool) -> bool {
        let path = match ty {
            syn::Type::Reference(r) => return self.fallible_tasks_in(&r.elem, top),
            syn::Type::Paren(p) => return self.fallible_tasks_in(&p.elem, top),
            syn::Type::Slice(s) => return self.fallible_tasks_in(&s.elem, false),
            syn::Type::Array(a) => return self.fallible_tasks_in(&a.elem, false),
            syn::Type::Path(p) => &p.path,
            _ => return false,
        };
        let Some(last) = path.segments.last() else {
            return false;
        };
        let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
            return false;
        };
        let mut types = args.args.iter().filter_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        });
        let std = &self.cx.apis.std;
        let handle = !top && Role::JoinHandle.is(self.type_info(ty).role.as_deref());
        if handle || std.task_set_types.contains(&last.ident.to_string()) {
            // (`anyhow::Result<()>`, `io::Result<T>`, `AppResult<T>`: the pack's
            // `wrapper_suffixes`, the endings of a result type's name.)
            return types.next().is_some_and(|out| match out {
                syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| {
                    let n = s.ident.to_string();
                    builtin_std()
                        .wrapper_suffixes
                        .iter()
                        .any(|w| n.ends_with(w.as_str()))
                }),
                _ => false,
            });
        }
        types.any(|t| self.fallible_tasks_in(t, false))
    }

    /// A serverless batch handler receives its event's records when it is called:
    /// the body's entry is that receive, at the event parameter.
    fn batch_entry(&mut self, sig: &syn::Signature) -> Vec<Node> {
        let mut entry = Vec::new();
        if let Some(v) = self.batch_event {
            self.values[v as usize].msg_root = Some(v);
            let cx = self.cx;
            let at = sig
                .inputs
                .iter()
                .find_map(|a| match a {
                    syn::FnArg::Typed(pt)
                        if event_source(&cx.apis.serverless, cx.uses, &pt.ty).is_some() =>
                    {
                        Some(pt.span())
                    }
                    _ => None,
                })
                .unwrap_or_else(|| sig.ident.span());
            let name = self.values[v as usize].name.clone();
            entry.push(Node::Event(Event {
                kind: EventKind::Receive {
                    msg: v,
                    element: false,
                    client: None,
                },
                loc: cx.loc(at, at),
                text: name,
                describe: "batch received".into(),
            }));
        }
        entry
    }
}
