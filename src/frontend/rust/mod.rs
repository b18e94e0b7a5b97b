//! Rust front end: parses a crate's files with syn (positions kept through
//! proc-macro2's `span-locations`), indexes its items (structs and their field types,
//! function signatures, string constants, `use` imports), and lowers every function,
//! method, closure and async block to the delivery model.
//!
//! A crate's files are handled on one thread (syn trees are not `Send`); the caller
//! runs crates in parallel on threads with large stacks.

mod chain;
pub mod guard;
mod index;
pub mod lambda;
pub mod lex;
pub(crate) mod lower;
pub mod retention;
pub mod scan;
pub mod schema_literals;
mod session;
pub mod sql;
/// The item visits of a visitor that walks a file's functions by name (`Type::method`
/// inside an `impl`, modules pushed on `module`), skipping test items unless
/// `include_tests`; the visitor's own `in_fn(name, body, visit)` does the rest.
macro_rules! visit_named_fns {
    () => {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            if self.include_tests || !is_test_attr(&f.attrs) {
                self.in_fn(f.sig.ident.to_string(), &f.block, |v| {
                    syn::visit::visit_item_fn(v, f)
                });
            }
        }
        fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
            if self.include_tests || !is_test_attr(&i.attrs) {
                let outer = std::mem::replace(&mut self.self_ty, super::type_name(&i.self_ty));
                syn::visit::visit_item_impl(self, i);
                self.self_ty = outer;
            }
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            if self.include_tests || !is_test_attr(&f.attrs) {
                let name = match &self.self_ty {
                    Some(t) => format!("{t}::{}", f.sig.ident),
                    None => f.sig.ident.to_string(),
                };
                self.in_fn(name, &f.block, |v| syn::visit::visit_impl_item_fn(v, f));
            }
        }
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            if self.include_tests || !is_test_attr(&m.attrs) {
                self.module.push(m.ident.to_string());
                syn::visit::visit_item_mod(self, m);
                self.module.pop();
            }
        }
    };
}

