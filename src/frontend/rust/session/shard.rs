//! One thread's part of a crate's front end: the files it parsed (their syntax
//! trees stay on it) and what each phase of [`super::CrateFrontEnd`] makes of them.

use super::*;

/// The input error for a file syn cannot parse.
fn parse_error(f: &SourceFile, e: &syn::Error) -> InputError {
    let start = e.span().start();
    InputError {
        path: f.path.clone(),
        line: Some(start.line as u32),
        column: Some(start.column as u32 + 1),
        message: format!("cannot parse Rust: {e}"),
    }
}

/// Parses the function body whose braces enclose `range` of `text` (with its doc
/// comments blanked, as [`scan::ignored_ranges`] has them), at its place in the
/// file: the lines and columns before it are padding, so that its positions are
/// those of the whole file.
/// Returns the block and its inner attributes (`#![allow(..)]`, which syn gives to
/// the function).
fn parse_body(
    text: &str,
    lines: &crate::support::lines::LineIndex,
    range: &std::ops::Range<usize>,
) -> syn::Result<(syn::Block, Vec<syn::Attribute>)> {
    use syn::parse::Parser;
    let (open, close) = (range.start - 1, range.end + 1);
    let (line, column) = lines.line_col(open);
    let inside = scan::doc_comments(&text[open..close]);
    let mut padded = String::with_capacity(line as usize + column as usize + close - open);
    padded.extend(std::iter::repeat_n('\n', line as usize - 1));
    padded.extend(std::iter::repeat_n(' ', column as usize - 1));
    padded.push_str(&scan::blank(&text[open..close], &inside));
    let parser = |input: syn::parse::ParseStream| {
        let content;
        let brace_token = syn::braced!(content in input);
        let inner = content.call(syn::Attribute::parse_inner)?;
        let stmts = content.call(syn::Block::parse_within)?;
        Ok((syn::Block { brace_token, stmts }, inner))
    };
    parser.parse_str(&padded)
}

/// Puts `body` (a block and its inner attributes) in the function of `items`
/// whose body opens at `at` (line, 0-based column); takes it when there is one.
fn put_body(
    items: &mut [syn::Item],
    at: (usize, usize),
    body: &mut Option<(syn::Block, Vec<syn::Attribute>)>,
) {
    let opens_at = |b: &syn::Block| {
        let s = b.brace_token.span.open().start();
        (s.line, s.column) == at
    };
    let put = |block: &mut syn::Block, attrs: &mut Vec<syn::Attribute>, body: &mut Option<_>| {
        if let Some((b, inner)) = std::mem::take(body) {
            *block = b;
            attrs.extend(inner);
        }
    };
    for item in items {
        match item {
            syn::Item::Fn(f) if opens_at(&f.block) => put(&mut f.block, &mut f.attrs, body),
            syn::Item::Impl(i) => {
                for it in &mut i.items {
                    match it {
                        syn::ImplItem::Fn(f) if opens_at(&f.block) => {
                            put(&mut f.block, &mut f.attrs, body)
                        }
                        _ => {}
                    }
                }
            }
            syn::Item::Trait(t) => {
                for it in &mut t.items {
                    if let syn::TraitItem::Fn(f) = it {
                        if let Some(b) = f.default.as_mut().filter(|b| opens_at(b)) {
                            put(b, &mut f.attrs, body);
                        }
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner_items)) = &mut m.content {
                    put_body(inner_items, at, body);
                }
            }
            _ => {}
        }
        if body.is_none() {
            return;
        }
    }
}

/// The files of a crate one thread parsed, and what each phase makes of them.
pub(super) struct Shard<'a> {
    pub(super) apis: &'a Apis,
    /// The texts `include_str!` may name.
    pub(super) included: &'a text::Included<'a>,
    pub(super) include_tests: bool,
    pub(super) roots: &'a Roots,
    pub(super) parsed: Vec<Parsed<'a>>,
    pub(super) errors: Vec<InputError>,
    /// Internal failures, by file: the file's part of a phase is left out, the
    /// other files go on (reported once, however many rounds run).
    pub(super) internal: std::cell::RefCell<std::collections::BTreeMap<String, String>>,
    /// `MSGAUDIT_FAULT_INJECT=suffix`: lowering a file whose path ends so panics
    /// (tests of the isolation); `oom:suffix`: it takes memory until the system
    /// refuses it (tests of running out of memory).
    pub(super) fault: Option<String>,
    /// Told of each file parsed (or refused).
    file_read: Option<&'a (dyn Fn(&SourceFile) + Sync)>,
}

