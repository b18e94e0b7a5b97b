//! Calls into the crate's functions (the callee run with the caller's values
//! bound to its parameters) and closures, run as they run: now, later, as a
//! callback, in a transaction or concurrently.

use super::*;

impl<'c> Interp<'c> {
    // The fields of `Node::Closure` (body, how it runs, parameter, handle, place,
    // text) and the interpreter's state and frame, as every node visit takes them.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn closure(
        &mut self,
        body: &'c Node,
        run: ClosureRun,
        param: Option<ValueId>,
        handle: Option<ValueId>,
        loc: &Loc,
        text: &str,
        mut st: State,
        fr: &Frame<'c>,
    ) -> Outcome {
        let mut out = Outcome::default();
        match run {
            ClosureRun::Now => {
                let failed_before = st.failed.clone();
                let o = self.run(body, st, fr);
                let mut fall = o.fall;
                if let Some(s) = o.ret {
                    join_opt(&mut fall, s);
                }
                if let Some(s) = o.ret_err {
                    join_opt(&mut fall, error_result(s, &failed_before));
                }
                out.fall = fall;
            }
            ClosureRun::Callback | ClosureRun::Concurrent => {
                self.run(body, State::new(), fr);
                out.fall = Some(st);
            }
            ClosureRun::Later => {
                // Inside the task, effects of tasks spawned before it (siblings) are
                // not ordered against its acks, and are not its message's effects.
                // Effects are collected only inside tasks (a state outside one would
                // carry every effect of the entry's path to every branch).
                let mut inner = st.clone();
                // Nor are failures before it its own.
                inner.failed = None;
                inner.floating.clear();
                inner.effects.clear();
                self.tasks += 1;
                let o = self.run(body, inner, fr);
                self.tasks -= 1;
                let mut all = BTreeSet::new();
                // The task's own non-idempotent effects: awaited, they are the
                // message's, as if run in place; so are the dedup records it wrote.
                let mut nonidem = BTreeSet::new();
                let h = handle.map(|h| fr.val(h));
                for s in [o.fall, o.ret, o.ret_err].into_iter().flatten() {
                    all.extend(s.effects);
                    nonidem.extend(s.nonidem.into_iter().filter(|x| !st.nonidem.contains(x)));
                    for w in s.writes.into_iter().filter(|w| w.dedup) {
                        let r = (h, w);
                        if !st.writes.contains(&r.1) && !st.task_records.contains(&r) {
                            st.task_records.push(r);
                        }
                    }
                }
                for e in all {
                    // Outside a broker transaction, where it is applied outside one.
                    let mut applied = nonidem.iter().filter(|a: &&Applied| a.ev == e);
                    let first = applied.next().map(|a| a.in_broker_transaction);
                    let in_broker = first.map(|b| b && applied.all(|a| a.in_broker_transaction));
                    st.floating.push(Floating {
                        handle: h,
                        spawn: loc.clone(),
                        nonidem: in_broker,
                        effect: e,
                        sent: false,
                    });
                }
                out.fall = Some(st);
            }
            ClosureRun::Transaction => {
                let ev = EvRef::new(EvData {
                    loc: loc.clone(),
                    text: text.to_string(),
                    describe: "transaction".into(),
                    phrase: "commits the transaction".into(),
                    via: self.via.clone(),
                    dispatch: self.dispatch.clone(),
                    capped: false,
                });
                let tx = param.map(|p| fr.val(p));
                let failed_before = st.failed.clone();
                if let Some(tx) = tx {
                    st.txs.insert(
                        tx,
                        Tx {
                            begin: Some(ev.clone()),
                            writes: Vec::new(),
                            open: true,
                            idle: false,
                            outbox: false,
                            nonidem: List::default(),
                            known: false,
                            non_delete: false,
                        },
                    );
                }
                let o = self.run(body, st, fr);
                let mut ok = o.fall;
                if let Some(s) = o.ret {
                    join_opt(&mut ok, s);
                }
                let mut fall = None;
                if let Some(mut s) = ok {
                    if let Some(tx) = tx {
                        self.commit(&mut s, tx, ev.clone());
                    }
                    join_opt(&mut fall, s);
                }
                if let Some(mut s) = o.ret_err {
                    if let Some(tx) = tx {
                        s.txs.remove(&tx);
                    }
                    join_opt(&mut fall, error_result(s, &failed_before));
                }
                out.fall = fall;
            }
        }
        out
    }

    pub(super) fn call(&mut self, e: &'c Event, c: &'c Call, st: State, fr: &Frame<'c>) -> Outcome {
        let mut out = Outcome::default();
        let Some((cands, resolved)) = self.inlined_callees(c, fr) else {
            // Unknown callee (or too deep, or the entry's budget of calls is spent):
            // closures handed to it run at the call.
            return self.run_handed_closures(c, st, fr);
        };
        if cands.is_empty() {
            out.fall = Some(st);
            return out;
        }
        let mut fall = None;
        let mut split: Option<(Option<State>, Option<State>)> = None;
        let single = cands.len() == 1;
        let failed_before = st.failed.clone();
        let mut st = Some(st);
        let n = cands.len();
        for (k, idx) in cands.into_iter().enumerate() {
            // The last callee takes the state itself (a copy costs its size).
            let input = if k + 1 == n { st.take() } else { st.clone() }
                .expect("taken only by the last callee");
            let callee = &self.krate.functions[idx];
            let seen = self.call_contexts.entry(idx).or_default();
            if input.broker_open.is_some() {
                seen.in_broker_transaction = true;
            } else {
                seen.outside = true;
            }
            let id = self.next_frame;
            self.next_frame += 1;
            let caller = &self.krate.functions[fr.fn_idx];
            let frame = callee_frame((caller, callee), c, fr, id, idx);
            self.stack.push(idx);
            self.via.push(e.loc.clone());
            // One of several implementations a call on a receiver value reaches.
            let chosen = match (&c.receiver, &callee.self_type) {
                (Some(r), Some(t)) if resolved > 1 => {
                    let (act, v) = fr.val(*r);
                    self.dispatch.push((act, v, t.clone()));
                    true
                }
                _ => false,
            };
            let mut o = self.run(&callee.body, input, &frame);
            if chosen {
                self.dispatch.pop();
            }
            self.via.pop();
            self.stack.pop();
            drop_open_transactions(&mut o, id, c.returns_tx.map(|v| fr.val(v)));
            if let Some(before) = &failed_before {
                retire_on_every_exit(&mut o, before);
            }
            let exit = callee_exit(o, c, single, &failed_before, &mut out.ret_err);
            // For a `ResultBranch` whose scrutinee this call is.
            match &mut split {
                None => split = Some((exit.ok_part, exit.err_part)),
                Some((o, e)) => {
                    if let Some(s) = exit.ok_part {
                        join_opt(o, s);
                    }
                    if let Some(s) = exit.err_part {
                        join_opt(e, s);
                    }
                }
            }
            self.continue_after_call(e, c, idx, exit.cont, &mut fall);
        }
        out.fall = fall;
        self.split = if single
            && split
                .as_ref()
                .is_some_and(|(o, e)| o.is_none() && e.is_none())
        {
            // (`ok_is_fall`: no copy was made of the success state.)
            Some(Split::Fall)
        } else {
            split.map(|oe| Split::Apart(Box::new(oe)))
        };
        out
    }

    /// The functions of the crate the call `c` is inlined into: `None` when it is
    /// not followed (no callee resolved outside the call stack, the stack too deep,
    /// or the entry's budget of calls spent); else those worth running, which may be
    /// none; with how many functions the call resolves to (several: a call on a
    /// receiver of a trait reaching each implementation).
    fn inlined_callees(&self, c: &Call, fr: &Frame<'c>) -> Option<(Vec<usize>, usize)> {
        let caller = &self.krate.functions[fr.fn_idx];
        let cands: Vec<usize> = self
            .resolver
            .resolve(caller, c)
            .into_iter()
            .filter(|i| !self.stack.contains(i))
            .collect();
        if cands.is_empty()
            || self.stack.len() > MAX_CALL_DEPTH
            || self.next_frame > MAX_INLINED_CALLS
        {
            return None;
        }
        // Callees that reach no delivery event change nothing: not worth inlining,
        // unless the call hands them a closure (written here, or a closure parameter
        // of this frame passed on: it may hold the effect).
        let forwards = c
            .receiver
            .iter()
            .chain(c.args.iter().flatten())
            .any(|a| fr.closures.contains_key(a));
        let resolved = cands.len();
        Some((
            cands
                .into_iter()
                .filter(|&i| self.reach[i] || !c.closures.is_empty() || forwards)
                .collect(),
            resolved,
        ))
    }

    /// A call not followed: the closures handed to it run at the call, in order.
    fn run_handed_closures(&mut self, c: &'c Call, st: State, fr: &Frame<'c>) -> Outcome {
        let mut out = Outcome::default();
        let mut cur = Some(st);
        for (_, n) in &c.closures {
            let Some(s) = cur.take() else { break };
            let o = self.run(n, s, fr);
            cur = o.fall;
        }
        out.fall = cur;
        out
    }

    /// The caller's path after the callee `idx` of the call `e`: the failed entries
    /// of a batch response it returns and the caller leaves unread, and the claims
    /// it returns and the caller drops; then joined into `fall`.
    fn continue_after_call(
        &mut self,
        e: &'c Event,
        c: &Call,
        idx: usize,
        mut cont: Option<State>,
        fall: &mut Option<State>,
    ) {
        let callee = &self.krate.functions[idx];
        // The callee returns a batch's response and the caller does not read its
        // failed entries: after the call they may have failed unseen.
        if c.entries_unread && !callee.returns_batches.is_empty() {
            if let Some(s) = &mut cont {
                self.returned_batches(e, idx, s);
            }
        }
        if let Some(mut s) = cont {
            // The callee returns its claim's result and the caller drops it: the
            // claim gates nothing (an unchecked claim).
            if c.result_unused && !callee.returns_claims.is_empty() {
                let claims: Vec<EvRef> = s
                    .writes
                    .iter()
                    .filter(|w| callee.returns_claims.contains(&w.ev.loc))
                    .map(|w| w.ev.clone())
                    .collect();
                s.unchecked.extend(claims.iter().cloned());
            }
            join_opt(fall, s);
        }
    }

    /// The batches the callee `idx` returns the response of, unread at the call `e`:
    /// their failures on the path after the call, seen through the call.
    fn returned_batches(&mut self, e: &'c Event, idx: usize, st: &mut State) {
        let callee = &self.krate.functions[idx];
        self.via.push(e.loc.clone());
        for b in callee.body.each_event() {
            if !callee.returns_batches.contains(&b.loc) {
                continue;
            }
            let ev = self.evref(b);
            self.returned_unread.insert(ev);
            self.entries_unread(b, st, &b.kind, false);
        }
        self.via.pop();
    }
}