/// Every identifier in a node's tokens (keywords included), in order, through groups.
pub(crate) fn idents_of(node: &(impl quote::ToTokens + ?Sized)) -> Vec<String> {
    fn collect(ts: proc_macro2::TokenStream, out: &mut Vec<String>) {
        for t in ts {
            match t {
                proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
                proc_macro2::TokenTree::Group(g) => collect(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    collect(node.to_token_stream(), &mut out);
    out
}

mod received;
pub(crate) mod stored;
pub mod text;
mod worker;
use index::{collect_names, collect_sigs, FieldMap, IndexCx};
mod types;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{mpsc, Arc};

use syn::spanned::Spanned;

use crate::apis::Apis;
use crate::diagnostic::InputError;
use crate::ir::{Crate, Function};
use crate::source::SourceFile;
use crate::support::cpu::{timed, untimed, Phase};

pub use guard::{MAX_CHAIN, MAX_NESTING, MAX_PREFIX_RUN, MAX_TOKENS};
pub(crate) use lower::links_untyped_receiver;
pub use session::{with_front_end, CrateFrontEnd, Lazy};
pub use types::TypeInfo;
pub(crate) use types::{
    constructed_role, is_wrapper, resolve_path, role_of_resolved, segments, type_info, type_name,
};

/// Signature of a function of the crate, for call resolution and result roles.
#[derive(Clone, Debug)]
pub struct FnSig {
    pub self_type: Option<String>,
    pub trait_name: Option<String>,
    pub module: Vec<String>,
    pub ret: TypeInfo,
    /// The function makes a fresh id (`Uuid::new_v4()`) and returns a value: where,
    /// and the call as written (fresh ids per attempt are followed into helpers).
    pub returns_fresh: Option<(crate::ir::Loc, String)>,
    /// The function makes a client whose requests carry an idempotency key (a
    /// pack's `keys_requests`) and returns a value: the client it returns is keyed.
    pub returns_keyed: bool,
    /// The string the function returns, when the code fixes it (SQL held by an
    /// accessor or a constant).
    pub returns_text: Option<ReturnedText>,
    /// A method that stores one of its parameters in a field of `self` (a setter
    /// such as `fn on(&mut self, subject: &str, f: F)` filling `self.routes`):
    /// the field, the parameter's place (`self` not counted), and how many
    /// arguments the stored callable takes when a forwarding closure calls it
    /// (`move |b| Box::pin(f(b))`) ([`stored::stored_param`]).
    pub stores_param: Option<(String, usize, Option<usize>)>,
    /// The function returns messages a pack's receive call gave it (a receive
    /// helper, [`received::returned_messages`]), or one's ack token: their role,
    /// empty when the pack names none. A call to it is a receive in its caller.
    pub returns_received: Option<String>,
    /// The tables whose rows the function returns as it read them (`let rows =
    /// sqlx::query_as("SELECT .. FROM outbox ..").fetch_all(..).await?; Ok(rows)`):
    /// what a caller takes from it is taken from those rows ([`index::returned_rows`]).
    pub returns_rows: Vec<String>,
    /// The places of the parameters (the receiver is place 0) whose value the body
    /// only logs: a batch's response handed to one has its failed entries unread
    /// ([`lower::logged_params`]).
    pub logs_params: Vec<usize>,
}

/// A string a function returns: SQL written in its body, a constant by name, or a
/// field of `self` (an accessor, `fn insert(&self) -> &str { &self.insert }`),
/// whose text the type's constructors give ([`CrateIndex::consts`], key
/// `Type.field`).
#[derive(Clone, Debug, PartialEq)]
pub enum ReturnedText {
    Lit(String),
    Const(String),
    Field(String),
}

/// The crate-wide facts lowering needs about items in other files.
#[derive(Clone, Debug, Default)]
pub struct CrateIndex {
    pub type_names: HashSet<String>,
    /// The crate's type aliases without generic parameters, by name: the type's
    /// text (`type Router = HashMap<String, Arc<dyn Handler>>`), read for what it is.
    pub aliases: HashMap<String, String>,
    pub traits: HashSet<String>,
    /// The crate's outcome enums: an enum with a variant that carries an error (a
    /// field of a type named `Error` or `…Error`) beside one that does not, by name:
    /// each variant, and whether it is the failure side (`Outcome::Failed(e)` read
    /// as `Err(e)`, `Outcome::Applied` as `Ok(..)`).
    pub outcomes: HashMap<String, HashMap<String, bool>>,
    /// The crate's error enums' variants that wrap the error of a library the packs
    /// know (`Db(#[from] sqlx::Error)`, `Http(reqwest::Error)`), by enum: an arm
    /// taking such a variant whole (`Err(StoreError::Db(e))`) takes every failure of
    /// that library's calls, not one chosen error.
    pub effect_errors: HashMap<String, HashSet<String>>,
    pub fields: HashMap<String, HashMap<String, TypeInfo>>,
    /// Whether a struct of the crate has a field holding closures
    /// ([`stored::is_slot`]), set with `fields`: the stored-closure pass runs only then.
    pub has_slots: bool,
    pub fns: HashMap<String, Vec<FnSig>>,
    /// String constants and statics by name, and the SQL the crate's struct
    /// literals put in a field, by `Type.field` (empty: literals disagree).
    pub consts: HashMap<String, String>,
    /// The unit's re-exports across crates (`Roots::reexports`).
    pub reexports: Vec<(Vec<String>, Vec<String>)>,
    /// The functions whose result a serverless batch handler returns, directly or
    /// through one more such function: name -> owners ([`lambda::ResultSites`]).
    pub batch_returned: lambda::BatchReturned,
}

/// `use` imports of one file: local name -> full path.
pub type UseMap = HashMap<String, Vec<String>>;

pub struct CrateOutput {
    pub krate: Crate,
    pub errors: Vec<InputError>,
    pub analyzed: usize,
    /// The files lowered (their models are in `krate`), each with the test items it
    /// left out.
    pub lowered: Vec<(String, usize)>,
    pub skipped_tests: usize,
    /// Dedup retention, topic retention and subscriptions (the dedup window against the
    /// replay window).
    pub retention: crate::ir::RetentionFacts,
    /// The crate-wide facts lowering used (types, fields, signatures).
    pub index: Arc<CrateIndex>,
    /// Files not parsed that declare a type whose fields lowering read.
    pub undeclared_fields: Vec<String>,
}

struct Parsed<'a> {
    file: &'a SourceFile,
    /// Line starts of the file, for positions (every phase uses them).
    lines: crate::support::lines::LineIndex<'a>,
    ast: syn::File,
    uses: UseMap,
    module: Vec<String>,
    /// Where the bodies parsed since the last lowering open (line, 0-based column).
    new_bodies: HashSet<(usize, usize)>,
}

impl Parsed<'_> {
    fn file_ast(&self) -> retention::FileAst<'_> {
        retention::FileAst {
            file: self.file,
            ast: &self.ast,
            lines: &self.lines,
        }
    }
}

/// What lowering a crate reads besides its files: the API knowledge, the texts
/// `include_str!` may name, and whether test code is analyzed.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub apis: &'a Apis,
    pub included: &'a text::Included<'a>,
    pub include_tests: bool,
    /// The dependencies analyzed with the crate (docs/what-is-analyzed.md): crate key -> the module
    /// path its files sit below (the name the crate imports it by).
    pub roots: &'a Roots,
    pub hooks: &'a crate::support::DevHooks,
    /// Told of each file as it is read (parsed, refused, or scanned and declared
    /// without being parsed), from whichever thread read it: the driver's progress.
    /// A file may be told of more than once (declared, then parsed), and the unit's
    /// dependencies' files are told of too.
    pub file_read: Option<&'a (dyn Fn(&SourceFile) + Sync)>,
}

