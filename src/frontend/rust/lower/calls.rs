//! Lowering calls: method and path calls, API knowledge and builders, calls into the
//! crate and the closures handed to them, and the events a call emits.

use syn::spanned::Spanned;
use syn::Expr;

use super::outcome::ends_in_fallible;
use super::spans::expr_span;
use super::{
    collect_idents, is_stream_role, short_text, strip, Builder, Info, Lowerer, TOPIC_MARK,
};
use crate::apis::{ApiEvent as Api, BuilderStep, CallSpec};
use crate::frontend::rust::{resolve_path, stored, TypeInfo};
use crate::ir::{Callee, ClientRef, ClosureRun, Event, EventKind, Loc, Node};

/// The name serde writes the struct field `name` under.
fn serialized_name(name: &str, ti: &TypeInfo) -> String {
    ti.serialized.clone().unwrap_or_else(|| name.to_string())
}

/// A pack's `on_table` matching only a receiver that names a dedup table.
const TABLE_DEDUP: &str = "dedup";

impl<'a, 'b> Lowerer<'a, 'b> {
    // ----- calls ---------------------------------------------------------------

    /// A method call `recv.name(args)`. Its kind is decided in this order: a
    /// builder's step or terminal, a wrapper the config declares, a method of the
    /// crate, a Kafka client config chain, the API knowledge, then the standard
    /// library's methods.
    pub(super) fn method_call(&mut self, mc: &syn::ExprMethodCall, out: &mut Vec<Node>) -> Info {
        // A retry policy's method given the closure it retries (again's
        // `policy.retry(|| async { … })`): the call is lowered inside a retry scope.
        let retried = mc
            .args
            .first()
            .is_some_and(|a| matches!(strip(a), Expr::Closure(_)))
            && (self.cx.apis.retry_arg_methods.iter()).any(|m| mc.method == m);
        if !retried {
            return self.method_call_inner(mc, out);
        }
        let loc = self.cx.loc(mc.method.span(), mc.paren_token.span.close());
        self.open_retry_scope(loc, format!(".{}", mc.method));
        let start = out.len();
        let info = self.method_call_inner(mc, out);
        self.close_retry_scope(&out[start..]);
        info
    }

    fn method_call_inner(&mut self, mc: &syn::ExprMethodCall, out: &mut Vec<Node>) -> Info {
        // The callee's text (`.send`) is written only for an argument a channel flows in.
        let callee = format_args!(".{}", mc.method);
        self.link_chan_args(&callee, mc.args.iter());
        let name = mc.method.to_string();
        let mut recv = self.method_receiver(mc, &name, out);
        let loc = self.cx.loc(mc.method.span(), mc.paren_token.span.close());
        // The call as written, for the events it makes (most calls make none: a
        // receiver's text is read only when asked, not once per link of a chain).
        let cx = self.cx;
        let call_text = || {
            let recv_text = short_text(&cx.text_of(expr_span(&mc.receiver)));
            format!("{recv_text}.{}", mc.method)
        };
        let args: Vec<&Expr> = mc.args.iter().collect();
        self.ack_setting_in_call(mc, &name);

        // A builder's terminal, or a step along the builder.
        if let Some(b) = recv.builder.take() {
            return self.builder_method(b, &name, &args, &loc, &call_text(), out);
        }

        // The project's own wrappers, declared in the config, win over their bodies.
        let matched = self.match_method(&name, &recv, &args, out);
        if let Some(spec) = matched.filter(|s| s.loose) {
            return self.api_call(spec, Some(&recv), &args, &name, loc, call_text(), out);
        }

        let crate_method = (self.crate_method_receiver(&recv, &name)).or_else(|| {
            matched
                .is_none()
                .then(|| self.extension_method(&recv, &name))?
        });
        if let Some(receiver_type) = crate_method {
            let (arg_infos, closures) = self.crate_args(&args, out);
            return self.crate_call(
                Callee::Method {
                    name,
                    receiver_type,
                },
                recv.value,
                &arg_infos,
                closures,
                loc,
                call_text(),
                out,
            );
        }

        // rdkafka `ClientConfig` chains.
        if recv
            .role
            .as_deref()
            .is_some_and(|r| self.cx.apis.config_roles.contains(r))
        {
            return self.kafka_config_call(mc, recv, &args, loc, out);
        }
        if self.cx.apis.topics.subscribe.contains(&name) {
            let mut topics = self.topic_texts(&mc.args.iter().collect::<Vec<_>>());
            for a in &mc.args {
                topics.extend(self.field_names_in(a));
            }
            match (
                recv.kafka_client,
                recv.value.and_then(|v| self.client_ref(v)),
            ) {
                (Some(i), _) => self.kafka_clients[i].topics.extend(topics),
                // A client a crate function made (`let c = cfg.consumer()?`).
                (None, Some(ClientRef::Made(callee))) if !topics.is_empty() => {
                    self.made_client_topics.push((callee, topics));
                }
                _ => {}
            }
        }

        // API knowledge.
        if let Some(spec) = matched {
            let mut info = self.api_call(spec, Some(&recv), &args, &name, loc, call_text(), out);
            if spec.event == Api::Publish {
                self.note_sent_topics(&args, recv.kafka_client);
            }
            if let Some(role) = self.turbofish_role(mc) {
                info.role = Some(role);
            }
            return info;
        }
        let mut info = self.std_method(recv, &name, &args, out);
        // `stamp.to_string()`, `Utc::now().timestamp_millis().to_string()`: a clock
        // reading rendered as text is an id (not one reduced first by a method given
        // arguments, `now.format("%Y-%m")`: a calendar bucket).
        if args.is_empty()
            && info.fresh.is_none()
            && self.cx.apis.std.renders.contains(&name)
            && plain_chain(&mc.receiver)
        {
            info.fresh = self.clock_in(&info.mentions);
        }
        info
    }

