//! Dedup retention facts of a crate (the dedup window against the replay window), from
//! its syntax trees:
//!
//! - cleanup statements on dedup tables: `DELETE FROM processed_events WHERE
//!   processed_at < now() - interval '2 days'` (also `INTERVAL 2 DAY`, SQLite
//!   `datetime('now', '-2 days')`, `$1::interval` or `$1 * interval '1 day'` with the
//!   bound value, a cutoff computed in Rust: `.bind(Utc::now() - Duration::days(2))`),
//!   through sqlx, diesel `sql_query`, tokio-postgres and rusqlite;
//!   cleanups of tables whose name says nothing are kept apart with their table
//!   (`RetentionFacts::cleanups`): a dedup store's if the analysis sees a claim into it;
//! - Redis dedup claims with a TTL: `cmd("SET")…arg("NX").arg("EX").arg(86400)`,
//!   `set_options(.., SetOptions::default().conditional_set(ExistenceCheck::NX)
//!   .with_expiration(SetExpiry::EX(86400)))`, `set_nx` then `expire` in one function;
//! - constants holding the retention (`const DEDUP_TTL_SECS: u64 = 86_400;`,
//!   `Duration::from_secs(..)`, `Duration::from_days(..)`, `"2 days"`), followed from
//!   where they are bound;
//! - topic retention set in code (rdkafka `NewTopic::new("t", ..).set("retention.ms", ..)`)
//!   and the topics the crate's consumers `subscribe` to.
//!
//! Each retention keeps the location of the literal that holds it (the constant's
//! value when it comes from a constant). What cannot be evaluated is left out.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use proc_macro2::Span as PmSpan;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Token};

use super::{is_test_attr, sql};
use crate::apis::{Apis, ArgWord, ArgWordSpec, Binds, CallSpec, MacroKind, TtlForm, TtlUnit};
use crate::diagnostic::Span;
use crate::support::duration::{self, DAY, HOUR, MINUTE, SECOND, WEEK};

mod expiry;
mod interval;
mod values;
use crate::ir::{DedupRetention, Loc, ReplayWindow, RetentionFacts, SqlKind, Tables};
use crate::source::SourceFile;
use crate::support::lines::line_col;
use crate::support::lines::LineIndex;
use interval::{interval_in, Interval};
pub use values::{file_consts, ConstItem, Consts};
use values::{ConstDef, Evaled, Val};

/// The call names this reader starts from, from the API knowledge: the calls whose
/// statement it reads with their bound values (a root call `query(..)`, a method
/// `.execute(..)`, a macro, the packs' `binds`), the topics created and subscribed
/// to (`NewTopic`, `.subscribe(..)`, the packs' `[topics]`). A function body naming
/// none of them, nor the API knowledge, gives no retention fact (`driver::lazy`
/// leaves it unparsed).
pub fn names(apis: &Apis) -> Vec<String> {
    let bound = |m: &foldhash::HashMap<String, Vec<CallSpec>>, b: Binds| {
        m.iter()
            .filter(move |(_, specs)| specs.iter().any(|s| s.binds == Some(b)))
            .map(|(name, _)| name.clone())
            .collect::<Vec<_>>()
    };
    let created = apis.topics.create.iter().filter_map(|p| {
        let segs: Vec<&str> = p.split("::").collect();
        segs.len().checked_sub(2).map(|i| segs[i].to_string())
    });
    let mut out = bound(&apis.paths, Binds::BindCalls);
    out.extend(bound(&apis.methods, Binds::Arg1));
    out.extend(created);
    out.extend(apis.topics.subscribe.iter().cloned());
    out
}

/// The key-store call names this reader starts from, in a file whose text names one
/// of `Apis::ttl_modules`: the calls that give a key its time to live (the packs'
/// `[[ttls]]`) and the commands that set a key (`cmd("SET")`).
pub fn key_store_names(apis: &Apis) -> Vec<String> {
    let mut out: Vec<String> = apis.ttls.keys().cloned().collect();
    out.extend(
        apis.paths
            .iter()
            .filter(|(_, specs)| specs.iter().any(is_set_command))
            .map(|(name, _)| name.clone()),
    );
    out
}