/// Where a unit's dependencies sit in its module tree.
#[derive(Clone, Debug, Default)]
pub struct Roots {
    /// Crate key of a dependency -> the module path its items are reached by.
    pub modules: HashMap<String, Vec<String>>,
    /// The re-exports across the unit's crates (`pub use notify::mailer;` in a
    /// facade): a path below the first reaches what the same path below the second
    /// names (`ir::Crate::reexports`).
    pub reexports: Vec<(Vec<String>, Vec<String>)>,
}

/// Module path of a file of an analysis unit: a dependency's files sit below the
/// name the unit imports it by (`store::orders` for `store`'s `src/orders.rs`).
pub(crate) fn file_module(roots: &Roots, f: &SourceFile) -> Vec<String> {
    let mut m = roots.modules.get(&f.crate_key).cloned().unwrap_or_default();
    m.extend(module_path(&f.crate_key, &f.path));
    m
}

/// Parses and lowers the Rust files of one crate, on this thread.
pub fn lower_crate(
    key: &str,
    files: &[&SourceFile],
    apis: &Apis,
    include_tests: bool,
) -> CrateOutput {
    let included = text::Included::default();
    let roots = Roots::default();
    let hooks = crate::support::DevHooks::default();
    let inputs = Inputs {
        apis,
        included: &included,
        include_tests,
        roots: &roots,
        hooks: &hooks,
        file_read: None,
    };
    with_front_end(key, inputs, 1, |fe| {
        fe.add(files);
        fe.lower()
    })
}

/// The files of a crate without those of the test modules its files declare out of
/// line (`#[cfg(test)] mod tests;` in `src/queue.rs`: `src/queue/tests.rs` or
/// `src/queue/tests/mod.rs`, and every file under `src/queue/tests/`; from `lib.rs`,
/// `main.rs` or `mod.rs`, beside it). A declaration that cannot be placed this way
/// (`#[path]`, a binary's root) leaves the files analyzed.
pub fn without_test_modules(files: Vec<&SourceFile>) -> Vec<&SourceFile> {
    let mut test_paths: Vec<String> = Vec::new();
    let mut test_dirs: Vec<String> = Vec::new();
    for f in &files {
        for name in scan::test_module_decls(&f.text) {
            let (dir, file) = f.path.rsplit_once('/').unwrap_or(("", f.path.as_str()));
            let stem = file.strip_suffix(".rs").unwrap_or(file);
            let base = match (stem, dir) {
                ("lib" | "main" | "mod", "") => String::new(),
                ("lib" | "main" | "mod", _) => format!("{dir}/"),
                (_, "") => format!("{stem}/"),
                _ => format!("{dir}/{stem}/"),
            };
            test_paths.push(format!("{base}{name}.rs"));
            test_dirs.push(format!("{base}{name}/"));
        }
    }
    if test_paths.is_empty() {
        return files;
    }
    files
        .into_iter()
        .filter(|f| {
            !test_paths.contains(&f.path) && !test_dirs.iter().any(|d| f.path.starts_with(d))
        })
        .collect()
}

