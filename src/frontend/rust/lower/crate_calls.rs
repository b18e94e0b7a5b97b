//! Calls into the crate: which paths name the crate's own functions (also through
//! re-exports of other crates of the unit), the arguments and closures handed to them,
//! the `Call` event they emit, and what the callee's signature says of its result.

use syn::spanned::Spanned;
use syn::Expr;

use super::{is_stream_role, strip, Info, Lowerer};
use crate::apis::Role;
use crate::frontend::rust::{resolve_path, ReturnedText, TypeInfo};
use crate::ir::{Call, Callee, ClosureRun, Event, EventKind, Loc, Node, ValueId};

impl<'a, 'b> Lowerer<'a, 'b> {
    /// True when the path names a function of this crate (`save`, `db::save`, `Self::save`, `Repo::new`),
    /// also through a re-export of another crate of the unit (`platform::mailer::send`).
    pub(super) fn is_crate_fn(&self, segs: &[String]) -> bool {
        self.crate_fn_path(segs).is_some()
    }

    /// The path by which a call of `segs` names a function of this crate: `segs`
    /// itself, or the real path behind a re-export (`pub use notify::mailer;` in a
    /// facade, also when the facade's path was imported by `use`).
    pub(super) fn crate_fn_path(&self, segs: &[String]) -> Option<Vec<String>> {
        if self.is_crate_fn_here(segs) {
            // Through the file's `use`s: `use platform::db; db::wallets::credit(..)` is
            // `platform::db::wallets::credit`, which a facade re-export resolves.
            return Some(resolve_path(self.cx.uses, segs));
        }
        if self.cx.index.reexports.is_empty() {
            return None;
        }
        let resolved = resolve_path(self.cx.uses, segs);
        crate::ir::through_reexports(&self.cx.index.reexports, &resolved)
            .into_iter()
            .find(|p| self.is_crate_fn_here(p))
    }

    fn is_crate_fn_here(&self, segs: &[String]) -> bool {
        let Some(last) = segs.last() else {
            return false;
        };
        let resolved = resolve_path(self.cx.uses, segs);
        if resolved.len() >= 2 {
            let owner = &resolved[resolved.len() - 2];
            if owner == "Self" {
                let Some(t) = &self.self_type else {
                    return false;
                };
                return self
                    .cx
                    .owned_sigs(last, t)
                    .is_some_and(|sigs| sigs.iter().any(|s| s.self_type.as_ref() == Some(t)));
            }
            if owner.starts_with(|c: char| c.is_ascii_uppercase()) {
                return self
                    .cx
                    .owned_sigs(last, owner)
                    .is_some_and(|sigs| sigs.iter().any(|s| s.self_type.as_ref() == Some(owner)));
            }
            let Some(sigs) = self.cx.fn_sigs(last) else {
                return false;
            };
            let first = resolved[0].as_str();
            let local = matches!(first, "crate" | "self" | "super")
                || !self.cx.apis.is_outside_crate(first);
            return local
                && sigs.iter().any(|s| {
                    // Defined in `owner`, or below it and re-exported (`pub use audit::*`).
                    s.self_type.is_none() && s.module.contains(owner)
                        || s.self_type.is_none()
                            && matches!(owner.as_str(), "crate" | "self" | "super")
                });
        }
        self.cx
            .owned_sigs(last, "")
            .is_some_and(|sigs| sigs.iter().any(|s| s.self_type.is_none()))
    }