impl<'a> Shard<'a> {
    pub(super) fn new(inputs: Inputs<'a>) -> Self {
        LIVE_SHARDS.with(|n| n.set(n.get() + 1));
        Shard {
            apis: inputs.apis,
            included: inputs.included,
            include_tests: inputs.include_tests,
            roots: inputs.roots,
            parsed: Vec::new(),
            errors: Vec::new(),
            internal: Default::default(),
            fault: inputs.hooks.fault_inject.clone(),
            file_read: inputs.file_read,
        }
    }

    /// Runs one file's part of a phase; a panic becomes an internal error naming
    /// the file, and an empty part. A run the system refused memory to stops here,
    /// and its unwinding is passed on (the driver names the crate's files).
    pub(super) fn isolated<T: Default>(&self, path: &str, work: impl FnOnce() -> T) -> T {
        crate::support::alloc::bail_if_exhausted();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
            Ok(v) => v,
            Err(panic) if crate::support::alloc::is_out_of_memory(&*panic) => {
                std::panic::resume_unwind(panic)
            }
            Err(panic) => {
                let what = crate::diagnostic::panic_message(&*panic);
                self.internal
                    .borrow_mut()
                    .entry(path.to_string())
                    .or_insert(what);
                T::default()
            }
        }
    }

    pub(super) fn internal_errors(&self) -> Vec<InputError> {
        self.internal
            .borrow()
            .iter()
            .map(|(path, what)| InputError {
                path: path.clone(),
                line: None,
                column: None,
                message: format!(
                    "internal error while analyzing this file ({what}); the rest of the crate is analyzed without it; please report"
                ),
            })
            .collect()
    }

    pub(super) fn add(&mut self, files: Vec<Lazy<'a>>) {
        for (f, lazy) in files {
            if let Some(err) = timed(Phase::Lexical, || refuse_pathological(f)) {
                self.errors.push(err);
            } else {
                match self.parse(f, &lazy) {
                    Some(Ok(p)) => self.parsed.push(p),
                    Some(Err(e)) => self.errors.push(e),
                    None => {}
                }
            }
            if let Some(read) = self.file_read {
                read(f);
            }
        }
    }

    /// Parses bodies left out of files of this shard (see
    /// [`CrateFrontEnd::parse_bodies`]) and puts them in their functions; returns the
    /// files where one does not parse (they are dropped, with the error).
    pub(super) fn parse_bodies(&mut self, files: Vec<Lazy<'a>>) -> Vec<String> {
        let mut failed = Vec::new();
        for (f, bodies) in files {
            let Some(at) = self.parsed.iter().position(|p| p.file.path == f.path) else {
                continue;
            };
            let mut p = self.parsed.remove(at);
            let ok = self.isolated(&f.path, || {
                for r in &bodies {
                    match timed(Phase::Parse, || parse_body(&f.text, &p.lines, r)) {
                        Ok(body) => {
                            let (line, column) = p.lines.line_col(r.start - 1);
                            let at = (line as usize, column as usize - 1);
                            let mut body = Some(body);
                            put_body(&mut p.ast.items, at, &mut body);
                            // The lexical scan and syn disagree on where a function
                            // is (a unit test checks they never do): reported as an
                            // internal error on the file, not hidden.
                            assert!(body.is_none(), "no function body opens at {line}:{column}");
                            p.new_bodies.insert(at);
                        }
                        Err(e) => return Some(parse_error(f, &e)),
                    }
                }
                None
            });
            if let Some(e) = ok {
                self.errors.push(e);
                failed.push(f.path.clone());
            } else {
                self.parsed.insert(at, p);
            }
        }
        failed
    }

    /// Parses one file with the bodies `lazy` left out; `None` after an internal
    /// failure (recorded).
    pub(super) fn parse(
        &self,
        f: &'a SourceFile,
        lazy: &[std::ops::Range<usize>],
    ) -> Option<Result<Parsed<'a>, InputError>> {
        // Test items and doc comments are ignored by every phase: they are not
        // parsed (blanked, so that every other position stays where it is); so are
        // the function bodies the model does not need.
        let parsed = self.isolated(&f.path, || {
            let blanked = timed(Phase::Lexical, || {
                let mut ranges = scan::ignored_ranges(&f.text, self.include_tests);
                if !lazy.is_empty() {
                    ranges = scan::merge_ranges(ranges, lazy);
                }
                (!ranges.is_empty()).then(|| scan::blank(&f.text, &ranges))
            });
            let text = blanked.as_deref().unwrap_or(&f.text);
            Some(timed(Phase::Parse, || syn::parse_file(text)))
        })?;
        Some(match parsed {
            Ok(ast) => {
                let mut uses = UseMap::new();
                collect_uses(&ast.items, self.include_tests, &mut uses);
                Ok(Parsed {
                    module: file_module(self.roots, f),
                    file: f,
                    lines: crate::support::lines::LineIndex::new(&f.text),
                    ast,
                    uses,
                    new_bodies: HashSet::new(),
                })
            }
            Err(e) => Err(parse_error(f, &e)),
        })
    }

    /// The names the shard's files declare (`collect_names`): types, traits,
    /// aliases and outcome enums.
    pub(super) fn names(&self) -> CrateIndex {
        let mut index = CrateIndex::default();
        for p in &self.parsed {
            let libs = (&p.uses, &self.apis.modules[..]);
            collect_names(&p.ast.items, &mut index, self.include_tests, libs);
        }
        index
    }

    pub(super) fn sigs(
        &self,
        index: &CrateIndex,
        known: &HashSet<String>,
    ) -> Vec<(String, FileSigs)> {
        self.parsed
            .iter()
            .filter(|p| !known.contains(&p.file.path))
            .map(|p| {
                let part = self.isolated(&p.file.path, || {
                    let cx = IndexCx {
                        apis: self.apis,
                        included: self.included,
                        abs: &p.file.abs,
                        uses: &p.uses,
                        index,
                        path: Arc::from(p.file.path.as_str()),
                        lines: &p.lines,
                    };
                    let mut sigs = Vec::new();
                    let mut fields = Vec::new();
                    let mut consts = Vec::new();
                    collect_sigs(
                        &cx,
                        &p.ast.items,
                        &p.module,
                        self.include_tests,
                        &mut sigs,
                        &mut fields,
                        &mut consts,
                    );
                    (sigs, fields, consts)
                });
                (p.file.path.clone(), part)
            })
            .collect()
    }

    /// Lowers the parsed files but those in `skip`; of those in `part`, only the
    /// functions whose bodies were parsed since.
    pub(super) fn lower(
        &mut self,
        index: &CrateIndex,
        skip: &HashSet<String>,
        part: &HashSet<String>,
    ) -> (Vec<LoweredFile>, Vec<InputError>, usize) {
        let fns = self
            .parsed
            .iter()
            .filter(|p| !skip.contains(&p.file.path))
            .map(|p| {
                let reads = Default::default();
                let (fns, skipped) = self.isolated(&p.file.path, || {
                    match self.fault.as_deref() {
                        Some(s)
                            if s.strip_prefix("oom:")
                                .is_some_and(|s| p.file.path.ends_with(s)) =>
                        {
                            crate::support::alloc::hog()
                        }
                        Some(s) if p.file.path.ends_with(s) => {
                            panic!("fault injected by MSGAUDIT_FAULT_INJECT")
                        }
                        _ => {}
                    }
                    let cx = lower::FileCx {
                        path: Arc::from(p.file.path.as_str()),
                        abs: &p.file.abs,
                        included: self.included,
                        apis: self.apis,
                        index,
                        uses: &p.uses,
                        lines: &p.lines,
                        module: p.module.clone(),
                        reads: &reads,
                        only: part.contains(&p.file.path).then_some(&p.new_bodies),
                    };
                    let mut out: Vec<Function> = Vec::new();
                    let skipped =
                        lower::lower_items(&cx, &p.ast.items, self.include_tests, &mut out);
                    self.lower_handed_closures(&cx, p, &mut out);
                    if index.has_slots {
                        self.lower_stored_closures(&cx, p, &mut out);
                    }
                    (out, skipped)
                });
                LoweredFile {
                    path: p.file.path.clone(),
                    fns,
                    skipped,
                    reads: reads.into_inner(),
                    part: part.contains(&p.file.path),
                }
            })
            .collect();
        for p in &mut self.parsed {
            if !skip.contains(&p.file.path) {
                p.new_bodies.clear();
            }
        }
        (fns, self.errors.clone(), self.parsed.len())
    }

    /// Lowers the closures the file hands to a job-queue worker or the serverless
    /// runtime as their handlers (`worker::handed_closures`), each named `outer::{closure}`; in a file lowered
    /// in part, those written in the functions lowered.
    fn lower_handed_closures(&self, cx: &lower::FileCx, p: &Parsed, out: &mut Vec<Function>) {
        let sl = &self.apis.serverless;
        let marks = (sl.worker.builders.iter()).chain(&sl.runtime.event_wrappers);
        if !marks.into_iter().any(|b| p.file.text.contains(b.as_str())) {
            return;
        }
        for hc in worker::handed_closures(sl, &p.uses, &p.ast.items, self.include_tests) {
            if cx.only.is_some_and(|only| !only.contains(&hc.outer_body)) {
                continue;
            }
            let from = lower_made_fn(cx, hc.module, hc.item, out);
            for f in &mut out[from..] {
                f.name = format!("{}::{{closure}}", hc.outer);
            }
        }
    }

    /// Lowers the closures the file stores in a struct's callable field
    /// (`stored::stored_closures`), each named `Type::field::{closure}`, its self type
    /// the slot `Type::field`, so a call of the field's value reaches it; in a file
    /// lowered in part, those written in the functions lowered.
    fn lower_stored_closures(&self, cx: &lower::FileCx, p: &Parsed, out: &mut Vec<Function>) {
        for sc in stored::stored_closures(
            cx.apis,
            cx.index,
            cx.reads,
            &p.ast.items,
            self.include_tests,
        ) {
            if cx.only.is_some_and(|only| !only.contains(&sc.outer_body)) {
                continue;
            }
            let from = lower_made_fn(cx, sc.module, sc.item, out);
            for f in &mut out[from..] {
                f.name = format!("{}::{}", sc.slot, stored::CLOSURE_IDENT);
                f.ident = stored::CLOSURE_IDENT.to_string();
                f.self_type = Some(sc.slot.clone());
            }
        }
    }

    pub(super) fn consts(&self) -> Vec<(String, Vec<retention::ConstItem>)> {
        self.parsed
            .iter()
            .map(|p| {
                (
                    p.file.path.clone(),
                    self.isolated(&p.file.path, || {
                        retention::file_consts(&p.file_ast(), self.include_tests)
                    }),
                )
            })
            .collect()
    }

    pub(super) fn walk(
        &self,
        consts: &[retention::ConstItem],
        tables: &crate::ir::Tables,
    ) -> Vec<(String, retention::FileRetention)> {
        let consts = retention::Consts::new(consts);
        self.parsed
            .iter()
            .map(|p| {
                (
                    p.file.path.clone(),
                    self.isolated(&p.file.path, || {
                        retention::walk_file(
                            &p.file_ast(),
                            &consts,
                            tables,
                            self.apis,
                            self.include_tests,
                        )
                    }),
                )
            })
            .collect()
    }
}