/// Module path of a file inside its crate: `src/handlers/orders.rs` -> `handlers::orders`.
pub(crate) fn module_path(crate_key: &str, path: &str) -> Vec<String> {
    let rel = path
        .strip_prefix(crate_key)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(path);
    let rel = rel.strip_prefix("src/").unwrap_or(rel);
    let rel = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut segs: Vec<String> = rel
        .split('/')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    if matches!(
        segs.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segs.pop();
    }
    segs
}

/// The file's `use` imports, inline modules' included (test modules' only with the
/// tests: their imports do not reach the code around them).
fn collect_uses(items: &[syn::Item], include_tests: bool, uses: &mut UseMap) {
    fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, uses: &mut UseMap) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, uses);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let mut full = prefix.clone();
                if name != "self" {
                    full.push(name.clone());
                }
                let local = if name == "self" {
                    prefix.last().cloned().unwrap_or_default()
                } else {
                    name
                };
                uses.insert(local, full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                uses.insert(r.rename.to_string(), full);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    walk(t, prefix, uses);
                }
            }
            // `use fred::prelude::*;`: kept under `fred::prelude::*` (no name has a
            // `*`), for the types of another crate it may bring in ([`glob_brings`]).
            // Kept under `path::*` (never a name the code writes): the crates whose
            // items a glob brings, and the crate's own modules (a query DSL's
            // `use crate::schema::orders::dsl::*`).
            syn::UseTree::Glob(_) => {
                if !prefix.is_empty() {
                    uses.insert(format!("{}::*", prefix.join("::")), prefix.clone());
                }
            }
        }
    }
    for item in items {
        match item {
            syn::Item::Use(u) => walk(&u.tree, &mut Vec::new(), uses),
            syn::Item::Mod(m) if include_tests || !is_test_attr(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    collect_uses(inner, include_tests, uses);
                }
            }
            _ => {}
        }
    }
}

/// Whether a glob import of the file (`use fred::prelude::*;`, kept by
/// [`collect_uses`]) is from one of `crates` (and, when `modules` are given, through
/// one of them): an unqualified name the crate does not declare may be its type.
pub(crate) fn glob_brings(uses: &UseMap, crates: &[String], modules: &[String]) -> bool {
    uses.iter().any(|(k, p)| {
        k.ends_with('*')
            && p.first().is_some_and(|c| crates.contains(c))
            && (modules.is_empty() || p.iter().any(|m| modules.contains(m)))
    })
}

/// A pattern without its type ascription (`res: Result<_, E>` is `res`).
pub(crate) fn untyped(mut pat: &syn::Pat) -> &syn::Pat {
    while let syn::Pat::Type(t) = pat {
        pat = &t.pat;
    }
    pat
}

/// True for `#[test]`, `#[tokio::test]`, `#[cfg(test)]` and similar.
pub(crate) fn is_test_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        if path.segments.last().is_some_and(|s| s.ident == "test") {
            return true;
        }
        // `cfg(P)` where P never holds outside tests: `test`, `all(test, unix)`;
        // not `not(test)` (code for everything but tests) nor `any(test, ..)`.
        path.is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|p| cfg_without_test(&p) == Some(false))
    })
}

/// The value of a `cfg` predicate where `test` is off and every other option is
/// unknown (`None`).
fn cfg_without_test(p: &syn::Meta) -> Option<bool> {
    match p {
        syn::Meta::Path(path) => path.is_ident("test").then_some(false),
        syn::Meta::NameValue(_) => None,
        syn::Meta::List(list) => {
            let args = list
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .ok()?;
            let args: Vec<Option<bool>> = args.iter().map(cfg_without_test).collect();
            scan::cfg_combine(&list.path.get_ident()?.to_string(), &args)
        }
    }
}

