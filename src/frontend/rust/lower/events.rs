//! API calls made events: a spec applied at a call (its event, or the builder it
//! starts), the builders' terminal calls, the SQL a spec points at, and the event
//! itself.

use syn::Expr;

use super::{builder_text, dsl_table, strip, Builder, Info, Lowerer};
use crate::apis::{ApiEvent as Api, ArgWord, BuilderStep, CallSpec, Role, Target};
use crate::frontend::rust::{sql, TypeInfo};

/// The verb of the facts a value naming a table carries (`sql = "table"`).
pub(super) const TABLE_VERB: &str = "TABLE";

/// The table a value names (a collection made by a `sql = "table"` call).
pub(super) fn named_table(i: &Info) -> Option<&str> {
    i.sql
        .as_ref()
        .filter(|s| s.verb == TABLE_VERB)
        .and_then(|s| s.tables.first())
        .map(String::as_str)
}
use crate::ir::{
    ClientRef, ClosureRun, Event, EventKind, ExternalKind, Loc, Node, SqlFacts, SqlKind, Tables,
    ValueId,
};

impl<'a, 'b> Lowerer<'a, 'b> {
    /// Applies an API spec at a call: emits its event or starts its builder. A retry
    /// or a call running a closure (spawn, transaction, callback) is lowered apart;
    /// other calls lower their arguments, then start a builder or emit the event.
    // Method calls, path calls and macros arrive here with their parts apart (a
    // receiver or not, syntax arguments); the event's place and text, and the output.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn api_call(
        &mut self,
        spec: &CallSpec,
        recv: Option<&Info>,
        args: &[&Expr],
        method: &str,
        loc: Loc,
        text: String,
        out: &mut Vec<Node>,
    ) -> Info {
        let returns = spec.returns.clone();
        self.note_pack(spec);
        match spec.event {
            Api::Retry => return self.retry_call(args, &loc, &text, out),
            Api::Spawn | Api::TxClosure | Api::Callback => {
                // `set.spawn(async move { .. })`: the receiver holds the task.
                if let (Api::Spawn, Some(set)) = (spec.event, recv.and_then(|r| r.value)) {
                    self.note_set_push(set);
                }
                return self.closure_call(spec, args, &loc, &text, returns, out);
            }
            _ => {}
        }
        let arg_infos = self.plain_args(args, out);
        let mut sql_text = self.spec_sql(spec, recv, args, &arg_infos);
        if let (Some(sql), Some(r)) = (sql_text.as_mut(), recv) {
            self.chain_statement(sql, r);
        }
        if !spec.terminals.is_empty() {
            let mut mentions: Vec<ValueId> = recv.map(|r| r.mentions.clone()).unwrap_or_default();
            for a in &arg_infos {
                mentions.extend(self.arg_mentions(a));
            }
            let b = Builder {
                spec: spec.clone(),
                loc,
                text,
                sql: sql_text,
                mentions,
                strs: Vec::new(),
                written: builder_text::Written::start(spec, arg_infos.first()),
            };
            return Info {
                builder: Some(Box::new(b)),
                role: returns,
                ..Info::default()
            };
        }
        let recv_v = recv.and_then(|r| r.value);
        if let (true, Some(r)) = (spec.opens, recv_v) {
            self.values[r as usize].unopened = false;
            // Opening the transaction (mongodb `session.start_transaction()`) is not a
            // use of it, as its commit or rollback is not: writes not given the
            // session run on their own (a discarded transaction).
            self.finishes[r as usize] += 1;
        }
        let target = match spec.target {
            Target::Receiver => recv_v,
            Target::Arg0 => arg_infos.first().and_then(|a| a.value).or(recv_v),
            Target::TerminalArg0 => arg_infos.first().and_then(|a| a.value),
            Target::Tx => self.tx_arg(&arg_infos),
            Target::Mentions => None,
            Target::None => None,
        };
        let mut mentions: Vec<ValueId> = Vec::new();
        for a in &arg_infos {
            mentions.extend(self.arg_mentions(a));
        }
        if matches!(spec.event, Api::ChannelSend | Api::ChannelRecv) {
            self.chan_keys = self.chan_keys_of(spec, recv_v, args, &arg_infos);
        }
        self.call_recv = recv_v;
        self.call_keyed = recv.is_some_and(|r| r.keyed) || arg_infos.iter().any(|a| a.keyed);
        // A handle made on a channel (`Exchange::direct(&channel)`): its publishes go
        // out on that channel.
        let on_channel = match spec.channel {
            Some(Target::Receiver) => recv_v,
            Some(Target::Arg0) => arg_infos.first().and_then(|a| a.value),
            _ => None,
        }
        .map(|c| self.values[c as usize].channel.unwrap_or(c));
        let handle = on_channel.map(|_| text.clone());
        // `xadd(key, false, ("MAXLEN", "~", n), "*", fields)`: the words a capped
        // append is told by (`capped_args`) written in the call's arguments, as a
        // command builder's are.
        let words = !spec.capped_args.is_empty();
        if words {
            self.builder_strs = args.iter().flat_map(|a| self.literals_of(a)).collect();
        }
        let mut value = self.emit(spec, method, target, mentions, sql_text, loc, text, out);
        if words {
            self.builder_strs.clear();
        }
        self.call_recv = None;
        self.call_keyed = false;
        if let (Some(c), Some(text), None) = (on_channel, handle, value) {
            let v = self.new_value(&text, TypeInfo::of_role(returns.clone()));
            self.values[v as usize].channel = Some(c);
            value = Some(v);
        }
        if spec.acks {
            self.commit_acks(spec, recv_v, out);
        }
        let mut info = Info {
            value,
            role: returns,
            mentions: value.into_iter().collect(),
            rows: std::mem::take(&mut self.read_rows),
            ..Info::default()
        };
        if let (Some(v), Some(r)) = (value, &info.role) {
            self.values[v as usize].role = Some(r.clone());
        }
        if spec.event == Api::None {
            // A statement prepared from SQL keeps its text (`client.prepare("INSERT …")`).
            info.sql = self.spec_sql(spec, recv, args, &arg_infos);
            if let Some(r) = recv {
                info.mentions = r.mentions.clone();
            }
        }
        if spec.keys_requests {
            // The client keyed here: its key's origin goes with it (a key minted per
            // attempt identifies the calls made with the client).
            info.keyed = true;
            for a in &arg_infos {
                info.absorb(a);
            }
        }
        info
    }

    /// The argument holding a transaction (`Target::Tx`).
    fn tx_arg(&self, args: &[Info]) -> Option<ValueId> {
        args.iter().filter_map(|a| a.value).find(|v| {
            self.values[*v as usize].role.as_deref().and_then(Role::of) == Some(Role::DbTx)
        })
    }

    /// A commit that also acks the message it is called on (the spec's `acks`):
    /// the ack follows the commit just pushed, at the same place.
    fn commit_acks(&self, spec: &CallSpec, recv: Option<ValueId>, out: &mut Vec<Node>) {
        let Some(Node::Event(commit)) = out.last() else {
            return;
        };
        if !matches!(commit.kind, EventKind::Commit { .. }) {
            return;
        }
        let ack = Event {
            kind: EventKind::Ack {
                msg: recv.and_then(|v| self.root(v)),
                offsets: false,
                store: false,
            },
            describe: spec.describe.clone().unwrap_or_default(),
            ..commit.clone()
        };
        out.push(Node::Event(ack));
    }

    /// Notes the pack of a broker spec matched here (`Function::packs`).
    fn note_pack(&mut self, spec: &CallSpec) {
        if matches!(
            spec.event,
            Api::Receive | Api::Ack | Api::Nack | Api::Publish | Api::BrokerBegin
        ) {
            let pack = spec.pack_name();
            if !self.packs.contains(&pack) {
                self.packs.push(pack);
            }
        }
    }

    /// Opens a retry scope at `loc`: what is lowered until [`Self::close_retry_scope`]
    /// runs once per attempt.
    pub(super) fn open_retry_scope(&mut self, loc: Loc, text: String) {
        self.next_scope += 1;
        self.retry_scopes.push((self.next_scope, loc, text));
    }

    /// Closes the retry scope opened last; `body` is what it ran.
    pub(super) fn close_retry_scope(&mut self, body: &[Node]) {
        if let Some((_, loc, text)) = self.retry_scopes.pop() {
            self.retry_scope_closed(loc, text, body);
        }
    }

    /// A retry scope closed, with what it ran: recorded for the review checklist,
    /// and kept so that the functions it calls are known to run once per attempt.
    pub(super) fn retry_scope_closed(&mut self, loc: Loc, text: String, body: &[Node]) {
        if body
            .iter()
            .flat_map(Node::each_event)
            .any(|e| matches!(e.kind, EventKind::Call(_)))
        {
            self.retry_bodies.push(crate::ir::PollLoop {
                loc: loc.clone(),
                text: text.clone(),
                body: Node::Seq(body.to_vec()),
            });
        }
        self.retries_seen.push((loc, text));
    }

    /// A retry call (`Api::Retry`): its arguments are lowered inside a retry scope,
    /// recorded for the review checklist; its value mentions what they mention.
    fn retry_call(&mut self, args: &[&Expr], loc: &Loc, text: &str, out: &mut Vec<Node>) -> Info {
        self.open_retry_scope(loc.clone(), text.to_string());
        let mut info = Info::default();
        let start = out.len();
        for a in args {
            let i = self.arg(a, out);
            info.absorb(&i);
        }
        self.close_retry_scope(&out[start..]);
        Info {
            mentions: info.mentions,
            ..Info::default()
        }
    }

    /// A call that runs the closure it is given: later (a spawn, whose value is the
    /// task's handle), in a transaction, or as a callback. The first argument that is
    /// a closure becomes one; the others are lowered in place. A transaction call
    /// given no closure has no value.
    fn closure_call(
        &mut self,
        spec: &CallSpec,
        args: &[&Expr],
        loc: &Loc,
        text: &str,
        returns: Option<String>,
        out: &mut Vec<Node>,
    ) -> Info {
        let run = match spec.event {
            Api::Spawn => ClosureRun::Later,
            Api::TxClosure => ClosureRun::Transaction,
            _ => ClosureRun::Callback,
        };
        let handle = (spec.event == Api::Spawn).then(|| {
            let role = Role::JoinHandle.some();
            self.new_value(
                "task",
                TypeInfo {
                    role,
                    crate_type: None,
                    outside: false,
                    generic: None,
                    elem: None,
                    ..TypeInfo::default()
                },
            )
        });
        let mut done = false;
        for a in args {
            if !done && self.special_arg(a, run, handle, out) {
                done = true;
                self.name_closure_run(run, loc, text, out);
            } else {
                self.expr(a, out);
            }
        }
        if !done && spec.event == Api::TxClosure {
            return Info::default();
        }
        Info {
            value: handle,
            role: returns,
            ..Info::default()
        }
    }

    /// The closure a call just made of its argument (the last node): named by the
    /// call's text, and a transaction placed at the call. `conn.transaction(|c| …)`
    /// whose body never uses `c`: the writes go elsewhere (a discarded transaction),
    /// so the body begins with a transaction nothing uses.
    fn name_closure_run(&mut self, run: ClosureRun, loc: &Loc, text: &str, out: &mut [Node]) {
        if let Some(Node::Closure {
            text: t, loc: l, ..
        }) = out.last_mut()
        {
            t.replace_range(.., text);
            if run == ClosureRun::Transaction {
                *l = loc.clone();
            }
        }
        if let Some(Node::Closure {
            body,
            param: Some(p),
            run: ClosureRun::Transaction,
            ..
        }) = out.last_mut()
        {
            if self.uses[*p as usize] == 0 {
                let begin = Node::Event(Event {
                    kind: EventKind::Begin {
                        tx: *p,
                        fresh: true,
                        used: false,
                    },
                    loc: loc.clone(),
                    text: text.to_string(),
                    describe: "transaction".into(),
                });
                **body = Node::Seq(vec![
                    begin,
                    std::mem::replace(&mut **body, Node::Seq(vec![])),
                ]);
            }
        }
    }

    /// ORM statements built along a chain: `Entity::delete_many().filter(..).exec(db)`
    /// (the packs' `[chain_idents]` and `[chain_verbs]`): the chain's steps set the
    /// statement's conflict handling, and a verb named along it, its verb (a `DELETE`
    /// wins, then an `UPDATE`).
    fn chain_statement(&self, sql: &mut SqlFacts, r: &Info) {
        let apis = self.cx.apis;
        for step in r.idents.iter().filter_map(|i| apis.chain_idents.get(i)) {
            match step {
                BuilderStep::Upsert => sql.upsert = true,
                BuilderStep::IgnoresConflict => sql.ignores_conflict = true,
                BuilderStep::Assignments => {}
            }
        }
        // `OnConflict::column(c).do_nothing()`: the conflict is ignored, nothing updated.
        if sql.ignores_conflict {
            sql.upsert = false;
        }
        // `processed_message::Entity::insert(m)`: the table of the entity's module (the
        // packs' `[dsl_tables]` item).
        if sql.tables.is_empty() && sql.kind == SqlKind::Write {
            let table = r
                .idents
                .windows(2)
                .find_map(|w| apis.dsl_tables.before_item(w));
            sql.tables.extend(table);
        }
        if sql.verb == "WRITE" {
            let names = |verb: &str| {
                apis.chain_verbs.iter().any(|(prefix, v)| {
                    v == verb && r.idents.iter().any(|i| i.starts_with(prefix.as_str()))
                })
            };
            let named = ["DELETE", "UPDATE", "INSERT"]
                .into_iter()
                .find(|v| names(v));
            if let Some(v) = named {
                sql.verb = v.into();
            }
        }
    }

    /// The keys naming the channel of a channel send or receive: the receiver's, and
    /// for a send, the element type of what is sent (`tx.send(job)`, `job: Job`;
    /// `tx.send(Update::Added(..))`).
    fn chan_keys_of(
        &self,
        spec: &CallSpec,
        recv_v: Option<ValueId>,
        args: &[&Expr],
        arg_infos: &[Info],
    ) -> Vec<String> {
        let mut keys = recv_v
            .map(|v| self.values[v as usize].chan.clone())
            .unwrap_or_default();
        if spec.event == Api::ChannelSend {
            let sent = arg_infos
                .first()
                .and_then(|a| {
                    a.value
                        .and_then(|v| self.values[v as usize].crate_type.clone())
                        .or_else(|| a.crate_type.clone())
                })
                .or_else(|| args.first().and_then(|a| constructed_type(a)));
            if let Some(t) = sent {
                let k = format!("T:{t}");
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        keys
    }

    pub(super) fn builder_event(
        &mut self,
        b: Builder,
        terminal: &str,
        args: &[Info],
        out: &mut Vec<Node>,
    ) -> Info {
        let target = match b.spec.target {
            Target::TerminalArg0 => args.first().and_then(|a| a.value),
            Target::Tx => self.tx_arg(args),
            _ => None,
        };
        let mut mentions = b.mentions.clone();
        for a in args {
            mentions.extend(a.mentions.iter().copied());
        }
        let mut spec = b.spec.clone();
        let mut b = b;
        self.builder_strs.clone_from(&b.strs);
        let strs = b.strs.clone();
        // What the command's argument words do (the packs' `[[arg_words]]`, `lock_keys`).
        let apis = self.cx.apis;
        let has = |means: ArgWord| {
            strs.iter().any(|x| {
                apis.arg_words
                    .get(&x.to_ascii_uppercase())
                    .is_some_and(|w| w.means == means)
            })
        };
        // `SET signaling:cleanup_lock id NX EX 4`: a lock or a lease, not a claim nor
        // a business change (docs/what-is-analyzed.md, dual writes).
        let bound: Vec<&str> = mentions
            .iter()
            .filter_map(|m| self.values[*m as usize].text.as_deref())
            .collect();
        let lock = self.lock_helper
            || strs.iter().map(String::as_str).chain(bound).any(|x| {
                let x = x.to_ascii_lowercase();
                apis.lock_keys.iter().any(|w| x.contains(w.as_str()))
            });
        let only_if_absent = has(ArgWord::OnlyIfAbsent);
        if lock && b.sql.as_ref().is_some_and(|s| s.verb == "SET") && only_if_absent {
            spec.event = Api::External;
            spec.external = Some("redis lock".into());
            b.sql = None;
        }
        // A write in a function, type or module named for a cache (`invalidate`,
        // `ProfileCache`), not a claim: the cache's.
        if b.sql.is_some() && !only_if_absent && self.cache_helper.contains(&spec.origin) {
            spec.event = Api::External;
            spec.external = Some("cache".into());
            b.sql = None;
        }
        if let Some(sql) = b.sql.as_mut() {
            // `SET key value NX`: only the first writer succeeds, a claim.
            if sql.verb == "SET" && only_if_absent {
                sql.verb = "SET NX".into();
                sql.ignores_conflict = true;
                sql.columns = 1;
            }
        }
        // `SET key value EX 60` (no NX): a value that expires, a cache entry like
        // `set_ex`, not a business change (docs/what-is-analyzed.md, dual writes).
        if b.sql.as_ref().is_some_and(|s| s.verb == "SET") && has(ArgWord::Expires) {
            spec.event = Api::External;
            spec.external = Some("cache".into());
            b.sql = None;
        }
        let value = self.emit(
            &spec,
            terminal,
            target,
            mentions,
            b.sql.clone(),
            b.loc.clone(),
            b.text.clone(),
            out,
        );
        self.builder_strs.clear();
        Info {
            value,
            role: spec.returns.clone(),
            rows: std::mem::take(&mut self.read_rows),
            ..Info::default()
        }
    }

    pub(super) fn spec_sql(
        &self,
        spec: &CallSpec,
        recv: Option<&Info>,
        args: &[&Expr],
        infos: &[Info],
    ) -> Option<SqlFacts> {
        let mut facts = self.spec_sql_text(spec, recv, args, infos)?;
        // A dialect whose `INSERT` overwrites the row with the same key (CQL): an
        // upsert, unless it ignores conflicts (`IF NOT EXISTS`, a claim).
        if spec.insert_is_upsert && facts.verb == "INSERT" && !facts.ignores_conflict {
            facts.upsert = true;
        }
        Some(facts)
    }

    fn spec_sql_text(
        &self,
        spec: &CallSpec,
        recv: Option<&Info>,
        args: &[&Expr],
        infos: &[Info],
    ) -> Option<SqlFacts> {
        let which = spec.sql.as_deref()?;
        let from_info = |i: &Info| {
            i.sql
                .clone()
                .or_else(|| i.str_lit.as_deref().map(sql::facts))
        };
        match which {
            "arg0" => infos
                .first()
                .and_then(from_info)
                .or(Some(SqlFacts::unknown())),
            // A statement prepared earlier runs (`stmt.query_map(params, f)`).
            "receiver" => recv
                .and_then(|r| r.sql.clone())
                .or(Some(SqlFacts::unknown())),
            // The start of a statement the builder completes (`QueryBuilder::new`).
            "prefix" => infos
                .first()
                .and_then(|i| i.str_lit.as_deref().map(sql::prefix_facts))
                .or(Some(SqlFacts::unknown())),
            "first_str" => infos
                .iter()
                .find_map(|i| i.str_lit.as_deref().map(sql::facts))
                .or(Some(SqlFacts::unknown())),
            // A query-DSL read (`orders::table.filter(..).load(conn)`): the table the
            // chain starts from; none (no event) for another `load(x)`.
            "dsl_select" => {
                let idents = recv.map(|r| r.idents.as_slice()).unwrap_or_default();
                let names = &self.cx.apis.dsl_tables;
                // `orders::table`, or `dsl::orders` (`use orders::dsl;`).
                let table = idents.windows(2).take(4).find_map(|w| {
                    names.before_item(w).or_else(|| {
                        (names.modules.contains(&w[0]) && !names.is_not_table(&w[1]))
                            .then(|| w[1].clone())
                    })
                });
                // `orders.filter(..)` with `use crate::schema::orders::dsl::*;`: the
                // table a glob of its DSL module brings under its own name.
                let table = table.or_else(|| {
                    let first = idents.first()?;
                    let globbed = self.cx.uses.iter().any(|(k, p)| {
                        k.ends_with('*')
                            && matches!(p.as_slice(), [.., t, m] if t == first && names.modules.contains(m))
                    });
                    globbed.then(|| first.clone())
                });
                Some(SqlFacts {
                    kind: SqlKind::Read,
                    verb: "SELECT".into(),
                    tables: table.into_iter().collect(),
                    ..SqlFacts::unknown()
                })
            }
            d if d.starts_with("dsl_") => {
                let verb = d.trim_start_matches("dsl_").to_ascii_uppercase();
                let names = &self.cx.apis.dsl_tables;
                // `processed.insert_one(doc)` on a collection that names its table
                // (`sql = "table"`), or `insert_into(orders::table)`.
                let table = recv
                    .and_then(named_table)
                    .map(str::to_string)
                    .or_else(|| args.first().and_then(|a| dsl_table(a, names)));
                let keyed = verb == "INSERT_KEYED";
                let (verb, ignores_conflict, upsert) = match verb.as_str() {
                    "INSERT_IGNORE" => ("INSERT".to_string(), true, false),
                    "INSERT_KEYED" => ("INSERT".to_string(), false, false),
                    "REPLACE" => ("INSERT".to_string(), false, true),
                    _ => (verb, false, false),
                };
                // An update the pack marks non-idempotent adds to the value it
                // writes (MongoDB `$inc`): `SET n = n + ..`.
                let self_referencing = spec.non_idempotent && verb == "UPDATE";
                Some(SqlFacts {
                    kind: SqlKind::Write,
                    ignores_conflict,
                    upsert,
                    keyed,
                    self_referencing,
                    verb,
                    tables: table.into_iter().collect(),
                    ..SqlFacts::unknown()
                })
            }
            // ORM calls (`model.insert(&db)`): a known write; the verb from the pack
            // (`SAVE`: an insert or an update).
            "method" => {
                let verb = spec.verb.clone().unwrap_or_else(|| "WRITE".into());
                Some(SqlFacts {
                    kind: SqlKind::Write,
                    upsert: verb == "SAVE",
                    verb,
                    ..SqlFacts::unknown()
                })
            }
            // `db.collection::<T>("processed_events")`: no statement, a value that
            // names its table (a later `dsl_*` write on it writes that table).
            "table" => infos
                .first()
                .and_then(|i| i.str_lit.as_deref())
                .map(|t| SqlFacts {
                    verb: TABLE_VERB.into(),
                    tables: vec![t.to_ascii_lowercase()],
                    ..SqlFacts::unknown()
                }),
            "key_set" => Some(SqlFacts {
                kind: SqlKind::Write,
                verb: "SET".into(),
                tables: spec.store.iter().cloned().collect(),
                ..SqlFacts::unknown()
            }),
            "key_claim" => Some(SqlFacts {
                kind: SqlKind::Write,
                verb: "SET NX".into(),
                tables: spec.store.iter().cloned().collect(),
                ignores_conflict: true,
                columns: 1,
                many_rows: false,
                marks_done: false,
                ..SqlFacts::unknown()
            }),
            _ => None,
        }
    }

    /// Emits the event of `spec`. Returns the value it creates (a message, a transaction).
    /// The Kafka client a value is (configured here, or made by the crate function
    /// that returned it), as a receive names it.
    pub(super) fn client_ref(&self, v: ValueId) -> Option<ClientRef> {
        let v = &self.values[v as usize];
        v.kafka_client
            .map(|i| ClientRef::Here(i as u32))
            .or_else(|| v.client_made_by.as_deref().cloned().map(ClientRef::Made))
    }

    // The fields of the `Event` it builds (target, mentions, SQL, place, text), which
    // builders gather over a chain before the terminal call; and the output.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn emit(
        &mut self,
        spec: &CallSpec,
        method: &str,
        target: Option<ValueId>,
        mentions: Vec<ValueId>,
        sql_facts: Option<SqlFacts>,
        loc: Loc,
        text: String,
        out: &mut Vec<Node>,
    ) -> Option<ValueId> {
        // A fresh id in a file name is a temporary name, not an identity.
        let names_a_file = spec.external.as_deref() == Some("file");
        if matches!(spec.event, Api::Publish | Api::Write | Api::External) && !names_a_file {
            let dedup_write = sql_facts.as_ref().is_some_and(|f| {
                f.ignores_conflict || f.tables.iter().any(|t| Tables::default().is_dedup(t))
            });
            let send = matches!(spec.event, Api::Publish | Api::External);
            if send {
                self.note_dedup_send(&mentions, &loc, &text);
            }
            self.record_id_flows(&mentions, &loc, &text, dedup_write, None, send);
        }
        let (kind, made) = if spec.event == Api::Write {
            match self.write_event(spec, method, target, &mentions, sql_facts, &loc)? {
                WriteEvent::Event(kind) => (kind, None),
                WriteEvent::Statement(kind, describe) => {
                    out.push(Node::Event(Event {
                        kind,
                        loc,
                        text,
                        describe,
                    }));
                    buffered(spec, method, out);
                    return None;
                }
            }
        } else {
            self.event_kind(spec, target, &mentions, &loc, &text, out)?
        };
        if let EventKind::Read { tables } = &kind {
            self.read_rows.clone_from(tables);
        }
        let write = matches!(kind, EventKind::Write { .. });
        self.push_event(spec, kind, loc, text, out);
        if write {
            buffered(spec, method, out);
        }
        made
    }

    /// The event of a spec other than a write, and the value it makes (a received
    /// message, a transaction, a channel, a fresh id); `None`: no event (a call with
    /// no event of its own, a commit of no known transaction, or claims tested,
    /// whose events are pushed here).
    fn event_kind(
        &mut self,
        spec: &CallSpec,
        target: Option<ValueId>,
        mentions: &[ValueId],
        loc: &Loc,
        text: &str,
        out: &mut Vec<Node>,
    ) -> Option<(EventKind, Option<ValueId>)> {
        let msg_of = |l: &Self, t: Option<ValueId>| {
            t.and_then(|v| l.root(v))
                .or_else(|| mentions.iter().find_map(|m| l.root(*m)))
        };
        let mut made = None;
        let kind = match spec.event {
            Api::Receive => {
                let v = self.new_value(text, TypeInfo::of_role(spec.returns.clone()));
                self.values[v as usize].msg_root = Some(v);
                made = Some(v);
                EventKind::Receive {
                    msg: v,
                    element: false,
                    client: target.and_then(|t| self.client_ref(t)),
                }
            }
            Api::Ack => EventKind::Ack {
                msg: msg_of(self, target),
                offsets: spec.offsets,
                store: spec.offset_store,
            },
            Api::Nack => EventKind::Nack {
                msg: msg_of(self, target),
            },
            Api::Begin => {
                let v = self.new_value(text, TypeInfo::of_role(Role::DbTx.some()));
                self.values[v as usize].unopened = spec.lazy;
                made = Some(v);
                // Used unless it only goes to a binding or is dropped (see `reset_begin_uses`).
                self.uses[v as usize] = 1;
                EventKind::Begin {
                    tx: v,
                    fresh: true,
                    used: true,
                }
            }
            Api::Commit | Api::Rollback => {
                let tx = target?;
                self.finishes[tx as usize] += 1;
                if spec.event == Api::Commit {
                    EventKind::Commit {
                        tx,
                        acks: spec.acks,
                    }
                } else {
                    EventKind::Rollback { tx }
                }
            }
            Api::Publish => {
                if spec.confirmable {
                    self.confirmable.insert(loc.clone());
                }
                EventKind::Publish {
                    non_idempotent: spec.non_idempotent,
                    capped: spec.capped
                        || spec
                            .capped_args
                            .iter()
                            .any(|w| self.builder_strs.iter().any(|s| s.eq_ignore_ascii_case(w))),
                    confirm: (spec.confirmable || spec.confirm_mode).then_some(true),
                    // Through a handle on a channel, the channel itself.
                    channel: target.map(|t| self.values[t as usize].channel.unwrap_or(t)),
                    rows: self.rows_in(mentions),
                }
            }
            Api::ChannelOpen => {
                let v = self.new_value(text, TypeInfo::of_role(spec.returns.clone()));
                // Named after the binding it gets (`let build_tx = conn.create_channel()`).
                self.values[v as usize].opened = true;
                made = Some(v);
                if let (Some(with), Some(options)) = (&spec.confirm_with, &spec.confirm_options) {
                    self.channel_opens
                        .push((loc.clone(), with.clone(), options.clone()));
                }
                EventKind::ChannelOpen { channel: v }
            }
            Api::ConfirmSelect => EventKind::ConfirmSelect { channel: target },
            Api::ConfirmsWaited => EventKind::ConfirmsWaited { channel: target },
            Api::ClaimResult => {
                self.claims_tested(target, loc, text, out);
                return None;
            }
            Api::External => self.external_kind(spec, target, mentions),
            Api::Fetch => EventKind::Read {
                tables: vec![format!(
                    "{}{}",
                    crate::apis::FETCHED,
                    spec.external.as_deref().unwrap_or_default()
                )],
            },
            Api::Idgen => {
                let v = self.new_value(text, TypeInfo::default());
                let scope = self.retry_scopes.last().map(|(id, _, _)| *id);
                let minted = Some((loc.clone(), text.to_string(), scope));
                self.note_minted(loc);
                if spec.formatted {
                    self.values[v as usize].clock = minted;
                } else {
                    self.values[v as usize].fresh = minted;
                }
                made = Some(v);
                EventKind::IdGen { binding: Some(v) }
            }
            Api::BrokerBegin => EventKind::BrokerBegin,
            Api::BrokerCommit => EventKind::BrokerCommit,
            Api::BrokerAbort => EventKind::BrokerAbort,
            Api::BrokerOffsets => EventKind::BrokerOffsets,
            Api::ChannelSend => EventKind::ChannelSend {
                chan: std::mem::take(&mut self.chan_keys),
            },
            Api::ChannelRecv => EventKind::ChannelRecv {
                chan: std::mem::take(&mut self.chan_keys),
            },
            // A write's event is `write_event`'s.
            Api::Write | Api::None | Api::Spawn | Api::TxClosure | Api::Callback | Api::Retry => {
                return None
            }
        };
        Some((kind, made))
    }

    /// The event of a write spec, by the SQL it runs: a read of known tables, a
    /// transaction's `BEGIN`, `COMMIT` or `ROLLBACK` on the connection, a write
    /// statement (a claim when returned and conflicts are ignored), or a write of
    /// unknown SQL at one of the spec's write terminals; `None`: no event.
    fn write_event(
        &mut self,
        spec: &CallSpec,
        method: &str,
        target: Option<ValueId>,
        mentions: &[ValueId],
        sql_facts: Option<SqlFacts>,
        loc: &Loc,
    ) -> Option<WriteEvent> {
        let facts = sql_facts.unwrap_or_else(SqlFacts::unknown);
        // A session with no transaction opened on it yet writes each by itself.
        let unopened = target.is_some_and(|t| self.values[t as usize].unopened);
        let target = target.filter(|_| !unopened);
        let autocommit = unopened || self.autocommit_target(target, spec);
        let kind = match facts.kind {
            SqlKind::Read if facts.tables.is_empty() => return None,
            SqlKind::Read => EventKind::Read {
                tables: facts.tables,
            },
            SqlKind::Begin => {
                // `conn.execute("BEGIN")`: the connection now holds a transaction.
                EventKind::Begin {
                    tx: target?,
                    fresh: false,
                    used: true,
                }
            }
            SqlKind::Commit => EventKind::Commit {
                tx: target?,
                acks: false,
            },
            SqlKind::Rollback => EventKind::Rollback { tx: target? },
            SqlKind::Write => {
                if self.in_return && facts.ignores_conflict {
                    self.returns_claims.push(loc.clone());
                }
                let describe = spec
                    .describe_table(facts.tables.first())
                    .unwrap_or_else(|| facts.describe());
                let kind = EventKind::Write {
                    target,
                    sql: facts,
                    unchecked: false,
                    keyed_by: self.origins_of(mentions),
                    rows: self.rows_in(mentions),
                    autocommit,
                };
                return Some(WriteEvent::Statement(kind, describe));
            }
            SqlKind::Unknown => {
                if spec.write_terminals.is_empty()
                    || spec.write_terminals.iter().any(|t| t == method)
                {
                    EventKind::Write {
                        target,
                        sql: facts,
                        unchecked: false,
                        keyed_by: self.origins_of(mentions),
                        rows: self.rows_in(mentions),
                        autocommit,
                    }
                } else {
                    return None;
                }
            }
        };
        Some(WriteEvent::Event(kind))
    }

    /// `conn.changes()`: the rows the last statement on the connection changed, so
    /// the claims it ran are tested here (docs/what-is-analyzed.md): one event per claim dropped on
    /// that connection (or on any, when either is unknown).
    fn claims_tested(&self, target: Option<ValueId>, loc: &Loc, text: &str, out: &mut Vec<Node>) {
        let tested: Vec<Loc> = self
            .dropped_claims
            .iter()
            .filter(|(t, _)| t.is_none() || target.is_none() || *t == target)
            .map(|(_, l)| l.clone())
            .collect();
        for claim in tested {
            out.push(Node::Event(Event {
                kind: EventKind::ClaimTested { claim },
                loc: loc.clone(),
                text: text.to_string(),
                describe: "claim tested".into(),
            }));
        }
    }

    /// The event of an external call: its kind by the spec's `external` name (a
    /// durable one is a store), and whether it carries an idempotency key: the
    /// builder's strings name its header, or the call is given (or made on) a client
    /// whose requests carry one (the packs' `keys_requests`).
    fn external_kind(
        &self,
        spec: &CallSpec,
        target: Option<ValueId>,
        mentions: &[ValueId],
    ) -> EventKind {
        let keyed = self.call_keyed
            || target
                .iter()
                .chain(mentions)
                .chain(self.call_recv.iter())
                .any(|v| self.values[*v as usize].keyed);
        EventKind::External {
            kind: match spec.external.as_deref() {
                Some("http") => ExternalKind::Http,
                Some("email") => ExternalKind::Email,
                Some("payment") => ExternalKind::Payment,
                Some("cache") => ExternalKind::Cache,
                // A key-store write where the function, type or module is named
                // for a cache (`fn invalidate`): the cache's.
                Some(_) if self.cache_helper.contains(&spec.origin) => ExternalKind::Cache,
                Some(name) if spec.durable => ExternalKind::Store(name.to_string()),
                other => ExternalKind::Other(other.unwrap_or("external").to_string()),
            },
            non_idempotent: spec.non_idempotent,
            idempotency_key: keyed
                || self.builder_strs.iter().any(|s| {
                    let s = s.to_ascii_lowercase().replace(['-', '_', ' '], "");
                    s == "idempotencykey" || s == "xidempotencykey"
                }),
        }
    }

    /// Pushes an event with the spec's description. A batch whose failed entries
    /// nothing reads is followed by `EntriesUnread`: on the paths after it, some
    /// entries may have failed unseen; so is a publish whose delivery report nothing
    /// will read (its future dropped unawaited, or one that arrives only through a
    /// later `poll` / `flush` on the producer).
    fn push_event(
        &mut self,
        spec: &CallSpec,
        kind: EventKind,
        loc: Loc,
        text: String,
        out: &mut Vec<Node>,
    ) {
        let describe = spec.describe.clone().unwrap_or_default();
        let at = (loc.span.line, loc.span.column);
        let unread = !spec.entry_failures.is_empty() && self.unread_batches.contains(&at);
        let delivery = matches!(kind, EventKind::Publish { .. })
            && match spec.delivery {
                Some(crate::apis::Delivery::Future) => self.dropped_unawaited.contains(&at),
                Some(crate::apis::Delivery::Polled) => true,
                None => false,
            };
        let what = (unread || delivery).then(|| Box::new(kind.clone()));
        if !spec.entry_failures.is_empty() {
            self.batch_locs.insert(at, loc.clone());
        }
        out.push(Node::Event(Event {
            kind,
            loc: loc.clone(),
            text: text.clone(),
            describe: describe.clone(),
        }));
        if let Some(what) = what {
            out.push(Node::Event(Event {
                kind: EventKind::EntriesUnread { what, delivery },
                loc,
                text,
                describe,
            }));
        }
    }
}