    /// Arguments of a call into the crate: closures and async blocks are kept apart,
    /// to run where the callee calls them.
    pub(super) fn crate_args(
        &mut self,
        args: &[&Expr],
        out: &mut Vec<Node>,
    ) -> (Vec<Info>, Vec<(usize, Node)>) {
        let mut infos = Vec::new();
        let mut closures = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if matches!(strip(a), Expr::Closure(_)) {
                let mut tmp = Vec::new();
                self.expr(a, &mut tmp);
                if let Some(n) = tmp.pop() {
                    closures.push((i, n));
                }
                out.extend(tmp);
                infos.push(Info::default());
            } else if let Some(n) = self
                .deferred_of(a)
                .filter(|_| matches!(strip(a), Expr::Path(_)))
            {
                closures.push((i, n));
                infos.push(self.expr(a, out));
            } else if let Some(n) = self.fn_item_closure(a) {
                // `run(topic, forward)`: the crate function runs where the callee calls
                // its parameter.
                closures.push((i, n));
                infos.push(Info::default());
            } else {
                let mut info = self.arg(a, out);
                // A struct literal written as the argument (`settle(Stored { message,
                // store })`) is a value holding its fields, as a binding of it is.
                if info.value.is_none() && !info.field_values.is_empty() {
                    info.value = Some(self.value_from("", &info));
                }
                infos.push(info);
            }
        }
        (infos, closures)
    }

    /// A crate function named as a value (`forward`, `pump::forward`), as a closure
    /// that calls it.
    pub(super) fn fn_item_closure(&mut self, e: &Expr) -> Option<Node> {
        let Expr::Path(p) = strip(e) else { return None };
        if p.path
            .get_ident()
            .is_some_and(|id| self.lookup(&id.to_string()).is_some())
        {
            return None;
        }
        let segs = crate::frontend::rust::segments(&p.path);
        if !self.is_crate_fn(&segs) {
            return None;
        }
        let loc = self.cx.loc(p.span(), p.span());
        let call = Node::Event(Event {
            kind: EventKind::Call(Call {
                returns_tx: None,
                callee: Callee::Path(segs.clone()),
                receiver: None,
                args: Vec::new(),
                closures: Vec::new(),
                propagates_err: false,
                result_unused: false,
                entries_unread: false,
                confirm_unread: false,
                origins: Vec::new(),
                rows: Vec::new(),
                stores: Vec::new(),
            }),
            loc: loc.clone(),
            text: segs.join("::"),
            describe: "call".into(),
        });
        Some(Node::Closure {
            body: Box::new(Node::Seq(vec![call])),
            run: ClosureRun::Now,
            param: None,
            handle: None,
            loc,
            text: "function".into(),
        })
    }

    // The parts of the `Call` event it records (callee, receiver, arguments,
    // closures, place, text), and the output: a struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn crate_call(
        &mut self,
        callee: Callee,
        receiver: Option<ValueId>,
        args: &[Info],
        closures: Vec<(usize, Node)>,
        loc: Loc,
        text: String,
        out: &mut Vec<Node>,
    ) -> Info {
        let ret = self.return_type(&callee);
        let str_lit = self.returned_text(&callee);
        // A helper that mints a fresh id, called in a retry: the attempt's id is new.
        let scope = self.retry_scopes.last().map(|(id, _, _)| *id);
        let sigs = self.callee_sigs(&callee);
        let sig = match sigs.as_slice() {
            [s] => Some(*s),
            _ => None,
        };
        let fresh = sig
            .and_then(|s| s.returns_fresh.clone())
            .map(|(l, t)| (l, t, scope));
        let minted = fresh.as_ref().map(|(l, _, _)| l.clone());
        // A helper that returns a client keyed for idempotency.
        let keyed = sig.is_some_and(|s| s.returns_keyed);
        // A receive helper: what it returns are messages this caller takes.
        // A trait method (`T: Receiver`) whose implementation receives: the caller
        // receives through whichever runs.
        let received = sigs.iter().find_map(|s| s.returns_received.clone());
        let returned_rows: Vec<Vec<String>> = (sigs.iter())
            .filter(|s| !s.returns_rows.is_empty())
            .map(|s| s.returns_rows.clone())
            .collect();
        // A Kafka client a crate function returns (a consumer factory): its
        // configuration is that function's.
        let made_by = matches!(
            ret.role.as_deref().and_then(Role::of),
            Some(Role::KafkaConsumer | Role::KafkaProducer | Role::KafkaClient)
        )
        .then(|| Box::new(callee.clone()));
        // A client configuration a crate function returns (`consumer_config(&s)`): a
        // chain that goes on from the helper's, which is applied after lowering.
        let config = self.helper_config(&ret, &callee, &loc);
        // A fresh id handed to a call inside the retry identifies the attempt.
        let mentions: Vec<ValueId> = args
            .iter()
            .flat_map(|a| a.mentions.iter().copied())
            .collect();
        self.record_id_flows(&mentions, &loc, &text, false, Some(callee.clone()), true);
        if let Some(l) = &minted {
            self.note_minted(l);
        }
        self.note_dedup_call(&callee, args, &loc, &text);
        // A helper returning a transaction it began (`repo.begin().await?`): the
        // caller's value holds it.
        let began = (ret.role.as_deref().and_then(Role::of) == Some(Role::DbTx)).then(|| {
            let v = self.new_value(&text, TypeInfo::of_role(Role::DbTx.some()));
            self.uses[v as usize] = 1;
            v
        });
        out.push(Node::Event(Event {
            kind: EventKind::Call(Call {
                returns_tx: began,
                callee,
                receiver,
                args: args.iter().map(|a| a.value).collect(),
                closures,
                propagates_err: false,
                result_unused: false,
                entries_unread: false,
                confirm_unread: false,
                origins: args.iter().map(|a| self.origin_of(a)).collect(),
                rows: args.iter().map(|a| self.rows_of(a)).collect(),
                stores: args.iter().map(|a| self.autocommit_store(a)).collect(),
            }),
            loc: loc.clone(),
            text: text.clone(),
            describe: "call".into(),
        }));
        if let Some(role) = received {
            return self.received_from_helper(role, receiver, args, loc, text, out);
        }
        // The declared return type says what the value is, a collection of the
        // crate's values included (`fn routes() -> HashMap<&str, Arc<dyn Handler>>`:
        // a table whose `get` gives a handler).
        let mut info = Info {
            role: ret.role,
            crate_type: ret.crate_type,
            outside: ret.outside,
            fresh,
            mentions: receiver.into_iter().collect(),
            ..Info::default()
        };
        for a in args {
            info.absorb(a);
        }
        info.str_lit = str_lit;
        info.keyed = keyed;
        // Rows a helper read and returns (`let rows = claim_batch(&pool).await?`).
        for t in &returned_rows {
            super::add_rows(&mut info.rows, t);
        }
        info.client_made_by = made_by;
        info.kafka_config = config;
        if began.is_some() {
            info.value = began;
        } else if let Some(v) = self.holding_struct(&info, receiver, args, &text) {
            info.value = Some(v);
        }
        info
    }

    /// A crate struct a call returns whose fields of a role hold the caller's value of
    /// that role handed to the call (`repo.with_tx(&mut tx)` returning `TxRepo { tx }`,
    /// its field `tx: &'a mut Transaction<..>`): a value of the struct whose fields are
    /// those values, so the struct's methods run on them. Only when one argument (or
    /// the receiver) has the field's role.
    fn holding_struct(
        &mut self,
        info: &Info,
        receiver: Option<ValueId>,
        args: &[Info],
        text: &str,
    ) -> Option<ValueId> {
        let ty = info.crate_type.as_deref().filter(|_| !info.outside)?;
        let fields: Vec<(String, String)> = (self.cx.fields_of(ty)?.iter())
            .filter_map(|(name, t)| Some((name.clone(), t.role.clone()?)))
            .collect();
        let handed: Vec<ValueId> = receiver
            .into_iter()
            .chain(args.iter().filter_map(|a| a.value))
            .collect();
        let mut held = Vec::new();
        for (name, role) in &fields {
            let mut of_role = handed
                .iter()
                .filter(|v| self.values[**v as usize].role.as_deref() == Some(role.as_str()));
            if let (Some(v), None) = (of_role.next(), of_role.next()) {
                held.push((name.clone(), *v));
            }
        }
        if held.is_empty() {
            return None;
        }
        let ty = ty.to_string();
        let v = self.new_value(
            text,
            TypeInfo {
                crate_type: Some(ty),
                ..TypeInfo::default()
            },
        );
        for (name, h) in held {
            self.fields.insert((v, name), h);
        }
        Some(v)
    }

    /// The configuration a call of the crate function `callee`, declared to return
    /// `ret`, gives when `ret` is a client configuration (the packs' `config` roles):
    /// the helper's, known only once the crate is lowered (`KafkaClient::from`).
    fn helper_config(
        &self,
        ret: &TypeInfo,
        callee: &Callee,
        loc: &Loc,
    ) -> Option<Box<crate::ir::KafkaClient>> {
        let role = ret.role.as_deref()?;
        if !self.cx.apis.config_roles.contains(role) {
            return None;
        }
        Some(Box::new(crate::ir::KafkaClient {
            from: Some(Box::new(callee.clone())),
            ..crate::ir::KafkaClient::new(loc.clone(), super::settings::config_family(Some(role)))
        }))
    }

    /// The messages a receive helper returns (`let batch = next_batch(&consumer)
    /// .await?`): received here, by the caller, from the client it was handed.
    fn received_from_helper(
        &mut self,
        role: String,
        receiver: Option<ValueId>,
        args: &[Info],
        loc: Loc,
        text: String,
        out: &mut Vec<Node>,
    ) -> Info {
        let client = receiver
            .into_iter()
            .chain(args.iter().filter_map(|a| a.value))
            .find_map(|v| self.client_ref(v));
        // An empty role: the pack names none for what its receive gives.
        let role = (!role.is_empty()).then_some(role);
        let v = self.new_value(&text, TypeInfo::of_role(role.clone()));
        self.values[v as usize].msg_root = Some(v);
        out.push(Node::Event(Event {
            kind: EventKind::Receive {
                msg: v,
                element: false,
                client,
            },
            loc,
            text,
            describe: "message received by a helper".into(),
        }));
        Info {
            value: Some(v),
            role,
            ..Info::default()
        }
    }

    /// The string a crate function returns, when the code fixes it: the SQL in its
    /// body or in a constant, or that its type's constructors put in the field it
    /// returns.
    fn returned_text(&self, callee: &Callee) -> Option<String> {
        let sig = self.callee_sig(callee)?;
        match sig.returns_text.as_ref()? {
            ReturnedText::Lit(s) => Some(s.clone()),
            ReturnedText::Const(c) => self.cx.const_value(c).cloned(),
            ReturnedText::Field(f) => self.cx.field_text(sig.self_type.as_deref()?, f),
        }
    }

    pub(super) fn return_type(&self, callee: &Callee) -> TypeInfo {
        if let Some(s) = self.callee_sig(callee) {
            return s.ret.clone();
        }
        // A trait method several types implement (`T: Source` with a broker's and an
        // in-memory implementation): when the implementations that return a stream of
        // deliveries agree on its role, what the caller takes from it may be a delivery.
        if !matches!(
            callee,
            Callee::Method {
                receiver_type: Some(_),
                ..
            }
        ) {
            return TypeInfo::default();
        }
        let mut roles = self
            .callee_sigs(callee)
            .into_iter()
            .filter_map(|s| s.ret.role.clone())
            .filter(|r| is_stream_role(Some(r)));
        match (roles.next(), roles.next()) {
            (Some(r), None) => TypeInfo::of_role(Some(r)),
            _ => TypeInfo::default(),
        }
    }

    /// The signature of the crate function a call names, when it is unambiguous.
    pub(super) fn callee_sig(&self, callee: &Callee) -> Option<&crate::frontend::rust::FnSig> {
        let found = self.callee_sigs(callee);
        match found.as_slice() {
            [s] => Some(s),
            _ => None,
        }
    }

    /// The signatures of the crate functions a call may name.
    fn callee_sigs(&self, callee: &Callee) -> Vec<&crate::frontend::rust::FnSig> {
        let (name, ty) = match callee {
            Callee::Path(segs) => {
                let owner = segs.len().checked_sub(2).map(|i| segs[i].clone());
                let owner = match owner.as_deref() {
                    Some("Self") => self.self_type.clone(),
                    // `db::save`: a module, not a type.
                    Some(o) if !o.starts_with(|c: char| c.is_ascii_uppercase()) => None,
                    _ => owner,
                };
                (segs.last().cloned().unwrap_or_default(), owner)
            }
            Callee::Method {
                name,
                receiver_type,
            } => (name.clone(), receiver_type.clone()),
        };
        let sigs = match &ty {
            Some(t) => self.cx.owned_sigs(&name, t),
            None => self.cx.fn_sigs(&name),
        };
        sigs.into_iter()
            .flatten()
            .filter(|s| ty.is_none() || s.self_type == ty || s.trait_name == ty)
            .collect()
    }
}