/// The frame of the callee `idx` (activation `id`) of the call `c`: its parameters
/// bound to the caller's values, the closures handed to it (written at the call, or
/// the caller's closure parameters passed on), and where its arguments come from.
fn callee_frame<'c>(
    (caller, callee): (&crate::ir::Function, &crate::ir::Function),
    c: &'c Call,
    fr: &Frame<'c>,
    id: u32,
    idx: usize,
) -> Frame<'c> {
    let mut map = HashMap::default();
    let mut closures = HashMap::default();
    let mut actuals: Vec<Option<ValueId>> = Vec::new();
    let mut origins = HashMap::default();
    let mut rows: HashMap<ValueId, Vec<String>> = HashMap::default();
    let mut fields = HashMap::default();
    let mut stores = HashMap::default();
    let offset = usize::from(callee.has_self);
    if callee.has_self {
        actuals.push(c.receiver);
    }
    actuals.extend(c.args.iter().copied());
    for (i, (p, a)) in callee.params.iter().zip(actuals).enumerate() {
        let Some(p) = p else { continue };
        let local = i
            .checked_sub(offset)
            .and_then(|j| c.origins.get(j).copied())
            .unwrap_or_default();
        let origin = match a {
            Some(a) => fr.origin(a, local),
            None => local,
        };
        if origin != crate::ir::Origin::Unknown {
            origins.insert(*p, origin);
        }
        // The rows the argument is taken from, here or (a parameter) in the caller's caller.
        let mut from: Vec<String> = i
            .checked_sub(offset)
            .and_then(|j| c.rows.get(j).cloned())
            .unwrap_or_default();
        if let Some(up) = a.and_then(|a| fr.rows.get(&a)) {
            from.extend(
                up.iter()
                    .filter(|t| !from.contains(t))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
        }
        if !from.is_empty() {
            rows.insert(*p, from);
        }
        // A store lent to the parameter: as the caller's own caller lent it, or as
        // the caller holds it.
        let lent = i
            .checked_sub(offset)
            .and_then(|j| c.stores.get(j).copied().flatten());
        if let Some(store) = a.and_then(|a| fr.stores.get(&a).copied()).or(lent) {
            stores.insert(*p, store);
        }
        if let Some(a) = a {
            map.insert(*p, fr.val(a));
            passed_fields(caller, fr, (*p, a), &mut fields);
            // A closure parameter passed on to the next callee.
            if let Some(cl) = fr.closures.get(&a) {
                closures.insert(*p, cl.clone());
            }
        }
        if let Some((_, n)) = c.closures.iter().find(|(j, _)| j + offset == i) {
            closures.insert(*p, Rc::new((n, fr.clone())));
        }
    }
    // The callee's reads of its parameters' fields are the caller's values of them.
    for (b, name, v) in &callee.fields {
        if let Some(val) = fields.get(&(*b, name.clone())) {
            map.entry(*v).or_insert(*val);
        }
    }
    Frame {
        id,
        fn_idx: idx,
        map,
        closures,
        origins,
        rows,
        fields,
        stores,
    }
}