/// A command builder that sets a key (`redis::cmd("SET")`): its `arg0_str` says which
/// first arguments.
fn is_set_command(spec: &CallSpec) -> bool {
    spec.sql.as_deref() == Some("key_set")
}

/// A method or path call (of `specs`) whose statement this reader reads with the
/// values bound as `binds` say.
fn binds(specs: Option<&Vec<CallSpec>>, binds: Binds) -> bool {
    specs.is_some_and(|v| v.iter().any(|s| s.binds == Some(binds)))
}

/// One parsed file of the crate.
pub struct FileAst<'a> {
    pub file: &'a SourceFile,
    pub ast: &'a syn::File,
    pub lines: &'a LineIndex<'a>,
}

struct Cx<'a> {
    apis: &'a Apis,
    consts: &'a HashMap<String, ConstDef>,
    str_consts: &'a HashMap<String, (String, Loc)>,
    tables: &'a Tables,
}

fn span_of(lines: &LineIndex, start: PmSpan, end: PmSpan) -> Span {
    lines.span(start, end)
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        Expr::Reference(r) => strip(&r.expr),
        Expr::Cast(c) => strip(&c.expr),
        _ => e,
    }
}

fn last_seg(p: &syn::Path) -> String {
    p.segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

fn lit_str(e: &Expr) -> Option<&syn::LitStr> {
    match strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s),
        _ => None,
    }
}

/// A SQL string: its value, the span of its literal, and the literal's source text
/// with its start offset (to point inside it).
struct SqlLit {
    text: String,
    loc: Loc,
    source: Option<(usize, String)>,
}

struct FileCx<'a> {
    path: Arc<str>,
    lines: &'a LineIndex<'a>,
    text: &'a str,
}

impl FileCx<'_> {
    fn loc(&self, start: PmSpan, end: PmSpan) -> Loc {
        Loc {
            path: self.path.clone(),
            span: span_of(self.lines, start, end),
        }
    }

    fn source(&self, s: PmSpan) -> Option<(usize, String)> {
        let sp = span_of(self.lines, s, s);
        let t = self.text.get(sp.byte_start..sp.byte_end)?;
        Some((sp.byte_start, t.to_string()))
    }

    /// The location of `needle` inside a literal, or the literal's.
    fn inside(&self, lit: &SqlLit, needle: &str, fallback: &Loc) -> Loc {
        let Some((start, src)) = &lit.source else {
            return fallback.clone();
        };
        match src.find(needle) {
            Some(i) => {
                let b0 = start + i;
                let b1 = b0 + needle.len();
                let (line, column) = line_col(self.text, b0);
                let (end_line, end_column) = line_col(self.text, b1);
                Loc {
                    path: self.path.clone(),
                    span: Span {
                        line,
                        column,
                        end_line,
                        end_column,
                        byte_start: b0,
                        byte_end: b1,
                    },
                }
            }
            None => fallback.clone(),
        }
    }
}

/// What one file contributes: its facts and its SQL sites, in the order met.
#[derive(Default)]
pub struct FileRetention {
    facts: RetentionFacts,
    sites: Vec<((Arc<str>, Span), Site)>,
    expiries: Expiries,
}

/// Dedup rows written with an expiry, and sweeps that delete the expired ones (they
/// may sit in different files): table and column, to pair them in [`finish`].
#[derive(Default)]
struct Expiries {
    /// (table, column) -> the expiry's length and where it is written.
    set: Vec<((String, String), u64, Loc)>,
    /// (table, column) -> the sweep statement.
    swept: Vec<((String, String), Loc)>,
}

