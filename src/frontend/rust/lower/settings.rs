//! Client settings read where the code builds them: rdkafka `ClientConfig`
//! chains, consumer options that turn acks off, ids that flow into what a retry
//! sends.

use syn::Expr;

use super::spans::expr_span;
use super::{strip, Info, Lowerer};
use crate::apis::{AutoAckSpec, ConfigStep, Role};
use crate::diagnostic::Span;
use crate::ir::{
    AckSetting, Callee, ClientFamily, IdFlow, Insertion, KafkaClient, Loc, Node, Prop, ValueId,
};

impl<'a, 'b> Lowerer<'a, 'b> {
    /// Fresh ids among `mentions` reaching a sink: inside the retry scope they were
    /// generated in, or (in a handler) into its dedup record. Those reaching a send
    /// (`send`: a publish, an external call, a call into the crate) outside any retry
    /// are kept as pass flows: new per pass if a relay's poll loop runs them.
    pub(super) fn record_id_flows(
        &mut self,
        mentions: &[ValueId],
        loc: &Loc,
        text: &str,
        dedup_write: bool,
        sink_call: Option<Callee>,
        send: bool,
    ) {
        let handler = self.values.iter().any(|v| v.msg_root.is_some());
        for m in mentions {
            let Some((idloc, idtext, scope)) = self.values[*m as usize].fresh.clone() else {
                continue;
            };
            let outside_retry = handler && dedup_write && sink_call.is_none();
            let retry = match scope {
                Some(id) => match self.retry_scopes.iter().find(|(s, _, _)| *s == id) {
                    Some((_, l, t)) => {
                        // In a loop that may prove no poll loop: the flow as it is
                        // outside any retry, kept in case.
                        if outside_retry && self.poll_scopes.contains(&id) {
                            let flow = IdFlow {
                                idgen: idloc.clone(),
                                idgen_text: idtext.clone(),
                                sink: loc.clone(),
                                sink_text: text.to_string(),
                                retry: None,
                                sink_call: sink_call.clone(),
                                hoist: None,
                            };
                            self.poll_fallbacks.push((id, flow));
                        }
                        Some((l.clone(), t.clone()))
                    }
                    None => continue,
                },
                None if outside_retry => None,
                None => {
                    if send {
                        let flow = IdFlow {
                            idgen: idloc,
                            idgen_text: idtext,
                            sink: loc.clone(),
                            sink_text: text.to_string(),
                            retry: None,
                            sink_call: sink_call.clone(),
                            hoist: None,
                        };
                        let pass = crate::ir::PassIdFlow { flow, poll: None };
                        if !self.pass_id_flows.iter().any(|p| p.flow == pass.flow) {
                            self.pass_id_flows.push(pass);
                        }
                    }
                    continue;
                }
            };
            let flow = IdFlow {
                idgen: idloc,
                idgen_text: idtext,
                sink: loc.clone(),
                sink_text: text.to_string(),
                retry,
                sink_call: sink_call.clone(),
                hoist: None,
            };
            if let Some(id) = scope.filter(|id| send && self.poll_scopes.contains(id)) {
                self.poll_sends.push((id, flow.clone()));
            }
            if !self.id_flows.iter().any(|(_, f)| *f == flow) {
                self.id_flows.push((scope, flow));
            }
        }
    }

    /// A consumer option that turns acknowledgements off, set in a struct literal
    /// (the packs' `[[auto_ack]]`: lapin's `no_ack: true`, JetStream's
    /// `ack_policy: AckPolicy::None`).
    pub(super) fn ack_setting_in_struct(&mut self, s: &syn::ExprStruct) {
        let apis = self.cx.apis;
        for (what, loc) in self.options_set(s, &apis.auto_ack) {
            self.ack_settings.push(AckSetting { what, loc });
        }
    }