    /// Lowers a method call's receiver, inside the retry scope a retry method opens
    /// on a closure (backon: `(|| async { … }).retry(policy)`); an operation's error
    /// that the method turns into a value (`op.await.ok()`, `.unwrap_or_default()`)
    /// is an ignored error: the code goes on (an ack after a failure).
    fn method_receiver(
        &mut self,
        mc: &syn::ExprMethodCall,
        name: &str,
        out: &mut Vec<Node>,
    ) -> Info {
        let retried = self.cx.apis.retry_methods.iter().any(|m| m == name)
            && matches!(strip(&mc.receiver), Expr::Closure(_));
        if retried {
            let loc = self.cx.loc(mc.method.span(), mc.paren_token.span.close());
            self.open_retry_scope(loc, format!(".{}", mc.method));
        }
        let before = out.len();
        // `let r = op.await; r.map(..).unwrap_or_else(|e| log(e))`.
        let bound = self.bound_chain_root(&mc.receiver, out);
        let mut recv = self.expr(&mc.receiver, out);
        // A struct literal called on (`Settle { receipt, index }.finish(..)`) is a value
        // holding its fields, as a binding of it is: the method's `self.index` is `index`.
        if recv.value.is_none() && !recv.field_values.is_empty() {
            recv.value = Some(self.value_from("", &recv));
        }
        let results = &self.cx.apis.std.results;
        if results.swallows.iter().any(|m| m == name)
            && ((out.len() > before && ends_in_fallible(out)) || bound.is_some())
        {
            let how = format!(".{}()", mc.method);
            let marker = self.error_ignored(mc.method.span(), &how, false);
            self.note_handled_outcome(bound, Some(&marker));
            out.push(marker);
        }
        if retried {
            self.close_retry_scope(&out[before..]);
        }
        recv
    }

    /// A method called on a builder: its terminal emits the builder's event; another
    /// step adds its arguments to the builder, and the packs' `[builder_steps]`
    /// change what the statement does (diesel's `on_conflict_do_nothing`, `set`).
    fn builder_method(
        &mut self,
        b: Box<Builder>,
        name: &str,
        args: &[&Expr],
        loc: &Loc,
        text: &str,
        out: &mut Vec<Node>,
    ) -> Info {
        let arg_infos = self.plain_args(args, out);
        self.note_dedup_args(name, false, &arg_infos);
        let mut b = self.current_builder(b);
        if b.spec.terminals.iter().any(|t| t == name) {
            self.finish_text(&mut b, loc, text);
            return self.builder_event(*b, name, &arg_infos, out);
        }
        self.text_step(&mut b, name, args, &arg_infos);
        for a in &arg_infos {
            b.mentions.extend(a.mentions.iter().copied());
            b.strs.extend(a.str_lit.iter().cloned());
        }
        if let Some(sql) = b.sql.as_mut() {
            match self.cx.apis.builder_steps.get(name) {
                Some(BuilderStep::IgnoresConflict) => sql.ignores_conflict = true,
                Some(BuilderStep::Upsert) => sql.upsert = true,
                Some(BuilderStep::Assignments) => {
                    sql.self_referencing |= args.iter().any(|a| self.adds_to_itself(a));
                    sql.marks_done |= args.iter().any(|a| self.assignments_mark_done(a));
                }
                None => {}
            }
        }
        Info {
            builder: Some(b),
            ..Info::default()
        }
    }