/// Walks one file for retention facts.
pub fn walk_file(
    f: &FileAst,
    consts: &Consts,
    tables: &Tables,
    apis: &Apis,
    include_tests: bool,
) -> FileRetention {
    let cx = Cx {
        apis,
        consts: &consts.consts,
        str_consts: &consts.str_consts,
        tables,
    };
    let fc = FileCx {
        path: Arc::from(f.file.path.as_str()),
        lines: f.lines,
        text: &f.file.text,
    };
    let mut out = FileRetention {
        facts: RetentionFacts::default(),
        sites: Vec::new(),
        expiries: Expiries::default(),
    };
    let mut v = Walker {
        cx: &cx,
        fc: &fc,
        include_tests,
        key_store: names_a_key_store(&apis.ttl_modules, &f.file.text),
        out: &mut out.facts,
        sites: &mut out.sites,
        expiries: &mut out.expiries,
        frames: vec![Frame::default()],
        read_chains: HashSet::new(),
    };
    v.visit_file(f.ast);
    v.end_frame();
    out
}

/// Whether `text` names one of `modules` (`Apis::ttl_modules`, the modules of the
/// packs with `[[ttls]]`): the key-store calls count there only.
pub fn names_a_key_store(modules: &[String], text: &str) -> bool {
    modules.iter().any(|m| text.contains(m.as_str()))
}

/// The crate's facts from its files' parts, in path order.
pub fn finish(parts: Vec<FileRetention>) -> RetentionFacts {
    let mut out = RetentionFacts::default();
    let mut sql_sites: BTreeMap<(Arc<str>, Span), Site> = BTreeMap::new();
    let mut expiries = Expiries::default();
    for part in parts {
        expiries.set.extend(part.expiries.set);
        expiries.swept.extend(part.expiries.swept);
        out.dedup.extend(part.facts.dedup);
        out.windows.extend(part.facts.windows);
        out.consumer_topics.extend(part.facts.consumer_topics);
        for (key, site) in part.sites {
            // A statement met again without binds adds nothing; otherwise the
            // statement with the most binds (and a retention) wins.
            if site.binds == 0 && sql_sites.contains_key(&key) {
                continue;
            }
            match sql_sites.get(&key) {
                Some(old)
                    if old.binds > site.binds
                        || (old.retention.is_some() && site.retention.is_none()) => {}
                _ => {
                    sql_sites.insert(key, site);
                }
            }
        }
    }
    for site in sql_sites.into_values() {
        match (site.retention, site.unnamed) {
            (Some(r), None) => out.dedup.push(r),
            (Some(r), Some(table)) => out.cleanups.push((table, r)),
            (None, _) => {}
        }
    }
    // A row written to expire, swept once expired: the expiry is the retention.
    for (key, sweep) in &expiries.swept {
        for (_, millis, loc) in expiries.set.iter().filter(|(k, _, _)| k == key) {
            out.dedup.push(DedupRetention {
                millis: *millis,
                loc: loc.clone(),
                write: sweep.clone(),
                store: format!("the expiry of {} rows", crate::diagnostic::quoted(&key.0)),
            });
        }
    }
    out.dedup.sort_by(|a, b| a.loc.cmp(&b.loc));
    out.dedup
        .dedup_by(|a, b| a.loc == b.loc && a.write == b.write);
    out.consumer_topics.sort();
    out.consumer_topics.dedup();
    out
}

/// A SQL statement found at a call, with what is bound to it.
pub struct Site {
    binds: usize,
    retention: Option<DedupRetention>,
    /// The table cleaned, when its name does not mark it as a dedup record.
    unnamed: Option<String>,
}

/// Redis calls of one function, to pair `set_nx` with a later `expire`.
#[derive(Default)]
struct Frame {
    set_nx: Vec<(String, Loc)>,
    expires: Vec<(String, Evaled, Loc, u64)>,
}

struct Walker<'a, 'b> {
    cx: &'a Cx<'a>,
    fc: &'a FileCx<'a>,
    include_tests: bool,
    /// The file names a key store (`names_a_key_store`).
    key_store: bool,
    out: &'b mut RetentionFacts,
    sites: &'b mut Vec<((Arc<str>, Span), Site)>,
    expiries: &'b mut Expiries,
    frames: Vec<Frame>,
    /// The method calls inside a chain already read whole from its outermost call
    /// (by address): `a.b().c()` is read once, at `.c()`, not again at `.b()`.
    read_chains: HashSet<usize>,
}

