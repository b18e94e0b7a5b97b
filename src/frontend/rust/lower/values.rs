//! Values: locals, parameters and patterns bound to the values events act on,
//! with the roles their types and origins give.

use syn::spanned::Spanned;
use syn::{Expr, Pat};

use super::{is_message_role, strip, Info, Lowerer, Value};
use crate::apis::Role;
use crate::frontend::rust::{sql, stored, type_info, TypeInfo};
use crate::ir::{Loc, ValueId};

impl<'a, 'b> Lowerer<'a, 'b> {
    pub(super) fn new_value(&mut self, name: &str, ti: TypeInfo) -> ValueId {
        self.uses.push(0);
        self.finishes.push(0);
        self.values.push(Value {
            name: name.to_string(),
            role: ti.role,
            crate_type: ti.crate_type,
            outside: ti.outside,
            chan: ti.elem.map(|t| format!("T:{t}")).into_iter().collect(),
            depth: self.loops.len() as u32,
            ..Value::default()
        });
        (self.values.len() - 1) as ValueId
    }

    pub(super) fn bind(&mut self, name: &str, v: ValueId) {
        if let Some(val) = self.values.get_mut(v as usize).filter(|val| val.opened) {
            val.opened = false;
            val.name = name.to_string();
        }
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), v);
        }
    }

    pub(super) fn lookup(&self, name: &str) -> Option<ValueId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    pub(super) fn type_info(&self, ty: &syn::Type) -> TypeInfo {
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
    pub(super) fn awaited_tasks(&self, base: &Expr, info: &Info) -> Option<Option<ValueId>> {
        if let Some(v) = info.value {
            let val = &self.values[v as usize];
            if Role::JoinHandle.is(val.role.as_deref()) {
                return Some(Some(v));
            }
            // (A message is never awaited: a loop variable taken for one, as in
            // `for h in handles { h.await?; }` over handles of tasks that
            // mention a message, is a task's handle.)
            let root = val.msg_root.is_none_or(|r| r == v);
            if val.role.is_none() && root && matches!(strip(base), Expr::Path(_)) {
                return Some(None);
            }
        }
        // `dispatch(job).await`, `dispatch` returning the `JoinHandle` of the task it
        // spawned: the tasks it spawned are awaited.
        if info.value.is_none() && Role::JoinHandle.is(info.role.as_deref()) {
            return Some(None);
        }
        // `running.next().await` on a local holding spawned tasks' handles.
        if let Expr::MethodCall(m) = strip(base) {
            let set = self.path_value(&m.receiver);
            if m.args.is_empty() && set.is_some_and(|s| self.task_sets.contains(&s)) {
                return Some(None);
            }
        }
        let joins = &self.cx.apis.std.task_joins;
        let callee = match strip(base) {
            Expr::Call(c) => match strip(&c.func) {
                Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                _ => None,
            },
            Expr::MethodCall(m) => Some(m.method.to_string()),
            Expr::Macro(m) => m.mac.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        if callee.is_some_and(|c| joins.contains(&c)) {
            return Some(None);
        }
        // `stream::iter(xs).map(|x| op(x)).buffer_unordered(n).collect().await`: a
        // chain through a method that runs a stream's futures concurrently joins them.
        let stream_joins = &self.cx.apis.std.stream_joins;
        let mut e = strip(base);
        while let Expr::MethodCall(m) = e {
            if stream_joins.contains(&m.method.to_string()) {
                return Some(None);
            }
            e = strip(&m.receiver);
        }
        None
    }

    pub(super) fn bind_param(&mut self, pat: &Pat, ti: TypeInfo) -> Option<ValueId> {
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

    pub(super) fn is_message(&self, v: ValueId) -> bool {
        self.values
            .get(v as usize)
            .is_some_and(|x| x.msg_root.is_some())
    }

    pub(super) fn root(&self, v: ValueId) -> Option<ValueId> {
        self.values.get(v as usize).and_then(|x| x.msg_root)
    }

    /// Binds the identifiers of a pattern to the value of `info`: a single binding
    /// (through `Some(..)`, `Ok(..)`, references) aliases the value; bindings inside
    /// structs and tuples become new values taken from it.
    pub(super) fn bind_pattern(&mut self, pat: &Pat, info: &Info) {
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
            Pat::Type(pt) => self.bind_typed(&pt.pat, &pt.ty, info),
            Pat::Reference(r) => self.bind_pattern(&r.pat, info),
            Pat::Paren(p) => self.bind_pattern(&p.pat, info),
            Pat::TupleStruct(ts) => {
                let wrapper = ts.path.segments.last().is_some_and(|s| {
                    let r = &self.cx.apis.std.results;
                    let name = s.ident.to_string();
                    r.side(&name).is_some() || r.some.contains(&name)
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
            // `let (a, b) = (x, y);`: each name is its element.
            Pat::Tuple(t) if t.elems.len() == info.elems.len() => {
                for (p, i) in t.elems.iter().zip(&info.elems) {
                    self.bind_pattern(p, i);
                }
            }
            Pat::Tuple(t) => {
                let mut derived = self.derived(info);
                // A pair taken from a collection of pairs holding a fn-pointer
                // alias's values (`types::fn_alias_in_tuples`): its parts may be called.
                derived.crate_type =
                    (info.crate_type.clone()).filter(|t| stored::is_fn_alias_slot(t));
                for e in &t.elems {
                    self.bind_pattern(e, &derived);
                }
            }
            Pat::Struct(s) => {
                let derived = self.derived(info);
                let whole = info.value.filter(|b| self.struct_of(*b, &s.path));
                for f in &s.fields {
                    // `let InFlight { delivery, write } = job;`: each binding is the
                    // value's field, as `job.write` is.
                    match (whole, &f.member) {
                        (Some(b), syn::Member::Named(n)) => {
                            let base = self.value_info(b);
                            let field = self.field(&base, &n.to_string());
                            self.bind_pattern(&f.pat, &field);
                        }
                        _ => self.bind_pattern(&f.pat, &derived),
                    }
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

    /// Whether the value `v` is of the struct a pattern's path names (`InFlight { .. }`
    /// on an `InFlight`, `Self { .. }` in its methods): a pattern of its fields, not of
    /// an enum's variant.
    fn struct_of(&self, v: ValueId, path: &syn::Path) -> bool {
        let Some(last) = path.segments.last() else {
            return false;
        };
        let name = last.ident.to_string();
        let ty = self.values[v as usize].crate_type.as_deref();
        let named = if name == "Self" {
            self.self_type.as_deref()
        } else {
            Some(name.as_str())
        };
        path.segments.len() == 1 && ty.is_some() && ty == named
    }

    /// Binds `pat: ty`: the declared type gives the value its role and crate type. A
    /// tuple pattern under a tuple type (`let (op, cents): (&dyn Op, i64) = ..`) types
    /// each part by its own element type.
    fn bind_typed(&mut self, pat: &Pat, ty: &syn::Type, info: &Info) {
        if let (Pat::Tuple(t), syn::Type::Tuple(tt)) = (strip_pat(pat), strip_type(ty)) {
            let rest = t.elems.iter().any(|e| matches!(e, Pat::Rest(_)));
            if !rest && t.elems.len() == tt.elems.len() {
                let derived = self.derived(info);
                for (p, ty) in t.elems.iter().zip(tt.elems.iter()) {
                    self.bind_typed(p, ty, &derived);
                }
                return;
            }
        }
        let ti = self.type_info(ty);
        let mut info = info.clone();
        // A declared type that names something (a role, a crate type, or a
        // collection of them: `HashMap<&str, Arc<dyn Projection>>`) also says
        // whether the value is a collection holding them.
        let typed = ti.role.is_some() || ti.crate_type.is_some();
        if info.value.is_none() {
            if ti.role.is_some() {
                info.role = ti.role.clone();
            }
            if ti.crate_type.is_some() {
                info.crate_type = ti.crate_type.clone();
            }
            // A declared type that names something sets whether the value
            // is from outside; one that names nothing of the crate
            // (`Vec<String>`) only adds it: its methods are never the crate's.
            if typed {
                info.outside = ti.outside;
            } else {
                info.outside |= ti.outside;
            }
        } else if let Some(v) = info.value {
            let val = &mut self.values[v as usize];
            let untyped = val.role.is_none() && val.crate_type.is_none();
            if val.role.is_none() {
                val.role = ti.role;
            }
            if val.crate_type.is_none() {
                val.crate_type = ti.crate_type;
            }
            if untyped && typed {
                val.outside = ti.outside;
            }
        }
        self.bind_pattern(pat, &info);
    }

    /// The values an argument mentions; a fresh id made in the argument itself (a
    /// helper's result, `headers_for(id)`) becomes a value of its own.
    pub(super) fn arg_mentions(&mut self, a: &Info) -> Vec<ValueId> {
        let mut out = a.mentions.clone();
        let carried = out.iter().any(|m| self.values[*m as usize].fresh.is_some());
        if a.value.is_none() && a.fresh.is_some() && !carried && !a.fresh_blocked {
            out.push(self.value_from("", a));
        }
        out
    }

    /// A store method given a spawned task's handle (`running.push(tokio::spawn(..))`):
    /// the receiver holds tasks.
    pub(super) fn note_task_set(&mut self, recv: Option<ValueId>, args: &[Info]) {
        let handle = |a: &Info| {
            Role::JoinHandle.is(a.role.as_deref())
                || a.value
                    .is_some_and(|v| Role::JoinHandle.is(self.values[v as usize].role.as_deref()))
        };
        let Some(r) = recv else { return };
        if args.iter().any(handle) {
            if !self.task_sets.contains(&r) {
                self.task_sets.push(r);
            }
            self.note_set_push(r);
        }
    }

    /// A spawned task put into the set `set` (`set.spawn(..)`, `running.push(
    /// tokio::spawn(..))`): it holds one more, and more than one when put in a loop
    /// entered since it was made.
    pub(super) fn note_set_push(&mut self, set: ValueId) {
        let depth = self.values[set as usize].depth as usize;
        let inside: Vec<u32> = self.loops.get(depth..).unwrap_or_default().to_vec();
        let many = u32::from(!inside.is_empty());
        match self.set_pushes.iter_mut().find(|(s, _, _)| *s == set) {
            Some((_, n, loops)) => {
                *n = 2;
                loops.extend(
                    inside
                        .into_iter()
                        .filter(|l| !loops.contains(l))
                        .collect::<Vec<_>>(),
                );
            }
            None => self.set_pushes.push((set, 1 + many, inside)),
        }
    }

    /// `set.join_next()`, `running.next()` (the packs' `task_takes`) on a set spawned
    /// tasks were put into: the set, and whether the await drains it (the innermost
    /// loop around it was entered after the set was made, and no task was put into
    /// the set in it: `while let Some(r) = set.join_next().await`) and whether it
    /// may hold more than one task.
    pub(super) fn task_take(&self, base: &Expr) -> Option<(ValueId, bool, bool)> {
        let Expr::MethodCall(m) = strip(base) else {
            return None;
        };
        if !m.args.is_empty() || !self.cx.apis.std.task_takes.contains(&m.method.to_string()) {
            return None;
        }
        let set = self.path_value(&m.receiver)?;
        let (_, n, pushed_in) = self.set_pushes.iter().find(|(s, _, _)| *s == set)?;
        let depth = self.values[set as usize].depth as usize;
        let drains =
            self.loops.len() > depth && self.loops.last().is_some_and(|l| !pushed_in.contains(l));
        Some((set, drains, *n > 1))
    }

    /// A method that puts its arguments into its receiver in place (the packs'
    /// `store_methods`: `headers.insert("Nats-Msg-Id", id)`): the receiver holds the
    /// fresh id an argument is or carries, and passes it on to what it is given to.
    pub(super) fn store_into(&mut self, recv: Option<ValueId>, args: &[Info]) {
        let Some(r) = recv else { return };
        if self.values[r as usize].fresh.is_some() {
            return;
        }
        let fresh = args.iter().filter(|a| !a.fresh_blocked).find_map(|a| {
            a.fresh.clone().or_else(|| {
                a.value
                    .iter()
                    .chain(&a.mentions)
                    .find_map(|m| self.values[*m as usize].fresh.clone())
            })
        });
        self.values[r as usize].fresh = fresh;
    }

    /// The clock reading among `mentions` (a fresh id once formatted into a text).
    pub(super) fn clock_in(&self, mentions: &[ValueId]) -> Option<(Loc, String, Option<u32>)> {
        mentions
            .iter()
            .find_map(|m| self.values[*m as usize].clock.clone())
    }

    /// Where an argument comes from: a message's value, a literal or constant (text
    /// known, no value in it), or unknown.
    pub(super) fn origin_of(&self, a: &Info) -> crate::ir::Origin {
        use crate::ir::Origin;
        if a.value
            .iter()
            .chain(&a.mentions)
            .any(|m| self.root(*m).is_some())
        {
            Origin::Message
        } else if a.constant && a.value.is_none() && a.mentions.is_empty() {
            Origin::Constant
        } else {
            Origin::Unknown
        }
    }

    /// The values a statement is written with, each with where it comes from here.
    pub(super) fn origins_of(&self, mentions: &[ValueId]) -> Vec<(ValueId, crate::ir::Origin)> {
        use crate::ir::Origin;
        let mut out: Vec<(ValueId, Origin)> = Vec::new();
        for &m in mentions {
            if out.iter().any(|(v, _)| *v == m) {
                continue;
            }
            let o = if self.root(m).is_some() {
                Origin::Message
            } else {
                Origin::Unknown
            };
            out.push((m, o));
        }
        out
    }

    /// Info for a part of a value: no identity of its own, taken from the message.
    pub(super) fn derived(&self, info: &Info) -> Info {
        let mut mentions = info.mentions.clone();
        if let Some(v) = info.value {
            mentions.insert(0, v);
        }
        let mut idents = info.idents.clone();
        idents.truncate(32);
        Info {
            mentions,
            idents,
            rows: info.rows.clone(),
            ..Info::default()
        }
    }

    /// A new value for a binding of an expression that denotes no existing value.
    pub(super) fn value_from(&mut self, name: &str, info: &Info) -> ValueId {
        let v = self.new_value(
            name,
            TypeInfo {
                role: info.role.clone(),
                crate_type: info.crate_type.clone(),
                outside: info.outside,
                generic: None,
                elem: None,
                ..TypeInfo::default()
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
        let clock = self.clock_in(&info.mentions);
        let mut rows = info.rows.clone();
        for m in &info.mentions {
            super::add_rows(&mut rows, &self.values[*m as usize].rows);
        }
        let builder = info.builder.clone().map(|mut b| {
            self.hold_builder(&mut b, v);
            b
        });
        self.note_sources(v, info);
        // A binding of a struct literal holds the values given its fields: `job.write`
        // (or a destructuring, or a callee given `job`) is the literal's `write`.
        for (name, fv) in &info.field_values {
            self.fields.insert((v, name.clone()), *fv);
        }
        let val = &mut self.values[v as usize];
        val.text.clone_from(&info.str_lit);
        val.fresh = fresh;
        val.clock = clock;
        val.kafka_config = info.kafka_config.clone();
        val.kafka_client = info.kafka_client;
        val.client_made_by.clone_from(&info.client_made_by);
        val.keyed = info.keyed;
        val.idents = info.idents.iter().take(16).cloned().collect();
        val.sql = info
            .sql
            .clone()
            .or_else(|| info.str_lit.as_deref().map(sql::facts));
        val.builder = builder;
        val.msg_root = root;
        val.rows = rows;
        v
    }

    /// The tables whose rows (read by a query) the values `mentions` hold or are
    /// taken from.
    pub(super) fn rows_in(&self, mentions: &[ValueId]) -> Vec<String> {
        let mut rows = Vec::new();
        for m in mentions {
            super::add_rows(&mut rows, &self.values[*m as usize].rows);
        }
        rows
    }

    /// The tables whose rows an argument is taken from: its own, and its mentions'.
    pub(super) fn rows_of(&self, a: &Info) -> Vec<String> {
        let mut rows = a.rows.clone();
        super::add_rows(&mut rows, &self.rows_in(&a.mentions));
        rows
    }

    pub(super) fn value_info(&mut self, v: ValueId) -> Info {
        self.uses[v as usize] += 1;
        if self.in_return {
            self.returned.insert(v);
        }
        let val = &self.values[v as usize];
        Info {
            idents: val.idents.clone(),
            kafka_config: val.kafka_config.clone(),
            kafka_client: val.kafka_client,
            client_made_by: val.client_made_by.clone(),
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

    /// `let (tx, rx) = mpsc::channel::<Job>(n)`, `let rx = hub.subscribe::<Job>()`: the
    /// keys of the channel the bindings of `pat` are ends of (the maker's site, the
    /// element type a turbofish names), recorded on them.
    pub(super) fn bind_channel_ends(&mut self, pat: &Pat, init: &Expr) {
        let mut e = strip(init);
        loop {
            e = match e {
                Expr::Await(a) => strip(&a.base),
                Expr::Try(t) => strip(&t.expr),
                Expr::MethodCall(m)
                    if m.args.len() <= 1
                        && self.cx.apis.std.aliases.contains(&m.method.to_string()) =>
                {
                    strip(&m.receiver)
                }
                _ => break,
            };
        }
        let (name, turbofish, span) = match e {
            Expr::Call(c) => match strip(&c.func) {
                Expr::Path(p) => {
                    let Some(last) = p.path.segments.last() else {
                        return;
                    };
                    let ty = match &last.arguments {
                        syn::PathArguments::AngleBracketed(a) => Some(a),
                        _ => None,
                    };
                    (last.ident.to_string(), ty, c.span())
                }
                _ => return,
            },
            Expr::MethodCall(m) => (m.method.to_string(), m.turbofish.as_ref(), m.span()),
            _ => return,
        };
        let elem = turbofish.and_then(|a| {
            let mut tys = a.args.iter().filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            });
            let t = tys.next()?;
            tys.next()
                .is_none()
                .then(|| crate::frontend::rust::types::type_name(t))
                .flatten()
        });
        // A maker that names no type, in a function returning an end of the channel
        // (an actor's `spawn` returning its `Sender<Msg>`): the type the end carries.
        let elem = elem.or_else(|| {
            (self.cx.apis.std.channel_makers.contains(&name))
                .then(|| self.returned_chan_elem.clone())
                .flatten()
        });
        let mut keys: Vec<String> = elem.map(|t| format!("T:{t}")).into_iter().collect();
        if self.cx.apis.std.channel_makers.contains(&name) {
            let loc = self.cx.loc(span, span);
            keys.push(format!("@{}:{}", loc.path, loc.span.byte_start));
        }
        if keys.is_empty() {
            return;
        }
        let mut names = Vec::new();
        pat_idents(pat, &mut names);
        for n in names {
            if let Some(v) = self.lookup(&n) {
                let chan = &mut self.values[v as usize].chan;
                for k in &keys {
                    if !chan.contains(k) {
                        chan.push(k.clone());
                    }
                }
            }
        }
    }

    /// Whether `v` is declared as an end of an in-process channel.
    pub(super) fn is_chan_end(&self, v: ValueId) -> bool {
        matches!(
            self.values[v as usize].role.as_deref(),
            Some("chan.rx" | "chan.tx")
        )
    }

    /// The keys following a channel end's value (its `channel()` site, the parameter
    /// or field it came from) of the value `e` denotes, looked through references,
    /// clones and wrappers (`Arc::new(Mutex::new(rx))`).
    pub(super) fn chan_flow_of(&self, e: &Expr) -> Vec<String> {
        let mut e = strip(e);
        loop {
            e = match e {
                Expr::MethodCall(m)
                    if m.args.is_empty()
                        && self.cx.apis.std.aliases.contains(&m.method.to_string()) =>
                {
                    strip(&m.receiver)
                }
                Expr::Call(c) if c.args.len() == 1 => match strip(&c.func) {
                    Expr::Path(p)
                        if p.path.segments.last().is_some_and(|s| {
                            let id = s.ident.to_string();
                            self.cx.apis.std.aliases.contains(&id)
                                || self.cx.apis.std.passthrough.contains(&id)
                        }) =>
                    {
                        strip(&c.args[0])
                    }
                    _ => return Vec::new(),
                },
                _ => break,
            };
        }
        let v = match e {
            Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|id| self.lookup(&id.to_string())),
            Expr::Field(f) => match (&f.member, strip(&f.base)) {
                (syn::Member::Named(m), Expr::Path(b)) => b
                    .path
                    .get_ident()
                    .and_then(|id| self.lookup(&id.to_string()))
                    .and_then(|b| self.fields.get(&(b, m.to_string())).copied()),
                _ => None,
            },
            _ => None,
        };
        v.map(|v| {
            self.values[v as usize]
                .chan
                .iter()
                .filter(|k| !k.starts_with("T:"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
    }

    /// Links the channel ends passed to a call (`callee` as the parameter keys name
    /// it: `worker`, `Worker::new`, `.start`) with the callee's parameters.
    pub(super) fn link_chan_args<'e>(
        &mut self,
        callee: &dyn std::fmt::Display,
        args: impl Iterator<Item = &'e Expr>,
    ) {
        for (i, a) in args.enumerate() {
            let mut keys = self.chan_flow_of(a);
            if !keys.is_empty() {
                keys.push(format!("A:{callee}#{i}"));
                self.chan_links.push(keys);
            }
        }
    }

    /// Links the channel ends put in the fields of a struct literal of type `ty`
    /// with the field (`F:Worker.rx`).
    pub(super) fn link_chan_fields(&mut self, s: &syn::ExprStruct) {
        let Some(last) = s.path.segments.last() else {
            return;
        };
        let ty = if last.ident == "Self" {
            match &self.self_type {
                Some(t) => t.clone(),
                None => return,
            }
        } else {
            last.ident.to_string()
        };
        for f in &s.fields {
            let syn::Member::Named(name) = &f.member else {
                continue;
            };
            let mut keys = self.chan_flow_of(&f.expr);
            if !keys.is_empty() {
                keys.push(format!("F:{ty}.{name}"));
                self.chan_links.push(keys);
            }
        }
    }
}

/// The identifiers a pattern binds.
fn pat_idents(pat: &Pat, out: &mut Vec<String>) {
    match pat {
        Pat::Ident(pi) => out.push(pi.ident.to_string()),
        Pat::Type(t) => pat_idents(&t.pat, out),
        Pat::Reference(r) => pat_idents(&r.pat, out),
        Pat::Paren(p) => pat_idents(&p.pat, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|e| pat_idents(e, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|e| pat_idents(e, out)),
        _ => {}
    }
}

/// A pattern without its parentheses.
fn strip_pat(p: &Pat) -> &Pat {
    match p {
        Pat::Paren(p) => strip_pat(&p.pat),
        other => other,
    }
}

/// A type without its parentheses and invisible groups.
fn strip_type(t: &syn::Type) -> &syn::Type {
    match t {
        syn::Type::Paren(p) => strip_type(&p.elem),
        syn::Type::Group(g) => strip_type(&g.elem),
        other => other,
    }
}