    /// Whether `recv.name(..)` calls a method of the crate, and on which type
    /// (`Some(None)`: the receiver's type is unknown, the method found by name).
    /// Methods of the crate's own types; or, receiver type unknown, methods of the
    /// crate's types by name: not for names that standard types have (`as_str`,
    /// `len`, …), nor for a received message's methods when the API knows them
    /// (`delivery.ack(..)`).
    fn crate_method_receiver(&self, recv: &Info, name: &str) -> Option<Option<String>> {
        match recv.crate_type.clone() {
            // A collection of the crate's values (`self.batch.clear()` on a `Vec`) or
            // a type from outside: never a crate method.
            _ if recv.outside => None,
            Some(ty) if self.has_method(&ty, name) => Some(Some(ty)),
            Some(_) => None,
            None => {
                let message_api = recv.value.is_some_and(|v| self.is_message(v))
                    && self.cx.apis.methods.contains_key(name);
                (recv.role.is_none() && !message_api && self.cx.links_untyped(name)).then_some(None)
            }
        }
    }

    /// A method the crate adds to a library's type through a trait of its own (`impl
    /// ChannelExt for Channel { async fn ack_ok(..) }`, then `channel.ack_ok(tag)`):
    /// the receiver has the type's role, and the API knowledge has no such method.
    fn extension_method(&self, recv: &Info, name: &str) -> Option<Option<String>> {
        let role = recv.role.as_deref()?;
        if recv.crate_type.is_some() {
            return None;
        }
        let names = self.cx.apis.types_of_role.get(role)?;
        (names.iter())
            .find(|ty| self.has_method(ty, name))
            .map(|ty| Some(ty.clone()))
    }

    /// `producer.send(FutureRecord::to("topic")…)`: the topic a publish sends to,
    /// also through a record built earlier (`let record = FutureRecord::to(..)`),
    /// noted for the function and for the Kafka client `client` sent through.
    fn note_sent_topics(&mut self, args: &[&Expr], client: Option<usize>) {
        let peeked = args.first().map(|a| self.peek(a)).unwrap_or_default();
        let mut topics: Vec<String> = peeked
            .idents
            .iter()
            .filter_map(|i| i.strip_prefix(TOPIC_MARK).map(String::from))
            .collect();
        let records = &self.cx.apis.topics;
        if topics.is_empty() && peeked.idents.iter().any(|i| records.is_record_type(i)) {
            topics = self.topic_texts(&args[..1]).into_iter().take(1).collect();
        }
        if let Some(i) = client {
            self.kafka_clients[i].topics.extend(topics.iter().cloned());
        }
        self.sent_topics.extend(topics);
    }