/// The fields of the caller's argument `a` given for the parameter `p` (the values a
/// struct literal gave them, or the caller's reads of them, or, `a` a parameter of the
/// caller, its own caller's), as the fields of `p`.
fn passed_fields(
    caller: &crate::ir::Function,
    fr: &Frame<'_>,
    (p, a): (ValueId, ValueId),
    fields: &mut HashMap<(ValueId, String), Val>,
) {
    for (b, name, v) in &caller.fields {
        if *b == a {
            fields.insert((p, name.clone()), fr.val(*v));
        }
    }
    for ((b, name), val) in &fr.fields {
        if *b == a {
            fields.entry((p, name.clone())).or_insert(*val);
        }
    }
}

/// Transactions the callee (activation `id`) began and left open are dropped when
/// it returns (rolled back): their writes never become durable. But a callee that
/// returns a transaction (`-> Result<Transaction<..>>`) hands the one it left open
/// to the caller's value `handed`, with its writes (a claim made in it).
fn drop_open_transactions(o: &mut Outcome, id: u32, handed: Option<Val>) {
    for s in [&mut o.fall, &mut o.ret, &mut o.ret_err]
        .into_iter()
        .flatten()
    {
        let dropped: Vec<Val> = s
            .txs
            .iter()
            .filter(|((f, _), t)| *f == id && t.open)
            .map(|(k, _)| *k)
            .collect();
        if dropped.is_empty() {
            continue;
        }
        if let (Some(to), [one]) = (handed, dropped.as_slice()) {
            hand_over(s, *one, to);
            continue;
        }
        s.txs.retain(|k, _| !dropped.contains(k));
        // Their writes (claims included) never happened.
        let gone: Vec<EvRef> = s
            .writes
            .iter()
            .filter(|w| w.tx.is_some_and(|t| dropped.contains(&t)))
            .map(|w| w.ev.clone())
            .collect();
        s.writes.retain(|w| !gone.contains(&w.ev));
        s.unchecked.retain(|c| !gone.contains(c));
    }
}