/// After the write just pushed, for a call whose client buffers rows (the spec's
/// `buffering`): whether `method`, the call or the builder's terminal, leaves them
/// buffered or sends them.
fn buffered(spec: &CallSpec, method: &str, out: &mut Vec<Node>) {
    if spec.buffering.is_empty() {
        return;
    }
    let Some(Node::Event(write)) = out.last() else {
        return;
    };
    let ev = Event {
        kind: EventKind::Buffered {
            sent: !spec.buffering.iter().any(|m| m == method),
        },
        ..write.clone()
    };
    out.push(Node::Event(ev));
}

/// The event of a write spec's call ([`Lowerer::write_event`]).
enum WriteEvent {
    /// Pushed like any event.
    Event(EventKind),
    /// A write statement: pushed alone, described by its SQL.
    Statement(EventKind, String),
}

/// The type a value is built as: `Job { .. }`, `Update::Added(..)` / `Update::Reload`
/// (an enum's variant), `Job::new(..)`.
fn constructed_type(e: &Expr) -> Option<String> {
    let path = match strip(e) {
        Expr::Struct(s) => return s.path.segments.last().map(|s| s.ident.to_string()),
        Expr::Call(c) => match strip(&c.func) {
            Expr::Path(p) => &p.path,
            _ => return None,
        },
        Expr::Path(p) => &p.path,
        _ => return None,
    };
    let n = path.segments.len();
    (n >= 2)
        .then(|| path.segments[n - 2].ident.to_string())
        .filter(|t| t.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
}