const DEDUP_KEY_WORDS: &[&str] = &["processed", "dedup", "idempot", "seen", "inbox"];

fn key_text(e: &Expr) -> String {
    quote::quote!(#e)
        .to_string()
        .replace(' ', "")
        .trim_start_matches('&')
        .to_string()
}

impl Cx<'_> {
    /// A key that names no message: a string literal or a constant of the crate
    /// (`SET lease:reserver <owner> NX EX 30`). A claim on it is a lock or a lease
    /// (SPEC §2), not a dedup record.
    fn fixed_key(&self, e: &Expr) -> bool {
        match strip(e) {
            Expr::Lit(_) => true,
            Expr::Path(p) => {
                p.path.segments.len() == 1 && self.consts.contains_key(&last_seg(&p.path))
            }
            _ => false,
        }
    }
}

fn dedup_key(e: &Expr) -> bool {
    let t = key_text(e).to_ascii_lowercase();
    DEDUP_KEY_WORDS.iter().any(|w| t.contains(w))
}

impl Walker<'_, '_> {
    fn end_frame(&mut self) {
        let Some(frame) = self.frames.pop() else {
            return;
        };
        let single = frame.set_nx.len() == 1 && frame.expires.len() == 1;
        for (key, write) in &frame.set_nx {
            for (ekey, ev, eloc, per) in &frame.expires {
                if single || ekey == key {
                    self.retention(
                        ev,
                        Some(*per),
                        eloc,
                        write,
                        "the `SET NX` dedup claim".into(),
                    );
                }
            }
        }
    }

    fn retention(&mut self, ev: &Evaled, unit: Option<u64>, at: &Loc, write: &Loc, store: String) {
        let Some(millis) = ev.millis(unit) else {
            return;
        };
        self.out.dedup.push(DedupRetention {
            millis,
            loc: ev.from_const.clone().unwrap_or_else(|| at.clone()),
            write: write.clone(),
            store,
        });
    }

    fn expr_loc(&self, e: &Expr) -> Loc {
        self.fc.loc(e.span(), e.span())
    }

    /// A method chain, outermost call first, and its root expression.
    fn chain(m: &syn::ExprMethodCall) -> (Vec<&syn::ExprMethodCall>, &Expr) {
        let mut calls = vec![m];
        let mut cur = &*m.receiver;
        loop {
            match strip(cur) {
                Expr::MethodCall(inner) => {
                    calls.push(inner);
                    cur = &inner.receiver;
                }
                Expr::Await(a) => cur = &a.base,
                Expr::Try(t) => cur = &t.expr,
                _ => break,
            }
        }
        (calls, cur)
    }

