use super::declare_rule;
use super::fixes;
use super::pairs::{code, label};
use crate::analysis::flow::{called_from, relay_passes, retry_attempts, Facts, Resolver};
use crate::diagnostic::{Edit, Finding};
use crate::ir::{Callee, Crate, IdFlow};

declare_rule! {
    /// ## What it does
    ///
    /// Finds an event id, idempotency key or dedup key generated *inside* a retry
    /// scope (`Uuid::new_v4`/`now_v7`, `Ulid::new`, `rand::random`, `nanoid!`) that
    /// flows into what the retried step sends: a message key or header, an
    /// idempotency-key header, a field of the request or record, a bind parameter.
    /// Retry scopes are loops that re-run a failing step (they name attempts,
    /// retries or backoff and handle the error, in their own code: not in comments, nor
    /// in a loop nested in them, so a loop over items around an inner retry is no
    /// retry itself) and closures given to retry helpers
    /// (backoff, tokio-retry, again, retry, backon), also as a retry policy's method
    /// (again's `policy.retry(|| async { .. })`). A function a retry scope calls
    /// (`Retry::spawn(s, || self.attempt(p))`, a retry loop calling `charge(..)`),
    /// directly or through the functions it calls, runs once per attempt: an id it
    /// mints into what it sends is new on each attempt, and the finding is where it is
    /// minted. A scope that receives messages (a supervisor restarting a consumer) is
    /// no retry of one send. A relay's poll loop whose pass
    /// (with the functions it calls) re-reads rows and sends them is a retry of each
    /// row it leaves unsent: an id minted per pass, in the loop or in a function it
    /// calls, is one per attempt. It also finds a message handler
    /// that mints the key of its dedup record per delivery instead of taking it from
    /// the message, and a fresh id minted once per delivery of a received message (in
    /// the handler, or in a function a handler calls, across files and workspace
    /// crates) that a publish or an effect carries in its explicit dedup field: SQS and
    /// SNS FIFO `message_deduplication_id`, JetStream's `Nats-Msg-Id` header or
    /// `message_id`, an `Idempotency-Key` header, async-stripe's
    /// `RequestStrategy::Idempotent` (the packs' `[dedup_fields]`). A redelivered
    /// message is then republished under a new dedup id.
    ///
    /// ## Why is this bad?
    ///
    /// Deduplication recognizes a repeat by its identity. If every attempt carries a
    /// new id, the receiver (or the dedup table) sees each retry as a new event: the
    /// effect is applied **twice**. The broker's idempotent producer does not help:
    /// it deduplicates its own send retries, not a new record from the application.
    ///
    /// Boundary broken: stable event identity.
    ///
    /// ## Example
    ///
    /// ```rust
    /// for attempt in 0..5 {
    ///     let key = Uuid::new_v4().to_string();
    ///     match http.post(url).header("Idempotency-Key", &key).json(&charge).send().await {
    ///         Ok(r) if r.status().is_success() => break,
    ///         _ => tokio::time::sleep(backoff(attempt)).await,
    ///     }
    /// }
    /// ```
    ///
    /// Use instead:
    ///
    /// ```rust
    /// let key = charge.id.to_string(); // or one Uuid::new_v4() made before the loop
    /// for attempt in 0..5 {
    ///     match http.post(url).header("Idempotency-Key", &key).json(&charge).send().await {
    ///         Ok(r) if r.status().is_success() => break,
    ///         _ => tokio::time::sleep(backoff(attempt)).await,
    ///     }
    /// }
    /// ```
    ///
    /// ## Not reported
    ///
    /// - An id made once before the loop and reused by every attempt.
    /// - A fresh id that identifies nothing sent: a log field, a tracing span, a
    ///   temporary file name.
    /// - A fresh id per item of a loop that is not a retry (a batch, a consume loop),
    ///   unless a send carries it in its dedup field.
    /// - A fresh id in a handler's publish that is no dedup field: the new event's
    ///   `event_id` in the body, a message group id or key.
    /// - A dedup id derived from the received message (its id, a hash of its body).
    /// - A fresh dedup id minted by an HTTP endpoint or a timer that no handler reaches.
    pub static MA002 = {
        code: "MA002",
        name: "fresh-id-per-attempt",
        severity: Error,
        concern: EventId,
        consequence: Duplicate,
        summary: "An event id or idempotency key is generated inside a retry loop or retry closure, or per redelivery, so each attempt carries a new identity.",
        boundary: "stable event identity",
        unsafe_fix: "a fresh id bound by a single `let` at the top of a retry loop or closure, whose value is the generator call alone and uses nothing the loop or closure binds, moves to just before the statement holding the retry (the id is then made once and every attempt reuses it).",
    };
}

