//! Which function bodies of a parsed file can stay unparsed (ARCHITECTURE.md,
//! "Prefilter"): the prefilter's closure, one level down from files.
//!
//! A parsed file's functions all keep their signatures (so the crate index, call
//! resolution and every type stay exactly as with the whole file), but the body of
//! a function is parsed only when the model could need it:
//!
//! - **of its own**: its text names something that can make a delivery fact
//!   without help from elsewhere ([`Lexicon`]): an API type (the source of a
//!   role), a function or macro of an API, a method an API allows on a receiver
//!   of unknown type, a name the lowering or the retention reader starts from; or
//!   it may hold a retry loop or await a spawned task (facts by its text alone);
//! - **through the rest of the crate**: what `demand` asks of unparsed files, asked
//!   of the body (it calls a relevant function, mentions a type through which one
//!   resolves or whose fields hold a role, is a method of such a type), or the body
//!   runs a closure handed to it by a function the analysis follows.
//!
//! Every other body has no delivery event and calls nothing relevant, so that
//! leaving it out changes no model but its own (empty), and what is not parsed is
//! not lowered either: in plugin-style crates most of the code.

use std::collections::HashMap;
use std::ops::Range;

/// Sets of names looked up for every identifier of every function (fast hash).
type HashSet<T> = foldhash::HashSet<T>;

use crate::apis::Apis;
use crate::frontend::rust::lower::RetryText;
use crate::frontend::rust::retention;
use crate::frontend::rust::scan::{self, FileScan, FnItem};

use super::demand::Demand;

/// The names that make a function body worth parsing on its own.
#[derive(Debug, Default)]
pub struct Lexicon {
    /// Names that count anywhere.
    always: HashSet<String>,
    /// Names that count only in a file that also names one of these: a library
    /// type whose name other libraries share (`Context`) counts where its crate is
    /// named; a function imported from a module (`spawn` of `tokio::spawn`) where
    /// the module is.
    when: HashMap<String, Vec<String>>,
    /// Names that count in a file whose text names a key store (the retention
    /// reader's own condition, `retention::names_a_key_store`).
    key_store: HashSet<String>,
    /// The modules whose naming makes a file name a key store (`Apis::ttl_modules`).
    key_store_modules: Vec<String>,
    /// Calls whose awaited result waits for spawned tasks (`StdNames::task_joins`).
    task_joins: foldhash::HashSet<String>,
}

impl Lexicon {
    /// The lexicon of the API knowledge. A path call whose last segment is one of
    /// the packs' common names (`Apis::common`: `ClientConfig::new`) needs its type
    /// written.
    pub fn new(apis: &Apis) -> Lexicon {
        let mut lex = Lexicon::default();
        for specs in apis.types.values() {
            for spec in specs {
                for name in &spec.names {
                    if spec.unique || spec.crates.is_empty() {
                        lex.always.insert(name.clone());
                    } else {
                        lex.when_any(name, spec.crates.iter().cloned());
                    }
                }
            }
        }
        for (name, specs) in &apis.methods {
            for spec in specs {
                // Without a role, a receiver matches only these specs.
                if !spec.on.iter().any(|o| o == "?" || o == "*") || !spec.arg0_role.is_empty() {
                    continue;
                }
                if spec.arg_mentions.is_empty() {
                    lex.always.insert(name.clone());
                } else {
                    lex.always.extend(spec.arg_mentions.iter().cloned());
                }
            }
        }
        for (name, specs) in &apis.paths {
            for spec in specs {
                for p in &spec.paths {
                    let segs: Vec<&str> = p.split("::").collect();
                    if segs.last() != Some(&name.as_str()) {
                        continue;
                    }
                    match segs.len().checked_sub(2).map(|i| segs[i]) {
                        // `Type::f`: the type is written; so is `f` unless common.
                        Some(owner) if !spec.loose && owner.starts_with(char::is_uppercase) => {
                            lex.always.insert(owner.to_string());
                            if !apis.common.contains(name) {
                                lex.always.insert(name.clone());
                            }
                        }
                        // `module::f`, imported as `f` where the module is named.
                        Some(_) if !spec.loose => {
                            let modules = segs[..segs.len() - 1].iter().map(|s| s.to_string());
                            lex.when_any(name, modules);
                        }
                        _ => {
                            lex.always.insert(name.clone());
                        }
                    }
                }
            }
        }
        lex.always.extend(apis.macros.keys().cloned());
        lex.always.extend(retention::names(apis));
        lex.always.extend(apis.retry_methods.iter().cloned());
        lex.always.extend(apis.retry_arg_methods.iter().cloned());
        // A helper handed a batch's response that looks at its failed entries: the
        // index says whether it only logs them (`lower::logged_params`). The accessors
        // are common words (`records`, `failed`): they count in a file that names the
        // batch call, or the crate of a client it is called on (the response type's
        // import path names one of them).
        for (name, specs) in &apis.methods {
            for spec in specs.iter().filter(|s| !s.entry_failures.is_empty()) {
                let crates = apis
                    .types
                    .values()
                    .flatten()
                    .filter(|t| spec.on.contains(&t.role))
                    .flat_map(|t| t.crates.iter().cloned());
                let any: Vec<String> = std::iter::once(name.clone()).chain(crates).collect();
                for accessor in &spec.entry_failures {
                    lex.when_any(accessor, any.iter().cloned());
                }
            }
        }
        lex.always
            .extend(crate::frontend::rust::lower::fact_names(apis).map(str::to_string));
        // Consumer options that turn acks off; records built for a topic.
        for a in &apis.auto_ack {
            lex.always.extend(a.names().map(str::to_string));
        }
        lex.always
            .extend(apis.topics.record_types().map(str::to_string));
        lex.key_store.extend(retention::key_store_names(apis));
        lex.key_store_modules = apis.ttl_modules.clone();
        lex.task_joins = apis.std.task_joins.clone();
        lex.task_joins.extend(apis.std.stream_joins.iter().cloned());
        lex
    }