/// The open transaction `from` becomes the caller's value `to`.
fn hand_over(s: &mut State, from: Val, to: Val) {
    if let Some(t) = s.txs.remove(&from) {
        s.txs.insert(to, t);
    }
    let moved = |x: Option<Val>| if x == Some(from) { Some(to) } else { x };
    s.writes = std::mem::take(&mut s.writes)
        .into_iter()
        .map(|mut w| {
            w.tx = moved(w.tx);
            w
        })
        .collect();
    s.retiring = std::mem::take(&mut s.retiring)
        .into_iter()
        .map(|mut r| {
            r.tx = moved(r.tx);
            r
        })
        .collect();
}

/// What one inlined callee leaves its caller.
struct CalleeExit {
    /// The caller's path after the call: the callee's success, and its error when
    /// the caller handles it there.
    cont: Option<State>,
    /// The success state apart, for a `ResultBranch` on the call (`None` when it is
    /// `cont` itself: one callee whose error the caller does not see here).
    ok_part: Option<State>,
    /// The error state handled at the call, for the same `ResultBranch`.
    err_part: Option<State>,
}

/// Sorts the callee's exits for the call `c`: returns and fall-through go on after
/// the call; an error return is propagated (`?`, joined into `propagated`) or goes
/// on failed. `failed_before` is the failure the caller's path carried into the call.
fn callee_exit(
    o: Outcome,
    c: &Call,
    single: bool,
    failed_before: &Option<state::Failure>,
    propagated: &mut Option<State>,
) -> CalleeExit {
    let mut cont = o.fall;
    if let Some(s) = o.ret {
        join_opt(&mut cont, s);
    }
    // What the callee's last operation failed with is not the call's outcome.
    if let Some(s) = &mut cont {
        s.cause = None;
    }
    // One callee whose error is not handled here: the success continuation
    // is the state after the call (no copy).
    let ok_is_fall = single && (o.ret_err.is_none() || c.propagates_err);
    let ok_part = if ok_is_fall { None } else { cont.clone() };
    // A callee that caught an effect's failure and returned a value the caller
    // reads (`let sent: bool = self.publish(..).await; if !sent { … }`) has told
    // it: the caller's own test decides. One whose result is dropped (`Ok(())`
    // after logging, `helper(..).await?;`) hides the failure.
    if !c.result_unused {
        if let Some(s) = &mut cont {
            if s.failed != *failed_before && s.failed.as_ref().is_some_and(|f| f.told) {
                s.failed.clone_from(failed_before);
            }
        }
    }
    let mut err_part = None;
    if let Some(mut s) = o.ret_err {
        // An error return abandons the callee's Kafka transaction (it is aborted
        // or never committed); it does not stay open in the caller.
        s.broker_open = None;
        if c.propagates_err {
            s.cause = None;
            join_opt(propagated, s);
        } else {
            // The callee failed because an effect failed: the caller's error
            // handling right after the call decides whether its path goes on
            // failed (an ack after a failure).
            let s = error_result(s, failed_before);
            err_part = Some(s.clone());
            join_opt(&mut cont, s);
        }
    }
    CalleeExit {
        cont,
        ok_part,
        err_part,
    }
}

/// A callee that writes the progress of the rows whose publish failed (`before`'s
/// effect, whatever its loops noted of it since) on
/// one of its paths is the relay's marking step for them. Where it returns before
/// that write (a connection it could not get, an early `?`), the rows stay unmarked,
/// and a later write of the same table in the caller (a clean-up of other rows) is
/// still not their progress record: the tables count as retired on every exit.
fn retire_on_every_exit(o: &mut Outcome, before: &state::Failure) {
    let mut marked: Vec<String> = Vec::new();
    for s in [&o.fall, &o.ret, &o.ret_err].into_iter().flatten() {
        let Some(f) = s.failed.as_ref().filter(|f| f.effect == before.effect) else {
            continue;
        };
        for t in &f.progressed {
            if !before.progressed.contains(t) && !marked.contains(t) {
                marked.push(t.clone());
            }
        }
    }
    if marked.is_empty() {
        return;
    }
    for s in [&mut o.fall, &mut o.ret, &mut o.ret_err]
        .into_iter()
        .flatten()
    {
        if let Some(f) = s.failed.as_mut().filter(|f| f.effect == before.effect) {
            for t in &marked {
                if !f.progressed.contains(t) {
                    f.progressed.push(t.clone());
                }
            }
        }
    }
}