pub fn check(krate: &Crate, facts: &Facts) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let resolver = Resolver::new(krate);
    // A fresh id handed to one of the crate's functions counts only if that function
    // sends, writes or publishes something (a helper that only logs is clean).
    let sends = |f: &crate::ir::Function, callee: &crate::ir::Callee| {
        resolver
            .resolve_callee(f, callee)
            .iter()
            .any(|&i| facts.effectful[i])
    };
    let passes = relay_passes(krate, &resolver);
    let attempts = retry_attempts(krate, &resolver);
    let sends_through = |f: &crate::ir::Function, callee: &crate::ir::Callee| {
        resolver
            .resolve_callee(f, callee)
            .iter()
            .any(|&i| passes.sends[i])
    };
    for (i, f) in krate.functions.iter().enumerate() {
        // A relay's re-read of unsent rows is a retry of each: a fresh id minted per
        // pass, into what the pass sends, is one per attempt.
        let per_pass: Vec<IdFlow> = f
            .pass_id_flows
            .iter()
            .filter_map(|p| {
                let relay = match &p.poll {
                    Some(l) => passes
                        .loops
                        .get_key_value(l)
                        .map(|(l, t)| (l.clone(), t.clone())),
                    None => passes.per_pass[i].clone(),
                }?;
                if p.flow
                    .sink_call
                    .as_ref()
                    .is_some_and(|c| !sends_through(f, c))
                {
                    return None;
                }
                Some(IdFlow {
                    retry: Some(relay),
                    ..p.flow.clone()
                })
            })
            .collect();
        // A function a retry scope calls runs once per attempt: a fresh id it mints
        // into what it sends is new on each (`Retry::spawn(s, || self.attempt(p))`).
        let per_attempt: Vec<IdFlow> = match (&passes.per_pass[i], &attempts[i]) {
            (None, Some(scope)) => (f.pass_id_flows.iter())
                .filter(|p| p.poll.is_none())
                .map(|p| IdFlow {
                    retry: Some(scope.clone()),
                    ..p.flow.clone()
                })
                .collect(),
            _ => Vec::new(),
        };
        let flows = (f.id_flows.iter().chain(&per_attempt)).map(|x| (x, false));
        for (flow, pass) in flows.chain(per_pass.iter().map(|x| (x, true))) {
            if let Some(callee) = &flow.sink_call {
                if !sends(f, callee) {
                    continue;
                }
            }
            if let Some(existing) = out
                .iter_mut()
                .find(|x| x.path == *flow.idgen.path && x.span == flow.idgen.span)
            {
                let l = label(&flow.sink, "it also identifies this call");
                if !existing.labels.contains(&l) {
                    existing.labels.push(l);
                    existing.labels.sort();
                }
                continue;
            }
            let (message, window, mut labels) = match &flow.retry {
                Some((loc, _)) if pass => (
                    format!(
                        "{} makes a new id on every pass of the relay's poll loop, and it identifies {}",
                        code(&flow.idgen_text),
                        code(&flow.sink_text)
                    ),
                    "a row whose send failed stays unsent and is sent again on the next pass under a \
                     new identity: a send that succeeded but looked failed is applied twice"
                        .to_string(),
                    vec![label(loc, "each pass of this loop re-reads the unsent rows")],
                ),
                Some((loc, _)) => (
                    format!(
                        "{} makes a new id on every attempt of the retry, and it identifies {}",
                        code(&flow.idgen_text),
                        code(&flow.sink_text)
                    ),
                    "each retry carries a new identity, so the receiver cannot tell it from the first \
                     attempt: an attempt that succeeded but looked failed is applied twice"
                        .to_string(),
                    vec![label(loc, "the retry starts here")],
                ),
                None => (
                    format!(
                        "{} makes a new dedup key on every delivery of the message, and {} records it",
                        code(&flow.idgen_text),
                        code(&flow.sink_text)
                    ),
                    "a redelivered message gets a new key, so the dedup record never matches and the \
                     effect is applied twice"
                        .to_string(),
                    vec![label(&f.loc, "this handler runs once per delivery")],
                ),
            };
            labels.push(label(&flow.sink, "the fresh id identifies this call"));
            labels.sort();
            let fix = flow.hoist.as_ref().and_then(|h| {
                fixes::unsafe_fix(
                    format!("make {} once, before the retry", code(&flow.idgen_text)),
                    vec![
                        Some(Edit {
                            path: h.remove.path.to_string(),
                            span: h.remove.span,
                            content: String::new(),
                        }),
                        Some(Edit {
                            path: h.before.path.to_string(),
                            span: h.before.span,
                            content: h.text.clone(),
                        }),
                    ],
                )
            });
            out.push(
                MA002
                    .finding(
                        &flow.idgen,
                        message,
                        window,
                        labels,
                        "make the id once, before the retry (or take the message's own id), and reuse it on \
                         every attempt"
                            .into(),
                    )
                    .with_fix(fix),
            );
        }
    }
    dedup_per_delivery(krate, &resolver, &mut out);
    out
}