    fn when_any(&mut self, name: &str, any: impl IntoIterator<Item = String>) {
        self.when.entry(name.to_string()).or_default().extend(any);
    }

    /// Whether `name` counts in a file mentioning `idents` (and a key store).
    fn counts(&self, name: &str, idents: &foldhash::HashSet<&str>, key_store: bool) -> bool {
        self.always.contains(name)
            || (key_store && self.key_store.contains(name))
            || self
                .when
                .get(name)
                .is_some_and(|any| any.iter().any(|a| idents.contains(a.as_str())))
    }
}

/// The function bodies of a file (scanned as `scan`) that can stay unparsed at
/// first: those whose function names nothing of the lexicon, holds no loop that
/// may be a retry and awaits nothing that may be a spawned task (the lowering
/// takes `x.await` on a local of unknown type for one). Indexes into `scan.items`.
/// Test items count only with `include_tests` (else they are blanked anyway, or,
/// when the scan alone takes them for tests, parsed whole).
pub fn unneeded_bodies<'a>(
    text: &str,
    scan: &FileScan,
    lexicon: &Lexicon,
    include_tests: bool,
) -> Vec<Body<'a>> {
    let key_store = retention::names_a_key_store(&lexicon.key_store_modules, text);
    scan.items
        .iter()
        .enumerate()
        .filter(|(_, f)| include_tests || !f.test)
        .filter_map(|(item, f)| {
            let range = f.body.clone()?;
            let text = &text[f.at..range.end];
            let t = scan::item_tokens(text, &lexicon.task_joins, |id| {
                lexicon.counts(id, &scan.idents, key_store)
            });
            let keep = t.named
                || t.awaits_task
                || t.sql
                || t.loops.iter().any(|&at| may_be_retry(&text[at..]))
                || scan::may_return_text(&text[range.start - f.at..]);
            (!keep).then_some(Body {
                item,
                range,
                at: f.at,
                scan: None,
            })
        })
        .collect()
}