    fn method_chain(&mut self, m: &syn::ExprMethodCall) {
        let (calls, root) = Self::chain(m);
        let root_call = match strip(root) {
            Expr::Call(c) => Some(c),
            _ => None,
        };
        let root_fn = root_call
            .and_then(|c| match strip(&c.func) {
                Expr::Path(p) => Some(
                    p.path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
            .unwrap_or_default();
        let root_name = root_fn.last().map(String::as_str).unwrap_or("");

        let apis = self.cx.apis;
        // sqlx / diesel: `query("…").bind(a).bind(b)`.
        if let Some(c) = root_call.filter(|_| binds(apis.paths.get(root_name), Binds::BindCalls)) {
            if let Some(sql) = c.args.first().and_then(|a| self.cx.sql_text(a, self.fc)) {
                let binds: Vec<&Expr> = calls
                    .iter()
                    .rev()
                    .filter(|mc| mc.method == "bind")
                    .filter_map(|mc| mc.args.last())
                    .collect();
                let fc = self.fc;
                self.sql_site(&sql, &binds, &|| fc.loc(c.span(), c.span()));
            }
        }
        // tokio-postgres / rusqlite: `client.execute("…", &[&a])`.
        for mc in &calls {
            let name = mc.method.to_string();
            if binds(apis.methods.get(&name), Binds::Arg1) && !mc.args.is_empty() {
                if let Some(sql) = self.cx.sql_text(&mc.args[0], self.fc) {
                    let owned = (mc.args.get(1))
                        .map(|a| param_list(apis, a))
                        .unwrap_or_default();
                    let binds: Vec<&Expr> = owned.iter().collect();
                    let fc = self.fc;
                    self.sql_site(&sql, &binds, &|| fc.loc(mc.method.span(), mc.span()));
                }
            }
        }

        // Redis `cmd("SET")…arg("NX").arg("EX").arg(ttl)`.
        let commands = apis.paths.get(root_name).into_iter().flatten();
        let mut sets = commands.filter(|s| is_set_command(s));
        if self.key_store {
            let arg0 = root_call
                .and_then(|c| c.args.first())
                .and_then(lit_str)
                .map(|s| s.value());
            let is_set = arg0.is_some_and(|a| {
                sets.any(|s| s.arg0_str.iter().any(|x| x.eq_ignore_ascii_case(&a)))
            });
            if is_set {
                let args: Vec<&Expr> = calls
                    .iter()
                    .rev()
                    .filter(|mc| mc.method == "arg")
                    .filter_map(|mc| mc.args.first())
                    .collect();
                let word = |e: &Expr| lit_str(e).and_then(|s| arg_word(apis, &s.value()));
                let nx = args
                    .iter()
                    .any(|a| word(a).is_some_and(|w| w.means == ArgWord::OnlyIfAbsent));
                let keyed = args.first().is_some_and(|k| dedup_key(k));
                let fixed = args.first().is_some_and(|k| self.cx.fixed_key(k));
                if (nx || keyed) && !fixed {
                    let write = self.expr_loc(root);
                    for (i, a) in args.iter().enumerate() {
                        let Some(per) = word(a).and_then(duration_unit) else {
                            continue;
                        };
                        if let Some(v) = args.get(i + 1) {
                            if let Some(ev) = self.cx.eval(v, 0) {
                                let at = self.expr_loc(v);
                                self.retention(
                                    &ev,
                                    Some(per),
                                    &at,
                                    &write,
                                    "the Redis dedup claim".into(),
                                );
                            }
                        }
                    }
                }
            }
        }

        // rdkafka admin: `NewTopic::new("orders", ..).set("retention.ms", "604800000")`.
        let creates = apis.topics.create.iter().any(|p| {
            let ps: Vec<&str> = p.split("::").collect();
            root_fn.len() >= ps.len() && root_fn[root_fn.len() - ps.len()..] == ps[..]
        });
        if creates {
            let topic = root_call
                .and_then(|c| c.args.first())
                .and_then(|a| self.cx.sql_text(a, self.fc))
                .map(|l| l.text);
            if let Some(topic) = topic {
                for mc in calls
                    .iter()
                    .filter(|mc| mc.args.len() == 2)
                    .filter(|mc| apis.topics.configure.iter().any(|m| mc.method == m))
                {
                    let key = lit_str(&mc.args[0]).map(|s| s.value());
                    let per = match key.as_deref() {
                        Some("retention.ms") => 1,
                        Some("retention.minutes") => MINUTE,
                        Some("retention.hours") => HOUR,
                        _ => continue,
                    };
                    if let Some(ev) = self.cx.eval(&mc.args[1], 0) {
                        if let Some(millis) = ev.millis(Some(per)) {
                            let loc = ev
                                .from_const
                                .clone()
                                .unwrap_or_else(|| self.expr_loc(&mc.args[1]));
                            self.out.windows.push(ReplayWindow {
                                topic: Some(topic.clone()),
                                millis,
                                loc,
                                source: crate::diagnostic::quoted(&key.unwrap_or_default()),
                            });
                        }
                    }
                }
            }
        }
    }

    fn single_method(&mut self, m: &syn::ExprMethodCall) {
        let name = m.method.to_string();
        let apis = self.cx.apis;
        if apis.topics.subscribe.contains(&name) {
            for a in &m.args {
                self.topics_in(a);
            }
        }
        if !self.key_store {
            return;
        }
        let Some(ttl) = apis.ttls.get(&name) else {
            return;
        };
        let per = ttl.unit.map_or(1, TtlUnit::millis);
        let args: Vec<&Expr> = m.args.iter().collect();
        let write = self.fc.loc(m.method.span(), m.span());
        match (ttl.form, args.as_slice()) {
            (TtlForm::Options, [key, _, opts]) => {
                let mut o = OptsScan {
                    apis,
                    nx: false,
                    expiry: None,
                };
                o.visit_expr(opts);
                if (o.nx || dedup_key(key)) && !self.cx.fixed_key(key) {
                    if let Some((e, per)) = o.expiry {
                        if let Some(ev) = self.cx.eval(&e, 0) {
                            let at = self.expr_loc(&e);
                            self.retention(
                                &ev,
                                Some(per),
                                &at,
                                &write,
                                "the Redis dedup claim".into(),
                            );
                        }
                    }
                }
            }
            (TtlForm::ValueTtl, [key, _, ttl]) if dedup_key(key) => {
                if let Some(ev) = self.cx.eval(ttl, 0) {
                    let at = self.expr_loc(ttl);
                    self.retention(&ev, Some(per), &at, &write, "the Redis dedup record".into());
                }
            }
            (TtlForm::Claim, [key, _]) if !self.cx.fixed_key(key) => {
                if let Some(f) = self.frames.last_mut() {
                    f.set_nx.push((key_text(key), write));
                }
            }
            (TtlForm::KeyTtl, [key, ttl]) => {
                if let Some(ev) = self.cx.eval(ttl, 0) {
                    let at = self.expr_loc(ttl);
                    if let Some(f) = self.frames.last_mut() {
                        f.expires.push((key_text(key), ev, at, per));
                    }
                }
            }
            _ => {}
        }
    }

    fn topics_in(&mut self, e: &Expr) {
        match strip(e) {
            Expr::Array(a) => a.elems.iter().for_each(|x| self.topics_in(x)),
            Expr::Lit(_) | Expr::Path(_) => {
                if let Some(l) = self.cx.sql_text(e, self.fc) {
                    self.out.consumer_topics.push(l.text);
                }
            }
            _ => {}
        }
    }

    /// A SQL statement with its bound values: a cleanup of a dedup table?
    /// `write`: where the statement runs, found only for a cleanup (the spans of a
    /// long call chain cost a walk of its tokens).
    fn sql_site(&mut self, lit: &SqlLit, binds: &[&Expr], write: &dyn Fn() -> Loc) {
        let key = (lit.loc.path.clone(), lit.loc.span);
        if binds.is_empty() && self.sites.iter().any(|(k, _)| *k == key) {
            return;
        }
        let facts = sql::facts(&lit.text);
        if facts.kind != SqlKind::Write {
            return;
        }
        let named = facts
            .tables
            .iter()
            .find(|t| self.cx.tables.is_dedup(t))
            .cloned();
        // A cleanup of a table its name does not mark: kept with the table, a dedup
        // store if the crate claims into it.
        let Some(table) = named.clone().or_else(|| {
            (facts.verb == "DELETE")
                .then(|| facts.tables.first().cloned())
                .flatten()
        }) else {
            return;
        };
        if facts.verb == "INSERT" {
            self.expiry_set(lit, binds, &table);
            return;
        }
        if facts.verb != "DELETE" {
            return;
        }
        let write = &write();
        if let (Some(_), Some(column)) = (&named, expiry::swept_column(&lit.text)) {
            self.expiries
                .swept
                .push(((table.clone(), column), write.clone()));
        }
        let store = format!("the cleanup of {}", crate::diagnostic::quoted(&table));
        let retention = self
            .cleanup_retention(lit, binds)
            .map(|(millis, loc)| DedupRetention {
                millis,
                loc,
                write: write.clone(),
                store,
            });
        let site = Site {
            binds: binds.len(),
            retention,
            unnamed: named.is_none().then_some(table),
        };
        self.sites.push((key, site));
    }

    /// An INSERT into a dedup table whose values set a column to a time ahead:
    /// `now() + interval '2 days'`, or a bound `Utc::now() + Duration::days(2)`.
    fn expiry_set(&mut self, lit: &SqlLit, binds: &[&Expr], table: &str) {
        let Some(values) = expiry::insert_values(&lit.text) else {
            return;
        };
        for (column, value, _) in values {
            let lower = value.to_ascii_lowercase();
            let found = if lower.contains('+') && lower.contains("interval") {
                match interval::interval_in(value) {
                    Some(Interval::Literal { millis, text }) => {
                        Some((millis, self.fc.inside(lit, &text, &lit.loc)))
                    }
                    Some(Interval::Bind { index, unit }) => binds
                        .get(index.saturating_sub(1))
                        .and_then(|b| self.cx.eval(b, 0).map(|ev| (b, ev)))
                        .and_then(|(b, ev)| {
                            let millis = ev.millis(unit)?;
                            Some((millis, ev.from_const.unwrap_or_else(|| self.expr_loc(b))))
                        }),
                    _ => None,
                }
            } else {
                // `$3` bound to `Utc::now() + d`.
                lower
                    .trim()
                    .strip_prefix('$')
                    .and_then(|n| n.parse::<usize>().ok())
                    .and_then(|n| binds.get(n.checked_sub(1)?))
                    .and_then(|b| self.offset(b, true))
            };
            if let Some((millis, loc)) = found {
                self.expiries
                    .set
                    .push(((table.to_string(), column), millis, loc));
            }
        }
    }

    /// `now + d` (`ahead`) or `now - d`: `d` and where it is written.
    fn offset(&self, e: &Expr, ahead: bool) -> Option<(u64, Loc)> {
        let Expr::Binary(bin) = strip(e) else {
            return None;
        };
        match bin.op {
            syn::BinOp::Add(_) if ahead => {}
            syn::BinOp::Sub(_) if !ahead => {}
            _ => return None,
        }
        let ev = self.cx.eval(&bin.right, 0)?;
        let Val::Ms(ms) = ev.val else { return None };
        Some((
            ms,
            ev.from_const
                .clone()
                .unwrap_or_else(|| self.expr_loc(&bin.right)),
        ))
    }

    fn cleanup_retention(&self, lit: &SqlLit, binds: &[&Expr]) -> Option<(u64, Loc)> {
        let sql = &lit.text;
        match interval_in(sql)? {
            Interval::Literal { millis, text } => {
                Some((millis, self.fc.inside(lit, &text, &lit.loc)))
            }
            Interval::Bind { index, unit } => {
                let b = binds.get(index.checked_sub(1)?)?;
                let ev = self.cx.eval(b, 0)?;
                let millis = ev.millis(unit)?;
                Some((
                    millis,
                    ev.from_const.clone().unwrap_or_else(|| self.expr_loc(b)),
                ))
            }
            Interval::Cutoff => binds.iter().find_map(|b| self.offset(b, false)),
        }
    }
}

/// `&[&a, &b]`, `params![a, b]`, `[a, b]`, `(a, b)`: the values bound, in order.
/// The values of a parameter list: `&[&a, &b]`, `(a, b)`, or a list macro
/// (`params![a, b]`, the packs' `list` macros).
fn param_list(apis: &Apis, e: &Expr) -> Vec<Expr> {
    match strip(e) {
        Expr::Array(a) => a.elems.iter().map(|x| strip(x).clone()).collect(),
        Expr::Tuple(t) => t.elems.iter().map(|x| strip(x).clone()).collect(),
        Expr::Macro(m) => {
            let name = m.mac.path.segments.last().map(|s| s.ident.to_string());
            if name.and_then(|n| apis.std.macro_kind(&n)) != Some(MacroKind::List) {
                return Vec::new();
            }
            let parser = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
            (m.mac.parse_body_with(parser).ok())
                .map(|p| p.into_iter().map(|x| strip(&x).clone()).collect())
                .unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

/// Finds `SetExpiry::EX(n)` / `PX(n)` and `ExistenceCheck::NX` in `SetOptions` (the
/// packs' `[[arg_words]]`).
struct OptsScan<'a> {
    apis: &'a Apis,
    nx: bool,
    expiry: Option<(Expr, u64)>,
}

impl<'ast> Visit<'ast> for OptsScan<'_> {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        if arg_word(self.apis, &last_seg(p)).is_some_and(|w| w.means == ArgWord::OnlyIfAbsent) {
            self.nx = true;
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let Expr::Path(p) = strip(&c.func) {
            let per = arg_word(self.apis, &last_seg(&p.path)).and_then(duration_unit);
            if let (Some(per), Some(a)) = (per, c.args.first()) {
                self.expiry = Some((a.clone(), per));
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
}

/// What a key-store command's argument word means (`NX`, `EX`), if anything.
fn arg_word<'a>(apis: &'a Apis, word: &str) -> Option<&'a ArgWordSpec> {
    apis.arg_words.get(&word.to_ascii_uppercase())
}

/// Milliseconds per unit of the duration an expiry word takes (`EX` 1000, `PX` 1).
fn duration_unit(w: &ArgWordSpec) -> Option<u64> {
    match (w.means, w.unit) {
        (ArgWord::Expires, Some(unit)) => Some(unit.millis()),
        _ => None,
    }
}

impl<'ast> Visit<'ast> for Walker<'_, '_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !self.include_tests && is_test_attr(&f.attrs) {
            return;
        }
        self.frames.push(Frame::default());
        syn::visit::visit_item_fn(self, f);
        self.end_frame();
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !self.include_tests && is_test_attr(&f.attrs) {
            return;
        }
        self.frames.push(Frame::default());
        syn::visit::visit_impl_item_fn(self, f);
        self.end_frame();
    }
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !self.include_tests && is_test_attr(&m.attrs) {
            return;
        }
        syn::visit::visit_item_mod(self, m);
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !self.include_tests && is_test_attr(&i.attrs) {
            return;
        }
        syn::visit::visit_item_impl(self, i);
    }
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if !self.read_chains.remove(&(std::ptr::from_ref(m) as usize)) {
            let (calls, _) = Self::chain(m);
            let inner = calls[1..].iter().map(|c| std::ptr::from_ref(*c) as usize);
            self.read_chains.extend(inner);
            self.method_chain(m);
        }
        self.single_method(m);
        syn::visit::visit_expr_method_call(self, m);
    }
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        // `sqlx::query("…")` bound later, or executed without binds.
        if let Expr::Path(p) = strip(&c.func) {
            let name = last_seg(&p.path);
            if binds(self.cx.apis.paths.get(&name), Binds::BindCalls) {
                if let Some(sql) = c.args.first().and_then(|a| self.cx.sql_text(a, self.fc)) {
                    let fc = self.fc;
                    self.sql_site(&sql, &[], &|| fc.loc(c.span(), c.span()));
                }
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // `sqlx::query!("…", a, b)`, `query_as!(Row, "…", a)`, `query_scalar!`.
        let name = last_seg(&m.path);
        if binds(self.cx.apis.macros.get(&name), Binds::AfterSql) {
            if let Ok(args) = m.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
                let args: Vec<&Expr> = args.iter().collect();
                if let Some(i) = args.iter().position(|a| lit_str(a).is_some()) {
                    if let Some(sql) = self.cx.sql_text(args[i], self.fc) {
                        let fc = self.fc;
                        let binds: Vec<&Expr> = args[i + 1..].to_vec();
                        let write = || fc.loc(m.path.span(), m.delimiter.span().close());
                        self.sql_site(&sql, &binds, &write);
                    }
                }
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

#[cfg(test)]
mod tests;