thread_local! {
    /// Shards alive on this thread. A pool thread waiting inside one crate's
    /// analysis may run another crate's whole analysis on top of it (work stealing):
    /// the positions of the outer crate's trees must outlive the inner one.
    static LIVE_SHARDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Drop for Shard<'_> {
    fn drop(&mut self) {
        self.parsed.clear();
        // Positions of the dropped trees are no longer needed on this thread, once
        // no other shard here holds trees.
        let live = LIVE_SHARDS.with(|n| {
            n.set(n.get().saturating_sub(1));
            n.get()
        });
        if live == 0 {
            proc_macro2::extra::invalidate_current_thread_spans();
        }
    }
}

/// Refuses input that would overflow the stack while it is parsed or lowered
/// (deep brackets, long runs of prefix operators, deep expression and type chains):
/// see [`guard`].
pub(in crate::frontend::rust) fn refuse_pathological(f: &SourceFile) -> Option<InputError> {
    guard::scan(&f.text).map(|r| InputError {
        path: f.path.clone(),
        line: Some(r.line),
        column: Some(r.column),
        message: r.message,
    })
}

/// Lowers a function made from a closure of the file (`item`, written in the inner
/// module `module` of the file's), as the file's functions are; returns where its
/// functions start in `out`.
fn lower_made_fn(
    cx: &lower::FileCx,
    module: Vec<String>,
    item: syn::ItemFn,
    out: &mut Vec<Function>,
) -> usize {
    // Lowered whole: the caller picked the closures of the functions lowered.
    let sub = lower::FileCx {
        only: None,
        ..cx.in_module(module)
    };
    let from = out.len();
    lower::lower_items(&sub, &[syn::Item::Fn(item)], true, out);
    from
}