/// Whether the loop starting `text` (at its keyword) may be one the lowering takes
/// for a retry (`Lowerer::is_retry_loop`, which reads the loop's text): the same
/// tests on the same text, with the loop's kind and its iterated expression only
/// guessed (`for` over anything with `..`).
fn may_be_retry(text: &str) -> bool {
    let is_ident_char = |c: char| c == '_' || c.is_alphanumeric();
    let Some((header, end)) = scan::loop_extent(text) else {
        return true;
    };
    let t = RetryText::of(&text[..end]);
    if t.named {
        return true;
    }
    let header = &text[..header];
    if header.starts_with("for") {
        t.handles_err && header.contains("..")
    } else if let Some(cond) = header.strip_prefix("while") {
        // `while let` iterates.
        let while_let = cond
            .trim_start()
            .strip_prefix("let")
            .is_some_and(|rest| !rest.starts_with(is_ident_char));
        t.handles_err && t.leaves && !while_let
    } else {
        t.handles_err && t.leaves
    }
}

/// A body left unparsed, with what the demand checks read of it.
pub struct Body<'a> {
    /// Index into the file scan's items.
    pub item: usize,
    pub range: Range<usize>,
    /// Where the function's name starts (its model's location).
    pub at: usize,
    /// The function's own scan (signature and body), made when first asked.
    scan: Option<FileScan<'a>>,
}

impl<'a> Body<'a> {
    /// Whether the model needs this body, by what `d` asks of the unparsed files
    /// (when [`Demand::may_need`] its file: no body of a file that needs nothing does):
    /// it calls a relevant function by name, or it uses a value of a type through
    /// which one resolves or whose fields hold a role (a type it names, or `self`)
    /// and calls a method so named or reads such a field.
    /// `f` is the function's item in `file`, declared in module `module`.
    /// A method that may store a callable parameter in a slot
    /// ([`Demand::stores_callable`]): its signature is read again once it is parsed.
    pub fn stores_callable(&mut self, d: &Demand, text: &'a str, f: &FnItem) -> bool {
        f.has_self && !d.callables.is_empty() && d.stores_callable(self.own_scan(text))
    }

    /// A body that may fill a field a subscription reads its topics from
    /// ([`Demand::name_fields`]): its signature (the names its struct literals
    /// give) is read again once it is parsed.
    pub fn fills_name_field(&mut self, d: &Demand, text: &'a str, f: &FnItem) -> bool {
        !d.name_fields.is_empty()
            && d.fills_name_field_of(self.own_scan(text), f.self_type.into_iter())
    }