    /// The topic names written in `es`: string literals, and the crate's string
    /// constants named there (`FutureRecord::to(TOPIC)`, `subscribe(&[ORDERS, REFUNDS])`).
    fn topic_texts(&self, es: &[&Expr]) -> Vec<String> {
        use syn::visit::Visit;
        struct Consts<'l, 'a, 'b>(&'l Lowerer<'a, 'b>, Vec<String>);
        impl<'ast> Visit<'ast> for Consts<'_, '_, '_> {
            fn visit_lit_str(&mut self, s: &'ast syn::LitStr) {
                self.1.push(s.value());
            }
            fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
                let Some(last) = p.path.segments.last() else {
                    return;
                };
                let name = last.ident.to_string();
                let local = p.path.segments.len() == 1 && self.0.lookup(&name).is_some();
                if let Some(v) = self.0.cx.const_value(&name).filter(|_| !local) {
                    self.1.push(v.clone());
                }
            }
        }
        let mut v = Consts(self, Vec::new());
        for e in es {
            v.visit_expr(e);
        }
        v.1
    }

    /// A method neither the crate nor the API knowledge has: the standard library's
    /// (`Apis::std`) handler callbacks and adapters over a message stream, iterator
    /// steps keeping a crate type's elements, wrappers' accessors and aliases; any
    /// other method's value derives from its receiver and arguments.
    fn std_method(&mut self, recv: Info, name: &str, args: &[&Expr], out: &mut Vec<Node>) -> Info {
        // Handler callbacks over a message stream.
        if self.cx.apis.std.stream_callbacks.contains(name) && is_stream_role(recv.role.as_deref())
        {
            if let Some(last) = args.last() {
                for a in &args[..args.len() - 1] {
                    self.expr(a, out);
                }
                if self.special_arg(last, ClosureRun::Callback, None, out) {
                    // `and_then` / `then`: a callback whose results make the stream
                    // the chain goes on with (`.and_then(decode).try_for_each(store)`).
                    if self.cx.apis.std.stream_adapters.contains(name) {
                        return recv;
                    }
                    return Info::default();
                }
            }
        }

        // A stream of the same messages, mapped or filtered (`consumer.try_filter_map(..)`):
        // receiving from it receives from the receiver.
        if self.cx.apis.std.stream_adapters.contains(name) && is_stream_role(recv.role.as_deref()) {
            self.plain_args(args, out);
            return recv;
        }

        // Iterator steps over a collection of a crate type keep the element's type, and
        // an adapter's closure takes it as its parameter.
        if recv.crate_type.is_some() && self.cx.apis.std.element_closures.contains(name) {
            self.closure_param_hint = recv.crate_type.clone().map(|t| TypeInfo {
                role: None,
                crate_type: Some(t),
                outside: false,
                generic: None,
                elem: None,
                ..TypeInfo::default()
            });
        }
        let args_start = out.len();
        self.closure_value = None;
        let arg_infos = self.plain_args(args, out);
        self.closure_param_hint = None;
        // `topic.and_then(|t| table.get(&t))`: the closure's value.
        let closure_value = self.closure_value.take().filter(|_| {
            self.cx.apis.std.value_closures.contains(name)
                && matches!(args, [a] if matches!(strip(a), Expr::Closure(_)))
        });
        self.note_dedup_args(name, false, &arg_infos);
        if self.cx.apis.std.store_methods.contains(name) {
            self.note_held_future(recv.value, args, &out[args_start..]);
            self.note_task_set(recv.value, &arg_infos);
            self.count_fill(recv.value);
            self.store_into(recv.value, &arg_infos);
            self.push_element(recv.value, &arg_infos);
        }
        // `pending.drain(..)`, `pending.pop()`: elements holding the fields pushed.
        if let Some(info) = self.element_step(name, &recv) {
            return info;
        }
        let std = &self.cx.apis.std;
        if recv.crate_type.is_some()
            && (std.element_methods.contains(name)
                || (recv.outside && std.element_accessors.contains(name)))
        {
            let mut info = self.derived(&recv);
            info.crate_type = recv.crate_type.clone();
            return info;
        }
        // Accessors of the wrappers the types see through (Rocket `State::inner`,
        // actix `Data::get_ref`): the wrapped value, with its role.
        let std = &self.cx.apis.std;
        let accessor = std.accessors.contains(name)
            && args.is_empty()
            && (recv.role.is_some() || recv.crate_type.is_some());
        if accessor || std.aliases.contains(name) {
            let mut info = recv;
            for a in &arg_infos {
                info.absorb(a);
            }
            return info;
        }
        let mut info = self.derived(&recv);
        for a in &arg_infos {
            info.absorb(a);
        }
        // `OnConflict::column(c).do_nothing()`: a step the packs' `[chain_idents]`
        // name, carried to the statement the value is given to.
        if self.cx.apis.chain_idents.contains_key(name) {
            info.idents.push(name.to_string());
        }
        if let Some((role, crate_type)) = closure_value.filter(|v| v.0.is_some() || v.1.is_some()) {
            (info.role, info.crate_type) = (role, crate_type);
        }
        info
    }

    /// A method called by its path (`Type::method(&recv, ..)`) when the API knows the
    /// method on the first argument's role, or on the role of the type named.
    pub(super) fn qualified_method_call(
        &mut self,
        segs: &[String],
        args: &[&Expr],
        loc: &Loc,
        text: &str,
        out: &mut Vec<Node>,
    ) -> Option<Info> {
        let [.., owner, name] = segs else {
            return None;
        };
        if args.is_empty()
            || !owner.starts_with(|c: char| c.is_ascii_uppercase())
            || self.is_crate_fn(segs)
            || !self.cx.apis.methods.contains_key(name.as_str())
        {
            return None;
        }
        let resolved = resolve_path(self.cx.uses, &segs[..segs.len() - 1]);
        let owner_role =
            crate::frontend::rust::role_of_resolved(self.cx.apis, self.cx.uses, &resolved);
        let mut peeked = self.peek(args[0]);
        if peeked.role.is_none() {
            peeked.role.clone_from(&owner_role);
        }
        peeked.role.as_ref()?;
        self.match_method(name, &peeked, &args[1..], out)?;
        let mut recv = self.expr(args[0], out);
        if recv.role.is_none() {
            recv.role = owner_role;
        }
        let Some(spec) = self.match_method(name, &recv, &args[1..], out) else {
            // The receiver is lowered already: lower the rest once, as a plain call.
            let mut info = self.derived(&recv);
            for a in self.plain_args(&args[1..], out) {
                info.absorb(&a);
            }
            return Some(info);
        };
        Some(self.api_call(
            spec,
            Some(&recv),
            &args[1..],
            name,
            loc.clone(),
            text.to_string(),
            out,
        ))
    }

    /// Lowers arguments in order; closures and async blocks among them run now.
    pub(super) fn plain_args(&mut self, args: &[&Expr], out: &mut Vec<Node>) -> Vec<Info> {
        args.iter().map(|a| self.arg(a, out)).collect()
    }

    /// The deferred async block or closure a local name holds.
    pub(super) fn deferred_of(&self, e: &Expr) -> Option<Node> {
        let Expr::Path(p) = strip(e) else { return None };
        let v = self.lookup(&p.path.get_ident()?.to_string())?;
        self.values[v as usize].deferred.as_deref().cloned()
    }

    /// An argument: a deferred block or closure handed to a call runs there.
    pub(super) fn arg(&mut self, e: &Expr, out: &mut Vec<Node>) -> Info {
        if let Some(n) = self.deferred_of(e) {
            out.push(n);
        }
        self.expr(e, out)
    }

    pub(super) fn has_method(&self, ty: &str, name: &str) -> bool {
        self.cx.owned_sigs(name, ty).is_some_and(|sigs| {
            sigs.iter()
                .any(|s| s.self_type.as_deref() == Some(ty) || s.trait_name.as_deref() == Some(ty))
        })
    }

    pub(super) fn match_method(
        &mut self,
        name: &str,
        recv: &Info,
        args: &[&Expr],
        _out: &mut Vec<Node>,
    ) -> Option<&'a CallSpec> {
        let apis: &'a crate::apis::Apis = self.cx.apis;
        let named = apis.methods.get(name).into_iter().flatten();
        // `*` entries: any method on a role (builders such as `redis::pipe()`).
        let any = apis.methods.get("*").into_iter().flatten();
        let specs: Vec<&'a CallSpec> = named.chain(any).collect();
        if specs.is_empty() {
            return None;
        }
        let mut peek: Vec<Info> = args.iter().map(|a| self.peek(a)).collect();
        if specs.iter().any(|s| !s.arg_keys.is_empty()) {
            for (info, a) in peek.iter_mut().zip(args) {
                info.lits = self.literals_of(a);
            }
        }
        specs
            .into_iter()
            .find(|s| self.spec_matches(s, Some(recv), &peek, None))
    }

    /// The string literals an argument writes: in its tokens, or, for a local, in the
    /// `let` that bound it.
    pub(super) fn literals_of(&self, e: &Expr) -> Vec<String> {
        if let Expr::Path(p) = strip(e) {
            if let Some(id) = p.path.get_ident() {
                if let Some(v) = self.lookup(&id.to_string()) {
                    return self.values[v as usize].lits.clone();
                }
            }
        }
        let mut out = Vec::new();
        super::token_strings(quote::ToTokens::to_token_stream(e), &mut out);
        out.extend(self.message_keyed_fields(e));
        out
    }

    /// The names (as serde writes them) of the fields of a crate's struct that a
    /// struct literal sets from the received message (`Order { id:
    /// msg.order_id.clone(), .. }`, a field renamed `#[serde(rename = "_id")]` or
    /// named `_id`). Matched with the packs' `arg_keys` as the literals a document
    /// writes are: the inserted value's type has a field serialized as `_id` set from
    /// the message (a field left `None` or given a fresh id is not).
    pub(super) fn message_keyed_fields(&self, e: &Expr) -> Vec<String> {
        match strip(e) {
            Expr::Struct(s) => {
                let Some(last) = s.path.segments.last().map(|l| l.ident.to_string()) else {
                    return Vec::new();
                };
                let ty = if last == "Self" {
                    let Some(t) = self.self_type.clone() else {
                        return Vec::new();
                    };
                    t
                } else {
                    last
                };
                let Some(fields) = self.cx.fields_of(&ty) else {
                    return Vec::new();
                };
                s.fields
                    .iter()
                    .filter_map(|fv| {
                        let syn::Member::Named(name) = &fv.member else {
                            return None;
                        };
                        let name = name.to_string();
                        let ti = fields.get(&name)?;
                        self.names_message(&fv.expr)
                            .then(|| serialized_name(&name, ti))
                    })
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// The fields a value of the crate's type `ty` taken whole from the message
    /// (`let order: Order = serde_json::from_slice(&d.data)?`) sets from it: those
    /// that are not `Option` (one may be left `None`, the driver then minting an id).
    pub(super) fn message_typed_fields(&self, ty: &str) -> Vec<String> {
        self.cx.fields_of(ty).map_or_else(Vec::new, |fields| {
            fields
                .iter()
                .filter(|(_, ti)| !ti.optional)
                .map(|(name, ti)| serialized_name(name, ti))
                .collect()
        })
    }

    /// Whether an expression names a value taken from the received message (its
    /// identifiers, macros' tokens included).
    fn names_message(&self, e: &Expr) -> bool {
        super::super::idents_of(e)
            .iter()
            .filter_map(|n| self.lookup(n))
            .any(|v| self.root(v).is_some())
    }

    /// Cheap facts about an argument without lowering it (for matching a spec).
    pub(super) fn peek(&mut self, e: &Expr) -> Info {
        let mut scratch = Vec::new();
        match strip(e) {
            Expr::Closure(_) | Expr::Async(_) => Info::default(),
            // Lowering twice would duplicate events: only look at simple shapes.
            Expr::Path(_)
            | Expr::Lit(_)
            | Expr::Field(_)
            | Expr::Reference(_)
            | Expr::Unary(_)
            | Expr::Paren(_) => {
                let n = self.values.len();
                let info = self.expr(e, &mut scratch);
                debug_assert!(scratch.is_empty() || self.values.len() >= n);
                info
            }
            other => {
                let mut info = Info::default();
                collect_idents(other, &mut info.idents);
                info
            }
        }
    }

    pub(super) fn spec_matches(
        &self,
        s: &CallSpec,
        recv: Option<&Info>,
        args: &[Info],
        path: Option<&[String]>,
    ) -> bool {
        if let Some(recv) = recv {
            let role_ok = match &recv.role {
                Some(r) => s.on.iter().any(|o| o == r || o == "*"),
                None => s.on.iter().any(|o| o == "?" || o == "*"),
            };
            if !role_ok {
                return false;
            }
            if let (Some(t), Some(rt)) = (&s.on_type, &recv.crate_type) {
                if t != rt {
                    return false;
                }
            }
        }
        if let Some(path) = path {
            let ok = s.paths.iter().any(|p| {
                let ps: Vec<&str> = p.split("::").collect();
                let suffix = path.len() >= ps.len()
                    && path[path.len() - ps.len()..]
                        .iter()
                        .zip(&ps)
                        .all(|(a, b)| a == b);
                let loose = s.loose
                    && ps.len() > path.len()
                    && ps[ps.len() - path.len()..]
                        .iter()
                        .zip(path)
                        .all(|(a, b)| a == b);
                suffix || loose
            });
            if !ok {
                return false;
            }
        }
        if s.arity.is_some_and(|n| n != args.len()) {
            return false;
        }
        if !s.arg_mentions.is_empty()
            && !args
                .iter()
                .any(|a| a.idents.iter().any(|i| s.arg_mentions.contains(i)))
        {
            return false;
        }
        if !s.arg_keys.is_empty()
            && !args
                .iter()
                .any(|a| a.lits.iter().any(|l| s.arg_keys.contains(l)))
        {
            return false;
        }
        if let Some(which) = s.on_table.as_deref() {
            let Some(t) = recv.and_then(super::events::named_table) else {
                return false;
            };
            if which == TABLE_DEDUP && !crate::ir::Tables::default().is_dedup(t) {
                return false;
            }
        }
        if !s.arg0_str.is_empty() {
            let Some(lit) = args.first().and_then(|a| a.str_lit.as_deref()) else {
                return false;
            };
            if !s.arg0_str.iter().any(|x| x.eq_ignore_ascii_case(lit)) {
                return false;
            }
        }
        if !s.arg0_role.is_empty() {
            let Some(r) = args.first().and_then(|a| a.role.as_deref()) else {
                return false;
            };
            if !s.arg0_role.iter().any(|x| x == r) {
                return false;
            }
        }
        true
    }

    /// A call `f(args)`. Its kind is decided in this order: a local value called
    /// (a deferred closure or async block, or another value), an expression called,
    /// a value passed through (`Ok(x)`, `timeout(d, x)`), a method called through
    /// its path, a wrapper the config declares, a function of the crate, the API
    /// knowledge, then an unknown function.
    pub(super) fn call(&mut self, c: &syn::ExprCall, out: &mut Vec<Node>) -> Info {
        if let Expr::Path(p) = strip(&c.func) {
            self.queue_lifetime_in_default(&p.path);
        }
        if let Some(info) = self.slot_call(c, out) {
            return info;
        }
        if let Some(info) = self.local_value_call(c, out) {
            return info;
        }
        let Expr::Path(p) = strip(&c.func) else {
            let f = self.expr(&c.func, out);
            let mut info = self.collect(c.args.iter(), out);
            info.absorb(&f);
            return info;
        };
        let segs = crate::frontend::rust::segments(&p.path);
        self.link_chan_args_of_path(&segs, c);
        let loc = self.cx.loc(expr_span(&c.func), c.paren_token.span.close());
        let text = segs.join("::");
        let args: Vec<&Expr> = c.args.iter().collect();
        let last = segs.last().cloned().unwrap_or_default();

        // What the packs' `paths` say of the call, before any argument is lowered.
        let early = self.path_spec(&segs, &args);
        // `aws_sdk_sns::Client::new(&conf)`: a client of the role its type has.
        if let Some(spec) = self.constructor_spec(&segs, early.as_ref()) {
            return self.path_api_call(&spec, &args, &last, loc, text, out);
        }
        // `Ok(x)`, `Some(x)`, `Box::new(x)`, `Arc::clone(&x)`: the value passes through.
        let passthrough = self.cx.apis.std.passthrough.contains(last.as_str());
        if passthrough && args.len() == 1 && !self.is_crate_fn(&segs) && early.is_none() {
            return self.expr(args[0], out);
        }
        // `timeout(d, producer.lock())`: the last argument's value passes through.
        if self.cx.apis.std.passthrough_last.contains(last.as_str())
            && args.len() >= 2
            && !self.is_crate_fn(&segs)
            && early.is_none()
        {
            for a in &args[..args.len() - 1] {
                self.expr(a, out);
            }
            return self.expr(args[args.len() - 1], out);
        }

        // `Acker::ack(&delivery.acker, opts)`, `Consumer::commit_message(&c, &m, mode)`:
        // a method called through its type or trait, its receiver the first argument.
        if let Some(info) = self.qualified_method_call(&segs, &args, &loc, &text, out) {
            return info;
        }
        // (Again: the qualified call may have lowered the first argument.)
        let late = self.path_spec(&segs, &args);
        if let Some(spec) = late.as_ref().filter(|s| s.loose) {
            return self.api_call(spec, None, &args, &last, loc, text, out);
        }
        if let Some(path) = self.crate_fn_path(&segs) {
            let (arg_infos, closures) = self.crate_args(&args, out);
            return self.crate_call(
                Callee::Path(path),
                None,
                &arg_infos,
                closures,
                loc,
                text,
                out,
            );
        }
        if let Some(spec) = late {
            return self.path_api_call(&spec, &args, &last, loc, text, out);
        }
        self.unknown_call(c, &segs, &args, &last, out)
    }

    /// A call of a value taken from a struct's callable field (`(self.audit)(..)`, a
    /// `hook` of `for hook in &self.hooks`, a handler a `routes.get(k)` gave): a call
    /// of the closures the crate stores there (`stored`), the field's slot as the
    /// receiver type of the closures' common name. `None`: no such value.
    fn slot_call(&mut self, c: &syn::ExprCall, out: &mut Vec<Node>) -> Option<Info> {
        let f = strip(&c.func);
        if !matches!(f, Expr::Path(_) | Expr::Field(_)) || self.deferred_of(&c.func).is_some() {
            return None;
        }
        let slot = self.peek(f).crate_type.filter(|t| stored::is_slot(t))?;
        let args: Vec<&Expr> = c.args.iter().collect();
        let (arg_infos, closures) = self.crate_args(&args, out);
        let loc = self.cx.loc(c.func.span(), c.paren_token.span.close());
        // `self.audit`, `hook`: the value called, as written.
        let text: String = quote::ToTokens::to_token_stream(f)
            .to_string()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let callee = Callee::Method {
            name: stored::CLOSURE_IDENT.to_string(),
            receiver_type: Some(slot),
        };
        Some(self.crate_call(callee, None, &arg_infos, closures, loc, text, out))
    }

    /// A call of a local value: an async block or closure bound to the name runs here;
    /// another local value called is a `CallValue` event. `None`: not a local value.
    fn local_value_call(&mut self, c: &syn::ExprCall, out: &mut Vec<Node>) -> Option<Info> {
        if let Some(n) = self.deferred_of(&c.func) {
            let info = self.collect(c.args.iter(), out);
            out.push(n);
            return Some(Info {
                mentions: info.mentions,
                ..Info::default()
            });
        }
        let Expr::Path(p) = strip(&c.func) else {
            return None;
        };
        let v = p
            .path
            .get_ident()
            .and_then(|id| self.lookup(&id.to_string()))?;
        let info = self.collect(c.args.iter(), out);
        out.push(Node::Event(Event {
            kind: EventKind::CallValue { callee: v },
            loc: self.cx.loc(c.func.span(), c.paren_token.span.close()),
            text: self.values[v as usize].name.clone(),
            describe: "call".into(),
        }));
        Some(Info {
            mentions: info.mentions,
            ..Info::default()
        })
    }

    /// `worker(rx)`, `Worker::new(rx, ..)`: a channel end passed to a parameter of
    /// the function the path names (`Self::` read as the self type).
    fn link_chan_args_of_path(&mut self, segs: &[String], c: &syn::ExprCall) {
        let n = segs.len();
        let typed = (n >= 2)
            .then(|| &segs[n - 2])
            .filter(|t| t.chars().next().is_some_and(|c| c.is_ascii_uppercase()));
        let callee = match typed {
            Some(t) if t == "Self" => self
                .self_type
                .as_ref()
                .map(|s| format!("{s}::{}", segs[n - 1])),
            Some(t) => Some(format!("{t}::{}", segs[n - 1])),
            None => segs.last().cloned(),
        };
        if let Some(callee) = callee {
            self.link_chan_args(&callee, c.args.iter());
        }
    }

    /// A function neither the crate nor the API knowledge has: its value carries its
    /// arguments' mentions and its path's identifiers, and the topic of a record
    /// built for one (`FutureRecord::to("orders")`, the packs' `[topics] records`).
    /// Its result is not the fresh id it was given (a file read from a fresh
    /// temporary name is not an identity), unless it serializes (an envelope with a
    /// fresh `event_id`, encoded into the payload), or it constructs a tuple struct or
    /// an enum variant (`AMQPValue::LongString(id)`: the value wraps the id).
    fn unknown_call(
        &mut self,
        c: &syn::ExprCall,
        segs: &[String],
        args: &[&Expr],
        last: &str,
        out: &mut Vec<Node>,
    ) -> Info {
        let mut info = self.collect(c.args.iter(), out);
        self.note_dedup_args(last, true, std::slice::from_ref(&info));
        let mut idents = std::mem::take(&mut info.idents);
        idents.extend(segs.iter().cloned());
        if let Some(ty) = self.cx.apis.topics.record_type(segs) {
            if let Some(t) = self.topic_texts(&args[..args.len().min(1)]).first() {
                idents.push(format!("{TOPIC_MARK}{t}"));
            }
            idents.push(ty.to_string());
        }
        let serializes = self.cx.apis.std.serializers.contains(last)
            || last.starts_with(|c: char| c.is_ascii_uppercase());
        Info {
            mentions: info.mentions,
            idents,
            fresh: if serializes { info.fresh } else { None },
            fresh_blocked: !serializes,
            ..Info::default()
        }
    }

    pub(super) fn path_spec(&mut self, segs: &[String], args: &[&Expr]) -> Option<CallSpec> {
        let last = segs.last()?;
        let apis = self.cx.apis;
        let specs = apis.paths.get(last)?;
        let resolved = resolve_path(self.cx.uses, segs);
        let peek: Vec<Info> = args.iter().map(|a| self.peek(a)).collect();
        specs
            .iter()
            .find(|s| self.spec_matches(s, None, &peek, Some(&resolved)))
            .cloned()
    }
}

/// A receiver reached through methods of no argument only (`stamp`,
/// `Utc::now().timestamp_millis()`).
pub(super) fn plain_chain(e: &Expr) -> bool {
    match strip(e) {
        Expr::MethodCall(m) => m.args.is_empty() && plain_chain(&m.receiver),
        Expr::Reference(r) => plain_chain(&r.expr),
        _ => true,
    }
}

impl Lowerer<'_, '_> {
    /// The names the crate's struct literals put in the fields an expression reads
    /// (`&[settings.topic.as_str()]`: the `topic` of `Settings { topic: "t".into(), .. }`),
    /// a field no literal parsed yet fills is noted for the prefilter
    /// (`Function::topic_fields`).
    fn field_names_in(&mut self, e: &Expr) -> Vec<String> {
        use syn::visit::Visit;
        struct Fields<'e>(Vec<&'e syn::ExprField>);
        impl<'e> Visit<'e> for Fields<'e> {
            fn visit_expr_field(&mut self, f: &'e syn::ExprField) {
                self.0.push(f);
            }
        }
        let mut fields = Fields(Vec::new());
        fields.visit_expr(e);
        let mut out = Vec::new();
        for f in fields.0 {
            let syn::Member::Named(name) = &f.member else {
                continue;
            };
            let base = self.peek(&f.base);
            let Some(ty) = (base.value).and_then(|b| self.values[b as usize].crate_type.clone())
            else {
                continue;
            };
            let name = name.to_string();
            match self.cx.field_name(&ty, &name) {
                Some(t) => out.push(t),
                None => self.topic_fields.push((ty, name)),
            }
        }
        out
    }
}