/// Fresh ids minted once per delivery of a received message (after a receive, or in
/// a function a delivery reaches) into a send's dedup field (the packs'
/// `[dedup_fields]`), directly or through a parameter the crate's function puts there.
fn dedup_per_delivery(krate: &Crate, resolver: &Resolver, out: &mut Vec<Finding>) {
    if krate.functions.iter().all(|f| f.dedup.ids.is_empty()) {
        return;
    }
    let starts: Vec<usize> = krate
        .functions
        .iter()
        .flat_map(|f| {
            f.dedup
                .delivery_calls
                .iter()
                .flat_map(|c| resolver.resolve_callee(f, c))
        })
        .collect();
    let reached = called_from(krate, resolver, starts);
    let puts = params_put(krate, resolver);
    for (i, f) in krate.functions.iter().enumerate() {
        for d in &f.dedup.ids {
            if !d.per_delivery && !reached[i] {
                continue;
            }
            let flow = &d.flow;
            if let (Some(j), Some(callee)) = (d.arg, &flow.sink_call) {
                let method = matches!(callee, Callee::Method { .. });
                let put = resolver.resolve_callee(f, callee).iter().any(|&g| {
                    let p = j + u32::from(method && krate.functions[g].has_self);
                    puts[g].contains(&p)
                });
                if !put {
                    continue;
                }
            }
            // Already reported as an id per attempt (the same generation).
            if out
                .iter()
                .any(|x| x.path == *flow.idgen.path && x.span == flow.idgen.span)
            {
                continue;
            }
            let runs = if d.per_delivery {
                "this handler runs once per delivery"
            } else {
                "a message handler calls this function once per delivery"
            };
            let mut labels = vec![
                label(&f.loc, runs),
                label(&flow.sink, "the fresh id is this send's dedup id"),
            ];
            labels.sort();
            out.push(MA002.finding(
                &flow.idgen,
                format!(
                    "{} makes a new dedup id on every delivery of the message, and {} sends it as its dedup id",
                    code(&flow.idgen_text),
                    code(&flow.sink_text)
                ),
                "a redelivered message is sent again under a new dedup id, so the receiver's \
                 deduplication cannot see the duplicate and it is applied twice"
                    .to_string(),
                labels,
                "derive the dedup id from the received message (its id, or a hash of its \
                 content), so every delivery of it sends the same one"
                    .into(),
            ));
        }
    }
}

/// The parameters each function puts in a dedup field: itself, or by passing them on
/// to a function that does (`send_event(id)` calling `publish(&c, id)`), to a fixpoint.
fn params_put(krate: &Crate, resolver: &Resolver) -> Vec<Vec<u32>> {
    let mut puts: Vec<Vec<u32>> = krate
        .functions
        .iter()
        .map(|f| f.dedup.params.clone())
        .collect();
    // Each pass, its callee resolved once: (function, parameter, callee, argument).
    let mut passes: Vec<(usize, u32, usize, u32)> = Vec::new();
    for (i, f) in krate.functions.iter().enumerate() {
        for (p, callee, j) in &f.dedup.passes {
            let method = matches!(callee, Callee::Method { .. });
            for g in resolver.resolve_callee(f, callee) {
                let arg = j + u32::from(method && krate.functions[g].has_self);
                passes.push((i, *p, g, arg));
            }
        }
    }
    loop {
        let mut changed = false;
        for &(i, p, g, arg) in &passes {
            if !puts[i].contains(&p) && puts[g].contains(&arg) {
                puts[i].push(p);
                changed = true;
            }
        }
        if !changed {
            return puts;
        }
    }
}

/// MA002 as the dispatcher runs it ([`super::Rule`]).
pub struct Check;

impl super::Rule for Check {
    fn meta(&self) -> &'static super::RuleMeta {
        &MA002
    }

    fn check_crate(&self, cx: &super::CrateInput) -> Vec<Finding> {
        check(cx.krate, cx.facts)
    }
}