    /// The function's own scan, from its `fn` keyword (the name is no call of
    /// itself) to its body's end; made once.
    fn own_scan(&mut self, text: &'a str) -> &FileScan<'a> {
        let start = text[..self.at]
            .trim_end()
            .strip_suffix("fn")
            .map_or(self.at, str::len);
        let end = self.range.end;
        self.scan
            .get_or_insert_with(|| scan::scan(&text[start..end]))
    }

    pub fn needed(&mut self, d: &Demand, text: &'a str, f: &FnItem, module: &[String]) -> bool {
        let own = self.own_scan(text);
        let mut module = module.to_vec();
        module.extend(f.module.iter().map(|m| m.to_string()));
        if d.calls_relevant(Some(&module), own)
            || d.stores_relevant_fn(own)
            || (f.has_self && d.stores_callable(own))
        {
            return true;
        }
        // Methods a call on a value of type `t` may reach: its own, and those the
        // crate's traits provide or their impls define.
        let calls_method_of = |t: &str| {
            own.method_calls.iter().chain(&own.path_calls).any(|m| {
                d.methods_of.get(t).is_some_and(|ms| ms.contains(*m))
                    || d.trait_methods.contains(*m)
            })
        };
        let reads_field_of = |t: &str| {
            d.fields
                .get(t)
                .is_some_and(|fs| fs.iter().any(|x| own.idents.contains(x.as_str())))
        };
        own.idents
            .iter()
            .copied()
            .chain(f.self_type)
            .chain(f.trait_name)
            .filter(|t| d.types.contains(*t) || d.impl_types.contains(*t))
            .any(|t| calls_method_of(t) || reads_field_of(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon() -> Lexicon {
        Lexicon::new(&Apis::builtin())
    }

    fn unneeded(text: &str) -> Vec<String> {
        let s = scan::scan(text);
        unneeded_bodies(text, &s, &lexicon(), false)
            .into_iter()
            .map(|b| s.items[b.item].name.to_string())
            .collect()
    }

    #[test]
    fn bodies_naming_the_lexicon_are_parsed() {
        let text = r#"
use tokio::spawn;
fn plain(x: u32) -> u32 { x + 1 }
fn typed(c: &StreamConsumer) { c.recv(); }
fn in_body() { let c: BorrowedMessage = todo!(); }
fn unknown_receiver(m: M) { m.ack().await; }
fn imported() { spawn(async {}); }
fn path_type() { let c = ClientConfig::new(); }
fn common_new() { let v = Vec::new(); v.len(); }
fn record(p: P) { p.send(FutureRecord::to("t")); }
fn send_plain(tx: T) { tx.send(1); }
fn macro_sql() { query!("select 1"); }
fn subscribes(c: C) { c.subscribe(&["t"]); }
fn joins() { tokio::join!(a(), b()); }
impl S { fn method(&self) { self.x.len(); } }
trait T { fn provided(&self) { other() } fn declared(&self); }
"#;
        assert_eq!(
            unneeded(text),
            // `send_plain`: a `send` on a receiver of unknown type may hand a value to
            // a worker over an in-process channel (runtime.toml `channel_send`).
            ["plain", "common_new", "joins", "method", "provided"]
        );
    }

    #[test]
    fn bodies_giving_sql_text_to_the_index_are_parsed() {
        let text = r##"
impl Q {
    fn new(t: &str) -> Self { Self { insert: format!("INSERT INTO {} (id) VALUES ($1)", t) } }
    fn raw() -> Self { Self { delete: r#"
        DELETE FROM t"#.into() } }
    fn escaped() -> &'static str { "\n  update t set a = 1" }
    fn included() -> String { include_str!("q.sql").to_string() }
    fn insert(&self) -> &str { &self.insert }
    fn sql(&self) -> &str { self.sql.as_str() }
    fn named() -> &'static str { SQL }
    fn prose() -> String { format!("Inserted {} rows", 1) }
    fn computed(&self) -> usize { self.a.len() + 1 }
    fn call(&self) -> String { self.sql.replace("a", "b") }
}
"##;
        assert_eq!(unneeded(text), ["prose", "computed", "call"]);
    }

    #[test]
    fn names_of_other_libraries_count_where_their_crate_is_named() {
        // `Context` is async-nats' only where async_nats is named; `random` is
        // `rand::random` only where its module is.
        let plain = "fn f(c: Context) { c.get(); }\nfn g() -> u64 { random() }";
        assert_eq!(unneeded(plain), ["f", "g"]);
        let named = format!("use async_nats::jetstream::Context;\nuse rand::random;\n{plain}");
        assert!(unneeded(&named).is_empty());
    }

    #[test]
    fn awaits_that_may_wait_for_a_task_are_parsed() {
        let text = r#"
async fn handle(h: H) { h.await; }
async fn path() { a::b.await; }
async fn paren(x: X) { (x).await; }
async fn joins(hs: Vec<H>) { join_all(hs).await; }
async fn next(set: S) { set.join_next().await; }
async fn called() { fetch(1).await; }
async fn method(c: C) { c.get().await; }
async fn field(&self) { self.fut.await; }
async fn returned(x: X) -> Y { return (x).await; }
"#;
        assert_eq!(unneeded(text), ["called", "method", "field"]);
    }

    #[test]
    fn loops_that_may_be_retries_are_parsed() {
        let text = r#"
fn retries() { loop { match f() { Ok(v) => break v, Err(e) => log(e) } } }
fn attempts() { for attempt in 0..3 { if g().is_ok() { return; } } }
fn ranged() { for i in 0..n { if let Err(e) = h(i) { warn(e) } } }
fn iterates() { for x in xs.iter() { if let Err(e) = h(x) { warn(e) } } }
fn counts() { let mut n = 0; while n < 10 { n += 1; } }
fn waits() { while let Some(x) = rx.next() { handle(x); } }
fn drains() { while let Some(x) = rx.next() { if let Err(e) = h(x) { break; } } }
fn polls() { while !done { if let Err(e) = h() { return; } } }
fn lets() { while letter() { if let Err(e) = h() { return; } } }
fn blocks() { while unsafe { poll() } == -1 { if last_error().kind() != Interrupted { return; } } }
"#;
        assert_eq!(unneeded(text), ["iterates", "counts", "waits", "drains"]);
    }
}