/// The last segment of the trait an `impl` block implements, if any.
pub(crate) fn impl_trait_name(imp: &syn::ItemImpl) -> Option<String> {
    imp.trait_
        .as_ref()
        .and_then(|(_, p, _)| p.segments.last().map(|s| s.ident.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths() {
        assert_eq!(
            module_path("svc", "svc/src/handlers/orders.rs"),
            vec!["handlers", "orders"]
        );
        assert_eq!(module_path("svc", "svc/src/db/mod.rs"), vec!["db"]);
        assert!(module_path("svc", "svc/src/main.rs").is_empty());
        assert!(module_path("x.rs", "x.rs").is_empty());
    }

    #[test]
    fn type_roles_follow_imports() {
        let apis = Apis::builtin();
        let index = CrateIndex::default();
        let mut uses = UseMap::new();
        uses.insert("Client".into(), vec!["aws_sdk_sqs".into(), "Client".into()]);
        let ty: syn::Type = syn::parse_str("&Client").unwrap();
        assert_eq!(
            type_info(&apis, &uses, &index, &ty, None).role.as_deref(),
            Some("sqs.client")
        );
        let ty: syn::Type = syn::parse_str("Arc<Mutex<StreamConsumer>>").unwrap();
        assert_eq!(
            type_info(&apis, &UseMap::new(), &index, &ty, None)
                .role
                .as_deref(),
            Some("kafka.consumer")
        );
        let ty: syn::Type = syn::parse_str("Client").unwrap();
        assert_eq!(
            type_info(&apis, &UseMap::new(), &index, &ty, None).role,
            None
        );
        // `use fred::prelude::*;` brings fred's client types, not another crate's.
        let mut globbed = UseMap::new();
        let file: syn::File = syn::parse_str("use fred::prelude::*; use std::io::*;").unwrap();
        collect_uses(&file.items, false, &mut globbed);
        let ty: syn::Type = syn::parse_str("RedisClient").unwrap();
        assert_eq!(
            type_info(&apis, &globbed, &index, &ty, None)
                .role
                .as_deref(),
            Some("fred.client")
        );
        let ty: syn::Type = syn::parse_str("StreamConsumer").unwrap();
        let crate_types = CrateIndex {
            type_names: ["RedisClient".to_string()].into_iter().collect(),
            ..CrateIndex::default()
        };
        let ty2: syn::Type = syn::parse_str("RedisClient").unwrap();
        assert_eq!(
            type_info(&apis, &globbed, &crate_types, &ty2, None).role,
            None,
            "the crate's own type of that name"
        );
        assert_eq!(
            type_info(&apis, &UseMap::new(), &index, &ty, None)
                .role
                .as_deref(),
            Some("kafka.consumer")
        );
    }

    /// The ranges `scan::ignored_ranges` blanks are doc comments or insides of
    /// module-level items that `is_test_attr` (which every phase follows) takes for
    /// tests, and parsing the blanked text gives every other token at the same
    /// position: checked on this crate's own sources and fixtures, which have test
    /// items of every kind.
    #[test]
    fn blanked_ranges_are_test_items_or_docs_and_keep_every_other_position() {
        fn item_bodies(items: &[syn::Item], out: &mut Vec<(usize, usize)>) {
            let brace = |b: &syn::token::Brace| {
                let (s, e) = (b.span.open().end(), b.span.close().start());
                out_pos(s, e)
            };
            for item in items {
                match item {
                    syn::Item::Fn(f) if is_test_attr(&f.attrs) => {
                        out.push(brace(&f.block.brace_token))
                    }
                    syn::Item::Impl(i) if is_test_attr(&i.attrs) => out.push(brace(&i.brace_token)),
                    syn::Item::Mod(m) => match &m.content {
                        Some((b, _)) if is_test_attr(&m.attrs) => out.push(brace(b)),
                        Some((_, inner)) => item_bodies(inner, out),
                        None => {}
                    },
                    _ => {}
                }
            }
        }
        // (line, column) pairs packed in one number, for comparing positions.
        fn out_pos(s: proc_macro2::LineColumn, e: proc_macro2::LineColumn) -> (usize, usize) {
            (s.line << 20 | s.column, e.line << 20 | e.column)
        }
        fn tokens(ts: proc_macro2::TokenStream, out: &mut Vec<(String, usize)>) {
            for t in ts {
                let s = t.span().start();
                let at = s.line << 20 | s.column;
                match t {
                    proc_macro2::TokenTree::Group(g) => {
                        out.push((format!("{:?}", g.delimiter()), at));
                        tokens(g.stream(), out);
                    }
                    t => out.push((t.to_string(), at)),
                }
            }
        }
        let mut files = Vec::new();
        for root in ["src", "fixtures", "tests"] {
            for e in ignore::WalkBuilder::new(root).build().flatten() {
                if e.path().extension().is_some_and(|x| x == "rs") {
                    files.push(e.into_path());
                }
            }
        }
        let mut blanked_files = 0;
        for path in files {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let Ok(ast) = syn::parse_file(&text) else {
                continue;
            };
            let ranges = scan::ignored_ranges(&text, false);
            if ranges.is_empty() {
                continue;
            }
            blanked_files += 1;
            let lines = crate::support::lines::LineIndex::new(&text);
            let mut bodies = Vec::new();
            item_bodies(&ast.items, &mut bodies);
            let pos = |b: usize| {
                let (l, c) = lines.line_col(b);
                (l as usize) << 20 | (c as usize - 1)
            };
            for r in &ranges {
                let doc = ["///", "//!", "/**", "/*!"]
                    .iter()
                    .any(|d| text[r.clone()].starts_with(d));
                let r = (pos(r.start), pos(r.end));
                assert!(
                    doc || bodies.contains(&r),
                    "{}: {r:?} is not a test item's body",
                    path.display()
                );
            }
            let blanked = scan::blank(&text, &ranges);
            let mut want = Vec::new();
            tokens(text.parse().unwrap(), &mut want);
            want.retain(|(_, at)| {
                !ranges
                    .iter()
                    .any(|r| (pos(r.start)..pos(r.end)).contains(at))
            });
            let mut got = Vec::new();
            tokens(blanked.parse().unwrap(), &mut got);
            assert_eq!(got, want, "{}", path.display());
            assert!(syn::parse_file(&blanked).is_ok(), "{}", path.display());
        }
        assert!(
            blanked_files > 20,
            "only {blanked_files} files with test items"
        );
    }

    /// The lexical scan finds the body of every function the front end indexes
    /// (module level, inline modules, `impl` blocks, a trait's provided methods) and
    /// nothing else: the inside of its braces, as syn sees them, on this crate's own
    /// sources and fixtures (the bodies the prefilter may leave unparsed).
    #[test]
    fn scanned_function_bodies_are_the_indexed_functions_blocks() {
        fn blocks(items: &[syn::Item], out: &mut Vec<(u32, u32, u32, u32)>) {
            fn push(b: &syn::Block, out: &mut Vec<(u32, u32, u32, u32)>) {
                let (s, e) = (
                    b.brace_token.span.open().end(),
                    b.brace_token.span.close().start(),
                );
                out.push((
                    s.line as u32,
                    s.column as u32 + 1,
                    e.line as u32,
                    e.column as u32 + 1,
                ));
            }
            for item in items {
                match item {
                    syn::Item::Fn(f) => push(&f.block, out),
                    syn::Item::Impl(i) => {
                        for it in &i.items {
                            if let syn::ImplItem::Fn(f) = it {
                                push(&f.block, out);
                            }
                        }
                    }
                    syn::Item::Trait(t) => {
                        for it in &t.items {
                            if let syn::TraitItem::Fn(syn::TraitItemFn {
                                default: Some(b), ..
                            }) = it
                            {
                                push(b, out);
                            }
                        }
                    }
                    syn::Item::Mod(m) => {
                        if let Some((_, inner)) = &m.content {
                            blocks(inner, out);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut checked = 0;
        for root in ["src", "fixtures", "tests"] {
            for e in ignore::WalkBuilder::new(root).build().flatten() {
                if e.path().extension().is_none_or(|x| x != "rs") {
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(e.path()) else {
                    continue;
                };
                let Ok(ast) = syn::parse_file(&text) else {
                    continue;
                };
                let lines = crate::support::lines::LineIndex::new(&text);
                let mut want = Vec::new();
                blocks(&ast.items, &mut want);
                let mut got: Vec<(u32, u32, u32, u32)> = scan::scan(&text)
                    .items
                    .iter()
                    .filter_map(|f| f.body.clone())
                    .map(|r| {
                        let (a, b) = lines.line_col(r.start);
                        let (c, d) = lines.line_col(r.end);
                        (a, b, c, d)
                    })
                    .collect();
                want.sort();
                got.sort();
                assert_eq!(got, want, "{}", e.path().display());
                checked += want.len();
            }
        }
        assert!(checked > 1500, "only {checked} function bodies");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("fn f() {{ {} }}", "(".repeat(1000));
        let f = SourceFile {
            path: "deep.rs".into(),
            abs: "deep.rs".into(),
            text,
            bom: false,
            kind: crate::source::FileKind::Rust,
            crate_key: "deep.rs".into(),
            package_key: "deep.rs".into(),
        };
        assert!(session::refuse_pathological(&f).is_some());
    }
}