    /// A consumer option that turns acknowledgements off, set by a method call (the
    /// packs' `[[auto_ack]]` with `methods`: fred's `xreadgroup_map(.., true, ..)`,
    /// whose fifth argument is `NOACK`; redis-rs `StreamReadOptions::noack()`), at the
    /// argument that sets it, or the call when the call itself does.
    pub(super) fn ack_setting_in_call(&mut self, mc: &syn::ExprMethodCall, name: &str) {
        let apis = self.cx.apis;
        for a in apis
            .auto_ack
            .iter()
            .filter(|a| a.methods.iter().any(|m| m == name))
        {
            let (what, loc) = match a.arg {
                None => (
                    format!("`{name}()`"),
                    self.cx.loc(mc.method.span(), mc.paren_token.span.close()),
                ),
                Some(i) => {
                    let Some(arg) = mc.args.iter().nth(i) else {
                        continue;
                    };
                    let set = matches!(strip(arg), Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Bool(b), ..
                    }) if a.value == b.value.to_string());
                    if !set {
                        continue;
                    }
                    let param = a.arg_name.as_deref().unwrap_or("argument");
                    (
                        format!("`{param}` `{}` in `{name}`", a.value),
                        self.cx.loc(expr_span(arg), expr_span(arg)),
                    )
                }
            };
            self.ack_settings.push(AckSetting { what, loc });
        }
    }

    /// A queue declared by a struct literal of a queue-options type (the packs'
    /// `[[transient_queue]]`): deleted with its connection when an option says so
    /// (`exclusive: true`), kept past it otherwise.
    pub(super) fn queue_lifetime_in_struct(&mut self, s: &syn::ExprStruct) {
        let apis = self.cx.apis;
        if !s
            .path
            .segments
            .last()
            .is_some_and(|x| self.is_queue_options(&x.ident))
        {
            return;
        }
        let set = self.options_set(s, &apis.transient_queue);
        if set.is_empty() {
            self.durable_queues = true;
        }
        for (what, loc) in set {
            self.transient_queues.push(AckSetting { what, loc });
        }
    }

    /// `QueueDeclareOptions::default()` passed as a value (not as the `..rest` of a
    /// literal): a queue declared with none of the options that make it transient.
    pub(super) fn queue_lifetime_in_default(&mut self, path: &syn::Path) {
        let segs = &path.segments;
        let n = segs.len();
        if self.in_struct_rest || n < 2 || segs[n - 1].ident != "default" {
            return;
        }
        if self.is_queue_options(&segs[n - 2].ident) {
            self.durable_queues = true;
        }
    }

    /// `ty` is a queue-options type of the packs' `[[transient_queue]]`.
    fn is_queue_options(&self, ty: &syn::Ident) -> bool {
        self.cx
            .apis
            .transient_queue
            .iter()
            .any(|a| a.struct_name.as_ref().is_some_and(|t| ty == t))
    }

    /// The fields of the struct literal `s` set as one of `specs` says, each with its
    /// text (`` `no_ack: true` ``) and place.
    fn options_set(&self, s: &syn::ExprStruct, specs: &[AutoAckSpec]) -> Vec<(String, Loc)> {
        let ty = s
            .path
            .segments
            .last()
            .map(|x| x.ident.to_string())
            .unwrap_or_default();
        let mut found = Vec::new();
        for f in &s.fields {
            let syn::Member::Named(field) = &f.member else {
                continue;
            };
            let field_name = field.to_string();
            let value = strip(&f.expr);
            let what = specs.iter().find_map(|a| {
                if a.field != field_name || a.struct_name.as_ref().is_some_and(|t| *t != ty) {
                    return None;
                }
                match value {
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Bool(b),
                        ..
                    }) if a.value == b.value.to_string() => {
                        Some(format!("`{field_name}: {}`", a.value))
                    }
                    Expr::Path(p) => {
                        let (want_ty, want) = crate::apis::last_two_segments(&a.value)?;
                        let segs = &p.path.segments;
                        let n = segs.len();
                        (n >= 2 && segs[n - 2].ident == want_ty && segs[n - 1].ident == want)
                            .then(|| format!("`{want_ty}::{want}`"))
                    }
                    _ => None,
                }
            });
            if let Some(what) = what {
                found.push((what, self.cx.loc(field.span(), expr_span(&f.expr))));
            }
        }
        found
    }

    /// An assignment that adds to or subtracts from the column it assigns
    /// (`n.eq(n + 1)`, `(stock.eq(stock - qty), updated.eq(now))`): the new value
    /// depends on the old one.
    pub(super) fn adds_to_itself(&self, e: &Expr) -> bool {
        let text = |e: &Expr| self.cx.text_of(expr_span(e));
        match strip(e) {
            Expr::Tuple(t) => t.elems.iter().any(|x| self.adds_to_itself(x)),
            Expr::Reference(r) => self.adds_to_itself(&r.expr),
            Expr::MethodCall(m) if m.args.len() == 1 => match strip(&m.args[0]) {
                Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_) | syn::BinOp::Sub(_)) => {
                    let column = text(&m.receiver);
                    text(&b.left) == column || text(&b.right) == column
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// A query DSL's assignments (`.set(sent_at.eq(now))`, `.set((status.eq("done"),
    /// tries.eq(0)))`) that mark rows done, as an SQL `SET` would.
    pub(super) fn assignments_mark_done(&self, e: &Expr) -> bool {
        fn pairs(lw: &Lowerer, e: &Expr, out: &mut Vec<(String, String)>) {
            match strip(e) {
                Expr::Tuple(t) => t.elems.iter().for_each(|x| pairs(lw, x, out)),
                Expr::Reference(r) => pairs(lw, &r.expr, out),
                Expr::MethodCall(m) if m.args.len() == 1 && m.method == "eq" => {
                    let text = |e: &Expr| lw.cx.text_of(expr_span(e)).to_string();
                    out.push((text(&m.receiver).replace("::", "."), text(&m.args[0])));
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        pairs(self, e, &mut found);
        crate::frontend::rust::sql::sets_done(&found)
    }

    pub(super) fn turbofish_role(&self, mc: &syn::ExprMethodCall) -> Option<String> {
        let tf = mc.turbofish.as_ref()?;
        tf.args.iter().find_map(|a| match a {
            syn::GenericArgument::Type(t) => self.type_info(t).role,
            _ => None,
        })
    }

    /// Where a setting is added to a configuration chain after the call `mc` (a
    /// `.set(k, v)`): right after its `)`, on a line of its own with the call's
    /// indentation when the call starts its line (`\n        .set(..)`), else on the
    /// same line (`cfg.set(a, b).set(..)`).
    fn chain_insertion(&self, mc: &syn::ExprMethodCall, method: &str) -> Box<Insertion> {
        let close = mc.paren_token.span.close();
        let end = self.cx.span(close, close);
        let dot = self.cx.span(mc.dot_token.span, mc.dot_token.span);
        let text = self.cx.lines.text();
        let line_start = text[..dot.byte_start].rfind('\n').map_or(0, |i| i + 1);
        let before = &text[line_start..dot.byte_start];
        let own_line = before.chars().all(|c| c == ' ' || c == '\t');
        let (newline, indent) = match own_line {
            true if text[..line_start].ends_with("\r\n") => ("\r\n", before),
            true => ("\n", before),
            false => ("", ""),
        };
        Box::new(Insertion {
            at: Loc {
                path: self.cx.path.clone(),
                span: Span {
                    line: end.end_line,
                    column: end.end_column,
                    end_line: end.end_line,
                    end_column: end.end_column,
                    byte_start: end.byte_end,
                    byte_end: end.byte_end,
                },
            },
            indent: indent.to_string(),
            newline: newline.to_string(),
            key_quote: Some('"'),
            value_quote: Some('"'),
            keys: Vec::new(),
            prefix: Some(String::new()),
            call: Some(method.to_string()),
        })
    }

    /// `.set(key, value)`, `.create()` and the rest on an rdkafka `ClientConfig`: what
    /// the call does to the configuration is the pack's `config`.
    pub(super) fn kafka_config_call(
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
                dynamic: true,
                ..KafkaClient::new(loc.clone(), config_family(recv.role.as_deref()))
            })
        });
        let role = recv.role.clone();
        let spec = self
            .cx
            .apis
            .methods
            .get(&name)
            .into_iter()
            .flatten()
            .find(|s| s.config.is_some() && s.on.iter().any(|o| Some(o) == role.as_ref()))
            .cloned();
        match spec.as_ref().and_then(|s| s.config) {
            Some(ConfigStep::Property) => {
                let spec = spec.as_ref().expect("a config step has its spec");
                // A setter of one property takes its value from the variant its
                // argument names (`RequiredAcks::One`); `.set(k, v)` from two strings.
                let (key, value_arg) = match &spec.property {
                    Some(p) => (Some(p.clone()), 0),
                    None => (arg_infos.first().and_then(|a| a.str_lit.clone()), 1),
                };
                match key {
                    Some(key) => {
                        let value = match &spec.property {
                            Some(_) => args.first().and_then(|a| match a {
                                Expr::Path(p) => p.path.segments.last().and_then(|s| {
                                    spec.property_values.get(&s.ident.to_string()).cloned()
                                }),
                                _ => None,
                            }),
                            None => arg_infos.get(value_arg).and_then(|a| a.str_lit.clone()),
                        };
                        // The string literal's text, for a fix that changes the value.
                        let value_at = match (&spec.property, args.get(value_arg)) {
                            (
                                None,
                                Some(Expr::Lit(syn::ExprLit {
                                    lit: syn::Lit::Str(lit),
                                    ..
                                })),
                            ) => {
                                let at = self.cx.loc(lit.span(), lit.span());
                                crate::support::lines::in_place(
                                    self.cx.lines.text(),
                                    at.span,
                                    &lit.value(),
                                )
                                .map(|span| Loc { span, ..at })
                            }
                            _ => None,
                        };
                        cfg.props.push(Prop {
                            key,
                            value,
                            loc: loc.clone(),
                            value_at,
                        });
                        // A setting the chain leaves out goes after its last `.set(..)`.
                        if spec.property.is_none() {
                            cfg.insert = Some(self.chain_insertion(mc, &name));
                        }
                    }
                    None => cfg.unseen_step(),
                }
            }
            Some(ConfigStep::Keep) => {}
            // A new value: what is set on the copy leaves the original as it is. A
            // setting the copy lacks is not written into the original's chain.
            Some(ConfigStep::Copy) => {
                cfg.insert = None;
                return Info {
                    role: role.or_else(|| Role::KafkaConfig.some()),
                    kafka_config: Some(cfg),
                    ..Info::default()
                };
            }
            Some(ConfigStep::Create) => {
                // The value made has the role the pack says (`returns`), unless a
                // turbofish names the client (`create::<StreamConsumer>()`).
                let made = spec.as_ref().and_then(|s| s.returns.clone());
                let role = self.turbofish_role(mc);
                let mut client = *cfg;
                client.role = role.clone();
                if client.library.is_none() {
                    client.library = spec.as_ref().map(|s| s.pack_name());
                }
                self.kafka_clients.push(client);
                return Info {
                    role: role.or(made).or_else(|| Role::KafkaClient.some()),
                    kafka_client: Some(self.kafka_clients.len() - 1),
                    ..Info::default()
                };
            }
            None => cfg.unseen_step(),
        }
        if let Some(v) = recv.value {
            self.values[v as usize].kafka_config = Some(cfg.clone());
        }
        Info {
            value: recv.value,
            role: role.or_else(|| Role::KafkaConfig.some()),
            kafka_config: Some(cfg),
            ..Info::default()
        }
    }
}

/// The client family a configuration of `role` builds: rdkafka's `ClientConfig` is
/// librdkafka's; another pack's builder (kafka-rust) has no librdkafka defaults.
pub(super) fn config_family(role: Option<&str>) -> ClientFamily {
    if Role::KafkaConfig.is(role) {
        ClientFamily::Librdkafka
    } else {
        ClientFamily::Unknown
    }
}
