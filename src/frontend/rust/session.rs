//! The front end's session for one crate: its files parsed on shards (this thread
//! and workers, each keeping the syntax trees it parsed), indexed and lowered in
//! rounds as the driver asks, each request typed ([`CrateFrontEnd`]).

use super::*;

mod returned;
mod shard;

#[cfg(test)]
pub(super) use shard::refuse_pathological;
use shard::Shard;

/// Runs `f` with a front end for one crate whose files are parsed and lowered on
/// `shards` threads (this one and `shards - 1` more, each with a [`STACK_SIZE`]
/// stack): syntax trees cannot move between threads, so each file stays on the
/// thread that parsed it, and every phase merges its per-file results in path
/// order, so that the output does not depend on the number of shards.
///
/// [`STACK_SIZE`]: crate::support::STACK_SIZE
pub fn with_front_end<'a, R>(
    key: &'a str,
    inputs: Inputs<'a>,
    shards: usize,
    f: impl FnOnce(&mut CrateFrontEnd<'a>) -> R,
) -> R {
    std::thread::scope(|scope| {
        let mut workers = Vec::new();
        for _ in 1..shards.max(1) {
            let (job_tx, job_rx) = mpsc::channel::<Job<'a>>();
            let spawned = std::thread::Builder::new()
                .stack_size(crate::support::STACK_SIZE)
                .spawn_scoped(scope, move || {
                    let mut shard = Shard::new(inputs);
                    for job in job_rx {
                        job(&mut shard);
                    }
                });
            // Without a thread, the crate is simply analyzed on fewer.
            if spawned.is_ok() {
                workers.push(Worker {
                    tx: job_tx,
                    bytes: 0,
                });
            }
        }
        let mut fe = CrateFrontEnd {
            local: Shard::new(inputs),
            local_bytes: 0,
            workers,
            include_tests: inputs.include_tests,
            roots: inputs.roots,
            key,
            unparsed: Default::default(),
            models: BTreeMap::new(),
            sigs: BTreeMap::new(),
            sigs_names: Default::default(),
            changed: Default::default(),
            method_counts: HashMap::new(),
            owner: HashMap::new(),
            new_bodies: HashSet::new(),
            index: None,
            index_stale: true,
            file_read: inputs.file_read,
        };
        f(&mut fe)
    })
}

/// The parsed files of one crate, lowered on demand: the analysis parses the
/// files that mention what it needs and adds more when the model asks for them
/// (the prefilter, ARCHITECTURE.md).
pub struct CrateFrontEnd<'a> {
    local: Shard<'a>,
    local_bytes: usize,
    workers: Vec<Worker<'a>>,
    include_tests: bool,
    roots: &'a Roots,
    key: &'a str,
    /// Items of the files not parsed (from a lexical scan), by path: a value of a
    /// type declared there is of a crate type, and a call of a function declared
    /// there is a call into the crate, as if the file were parsed.
    unparsed: std::collections::BTreeMap<String, Unparsed>,
    /// The last model of each parsed file (for [`CrateFrontEnd::lower_new`]).
    models: BTreeMap<String, LoweredFile>,
    /// Each parsed file's signatures, fields and constants, and the crate's type and
    /// trait names they were read with (they depend on nothing else).
    sigs: BTreeMap<String, FileSigs>,
    #[allow(clippy::type_complexity)]
    sigs_names: (
        HashSet<String>,
        HashSet<String>,
        HashMap<String, HashMap<String, bool>>,
        HashMap<String, HashSet<String>>,
    ),
    /// Index keys whose entries changed since the last lowering (files parsed since),
    /// and for each function name, how many more methods it has since then.
    changed: lower::IndexReads,
    method_counts: HashMap<String, isize>,
    /// Which shard parsed each file (0: this thread, `i`: worker `i - 1`).
    owner: HashMap<String, usize>,
    /// Files with function bodies parsed since the last lowering.
    new_bodies: HashSet<String>,
    /// The last lowering's index, and whether files were parsed, declared or
    /// dropped since (bodies parsed change no entry of it).
    index: Option<Arc<CrateIndex>>,
    index_stale: bool,
    /// Told of each file declared without being parsed (the shards tell of those
    /// they parse).
    file_read: Option<&'a (dyn Fn(&SourceFile) + Sync)>,
}

struct Worker<'a> {
    tx: mpsc::Sender<Job<'a>>,
    bytes: usize,
}

/// Work for a shard, run on its thread (where its syntax trees are): each request
/// is a typed call whose answer comes back on a channel of its own
/// ([`CrateFrontEnd::ask`]).
type Job<'a> = Box<dyn FnOnce(&mut Shard<'a>) + Send + 'a>;

/// The answers of every worker to one request, in worker order.
struct Pending<T>(Vec<mpsc::Receiver<T>>);

/// What the lexical scan of a file not parsed declares.
#[derive(Default)]
struct Unparsed {
    types: Vec<(String, bool)>,
    /// Each function's signature as the index holds it, and whether it takes `self`.
    fns: Vec<(String, FnSig, bool)>,
}

/// The functions of one file, as lowered.
struct LoweredFile {
    path: String,
    fns: Vec<Function>,
    /// Test items left out.
    skipped: usize,
    /// What of the crate index the lowering read.
    reads: lower::IndexReads,
    /// Only the functions whose bodies were parsed since the last lowering (they
    /// replace theirs in the file's model).
    part: bool,
}

/// A file to parse with the insides of these function bodies left out (blanked,
/// in order; `driver::lazy` says which).
pub type Lazy<'a> = (&'a SourceFile, Vec<std::ops::Range<usize>>);

type FileSigs = (
    Vec<(String, FnSig)>,
    Vec<(String, FieldMap)>,
    Vec<(String, String)>,
);

impl<'a> CrateFrontEnd<'a> {
    /// Declares the items of a file that is not parsed (yet), from its lexical scan.
    pub fn declare_unparsed(&mut self, file: &SourceFile, scan: &scan::FileScan) {
        let keep = |test: bool| self.include_tests || !test;
        let module = file_module(self.roots, file);
        let u = Unparsed {
            types: scan
                .types
                .iter()
                .filter(|t| keep(t.test))
                .map(|t| (t.name.to_string(), t.is_trait))
                .collect(),
            fns: scan
                .items
                .iter()
                .filter(|f| keep(f.test))
                .map(|f| {
                    (
                        f.name.to_string(),
                        FnSig {
                            self_type: f.self_type.map(String::from),
                            trait_name: f.trait_name.map(String::from),
                            module: module
                                .iter()
                                .cloned()
                                .chain(f.module.iter().map(|m| m.to_string()))
                                .collect(),
                            ret: TypeInfo::default(),
                            returns_fresh: None,
                            returns_keyed: false,
                            returns_text: None,
                            stores_param: None,
                            returns_received: None,
                            returns_rows: Vec::new(),
                            logs_params: Vec::new(),
                        },
                        f.has_self,
                    )
                })
                .collect(),
        };
        self.unparsed.insert(file.path.clone(), u);
        self.index_stale = true;
        if let Some(read) = self.file_read {
            read(file);
        }
    }

    /// Parses `files` (refusing pathological ones with an error), spread over the
    /// shards by size.
    pub fn add(&mut self, files: &[&'a SourceFile]) {
        self.add_lazy(files.iter().map(|f| (*f, Vec::new())).collect());
    }

    /// Parses `files`, each with the function bodies given left out.
    pub fn add_lazy(&mut self, files: Vec<Lazy<'a>>) {
        self.index_stale = true;
        let n = self.workers.len() + 1;
        let mut parts: Vec<Vec<Lazy<'a>>> = vec![Vec::new(); n];
        for (f, lazy) in files {
            // Its declared functions are replaced by what parsing finds.
            if let Some(u) = self.unparsed.remove(&f.path) {
                for (name, sig, _) in &u.fns {
                    self.changed_sig(name, sig, -1);
                }
            }
            let loads =
                std::iter::once(self.local_bytes).chain(self.workers.iter().map(|w| w.bytes));
            let (i, _) = loads
                .enumerate()
                .min_by_key(|&(i, b)| (b, i))
                .unwrap_or((0, 0));
            // What is parsed: the text but the bodies left out.
            let size = f.text.len() - lazy.iter().map(|r| r.len()).sum::<usize>();
            if i == 0 {
                self.local_bytes += size;
            } else {
                self.workers[i - 1].bytes += size;
            }
            self.owner.insert(f.path.clone(), i);
            parts[i].push((f, lazy));
        }
        let mut parts = parts.into_iter();
        let local = parts.next().unwrap_or_default();
        let pending = self.ask(|_| {
            let part = parts.next().unwrap_or_default();
            move |s: &mut Shard<'a>| s.add(part)
        });
        self.local.add(local);
        self.gather(pending);
    }

    /// Parses function bodies left out of parsed files (those given, each the
    /// inside of a body's braces); the files' functions are lowered again at the
    /// next lowering. Call after [`CrateFrontEnd::restore`].
    /// Reads the signatures of the files at `paths` again at the next lowering: a
    /// body parsed there since gives them a fact (a setter's stored parameter,
    /// `FnSig::stores_param`).
    pub fn refresh_sigs(&mut self, paths: &[String]) {
        for path in paths {
            if let Some((fns, _, _)) = self.sigs.remove(path) {
                self.index_stale = true;
                for (name, sig) in &fns {
                    self.changed_sig(name, sig, -1);
                }
            }
        }
    }

    pub fn parse_bodies(&mut self, files: Vec<Lazy<'a>>) {
        let n = self.workers.len() + 1;
        let mut parts: Vec<Vec<Lazy<'a>>> = vec![Vec::new(); n];
        for (f, lazy) in files {
            self.new_bodies.insert(f.path.clone());
            let i = self.owner.get(&f.path).copied().unwrap_or(0);
            parts[i].push((f, lazy));
        }
        let mut parts = parts.into_iter();
        let local = parts.next().unwrap_or_default();
        let pending = self.ask(|_| {
            let part = parts.next().unwrap_or_default();
            move |s: &mut Shard<'a>| s.parse_bodies(part)
        });
        let mut failed = self.local.parse_bodies(local);
        for part in self.gather(pending) {
            failed.extend(part);
        }
        // A body left out hid a syntax error: the file is not analyzed (as when
        // parsed whole), and what it declared is gone.
        for path in failed {
            self.index_stale = true;
            self.models.remove(&path);
            if let Some((fns, fields, consts)) = self.sigs.remove(&path) {
                for (name, sig) in &fns {
                    self.changed_sig(name, sig, -1);
                }
                self.changed
                    .fields
                    .extend(fields.into_iter().map(|(t, _)| t));
                self.changed
                    .consts
                    .extend(consts.into_iter().map(|(c, _)| c));
            }
        }
    }

    /// Sends a request to every worker (`job(i)` for worker `i`), to run on its
    /// thread; [`CrateFrontEnd::gather`] takes the answers.
    fn ask<T, J>(&self, mut job: impl FnMut(usize) -> J) -> Pending<T>
    where
        T: Send + 'a,
        J: FnOnce(&mut Shard<'a>) -> T + Send + 'a,
    {
        let answers = self
            .workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let (tx, rx) = mpsc::channel();
                let work = job(i);
                let job: Job<'a> = Box::new(move |shard: &mut Shard<'a>| {
                    // The front end only stops listening when it unwinds.
                    let _ = tx.send(work(shard));
                });
                w.tx.send(job).expect("an analysis thread stopped");
                rx
            })
            .collect();
        Pending(answers)
    }

    /// Every worker's answer to a request, in worker order (the wait is not counted
    /// to the lowering's processor time: the workers count their own).
    fn gather<T>(&self, pending: Pending<T>) -> Vec<T> {
        pending
            .0
            .into_iter()
            .map(|rx| {
                untimed(Phase::Lower, || {
                    rx.recv().expect("an analysis thread stopped")
                })
            })
            .collect()
    }

    /// Indexes and lowers the files parsed so far, with the retention facts.
    pub fn lower(&mut self) -> CrateOutput {
        let out = self.lower_new();
        self.finish(out)
    }

    /// Notes that the signature `sig` of `name` was added (`delta` 1) or removed (-1).
    fn changed_sig(&mut self, name: &str, sig: &FnSig, delta: isize) {
        let changed = &mut self.changed;
        changed.fns.insert(name.to_string());
        let owners = changed.owned.entry(name.to_string()).or_default();
        owners.insert(sig.self_type.clone().unwrap_or_default());
        if let Some(t) = &sig.trait_name {
            owners.insert(t.clone());
        }
        if sig.self_type.is_some() {
            *self.method_counts.entry(name.to_string()).or_default() += delta;
        }
    }

    /// Takes back the models of a crate [`CrateFrontEnd::lower_new`] or
    /// [`CrateFrontEnd::lower`] returned, before lowering new files again.
    pub fn restore(&mut self, out: CrateOutput) {
        let mut fns = out.krate.functions.into_iter().peekable();
        for (path, model) in self.models.iter_mut() {
            while let Some(f) = fns.next_if(|f| *f.loc.path == **path) {
                model.fns.push(f);
            }
        }
    }

    /// Indexes and lowers the files parsed so far, without the retention facts (the
    /// prefilter's rounds; [`CrateFrontEnd::finish`] adds them). It lowers only what
    /// may have changed: the files parsed since the last lowering, and the files
    /// whose lowering read an index entry (a function's signatures, a type's fields,
    /// a constant) those files changed; every other file keeps its model, which is
    /// what lowering it again would give.
    pub fn lower_new(&mut self) -> CrateOutput {
        timed(Phase::Lower, || self.lower_round())
    }

    fn lower_round(&mut self) -> CrateOutput {
        // Only bodies parsed since: the index is the last one.
        let index = match self.index.clone().filter(|_| !self.index_stale) {
            Some(index) => index,
            None => Arc::new(self.build_index()),
        };
        // Read from bodies, which may be parsed since: computed every round.
        let index = self.with_batch_returned(index);
        self.index = Some(index.clone());
        self.index_stale = false;
        self.lower_with(index)
    }

    /// The crate index of the files parsed and declared so far: names, then
    /// signatures, fields and constants.
    fn build_index(&mut self) -> CrateIndex {
        // Names: the crate's types and traits.
        let mut index = CrateIndex {
            reexports: self.roots.reexports.clone(),
            ..CrateIndex::default()
        };
        for u in self.unparsed.values() {
            for (name, is_trait) in &u.types {
                index.type_names.insert(name.clone());
                if *is_trait {
                    index.traits.insert(name.clone());
                }
            }
            for (name, sig, _) in &u.fns {
                index.fns.entry(name.clone()).or_default().push(sig.clone());
            }
        }
        let pending = self.ask(|_| |s: &mut Shard<'a>| timed(Phase::Lower, || s.names()));
        index::merge_names(&mut index, self.local.names());
        for part in self.gather(pending) {
            index::merge_names(&mut index, part);
        }

        // Signatures, fields and constants, merged in path order (read again only
        // for new files while the names stay the same).
        // Type names decide what is a crate type everywhere: when they change,
        // everything is read and lowered again.
        // So do outcome enums and error enums wrapping a library's errors (an
        // enum's file parsed later than its name was known).
        if self.sigs_names.0 != index.type_names
            || self.sigs_names.1 != index.traits
            || self.sigs_names.2 != index.outcomes
            || self.sigs_names.3 != index.effect_errors
        {
            self.sigs.clear();
            self.models.clear();
            self.sigs_names = (
                index.type_names.clone(),
                index.traits.clone(),
                index.outcomes.clone(),
                index.effect_errors.clone(),
            );
        }
        let names = Arc::new(index);
        let known: Arc<HashSet<String>> = Arc::new(self.sigs.keys().cloned().collect());
        let pending = self.ask(|_| {
            let (names, known) = (names.clone(), known.clone());
            move |s: &mut Shard<'a>| timed(Phase::Lower, || s.sigs(&names, &known))
        });
        let mut fresh = self.local.sigs(&names, &known);
        for part in self.gather(pending) {
            fresh.extend(part);
        }
        for (_, (fns, fields, consts)) in &fresh {
            for (name, sig) in fns {
                self.changed_sig(name, sig, 1);
            }
            let changed = &mut self.changed;
            changed
                .fields
                .extend(fields.iter().map(|(ty, _)| ty.clone()));
            changed
                .consts
                .extend(consts.iter().map(|(name, _)| name.clone()));
        }
        self.sigs.extend(fresh);
        let mut index = Arc::unwrap_or_clone(names);
        // Functions stored as values of a fn-pointer alias (`stored::fn_alias_slot`).
        index.has_slots |= (index.aliases.values()).any(|t| stored::is_fn_pointer_text(t));
        for (fns, fields, consts) in self.sigs.values() {
            for (name, sig) in fns {
                index.fns.entry(name.clone()).or_default().push(sig.clone());
            }
            for (ty, fs) in fields {
                index.has_slots |=
                    (fs.iter()).any(|(_, t)| t.crate_type.as_deref().is_some_and(stored::is_slot));
                index
                    .fields
                    .entry(ty.clone())
                    .or_default()
                    .extend(fs.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            for (k, v) in consts {
                match index.consts.get_mut(k) {
                    // Two struct literals giving a field different SQL: neither.
                    Some(old) if k.contains('.') && old != v => old.clear(),
                    _ => {
                        index.consts.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        index
    }

    /// Lowers, per file, what may have changed (see [`CrateFrontEnd::lower_new`]).
    fn lower_with(&mut self, index: Arc<CrateIndex>) -> CrateOutput {
        let mut changed = std::mem::take(&mut self.changed);
        changed.counted = std::mem::take(&mut self.method_counts)
            .into_iter()
            .filter(|(_, n)| *n != 0)
            .map(|(name, _)| name)
            .collect();
        // Files whose reads did not change keep their models, but for the
        // functions whose bodies were parsed since.
        let (mut skip, mut part) = (HashSet::new(), HashSet::new());
        for (path, m) in &self.models {
            if m.reads.touches(&changed) {
                continue;
            }
            if self.new_bodies.contains(path) {
                part.insert(path.clone());
            } else {
                skip.insert(path.clone());
            }
        }
        self.new_bodies.clear();
        let (skip, part) = (Arc::new(skip), Arc::new(part));
        let pending = self.ask(|_| {
            let (index, skip, part) = (index.clone(), skip.clone(), part.clone());
            move |s: &mut Shard<'a>| timed(Phase::Lower, || s.lower(&index, &skip, &part))
        });
        let (fresh, mut errors, mut analyzed) = self.local.lower(&index, &skip, &part);
        let mut fresh = fresh;
        for (f, e, n) in self.gather(pending) {
            fresh.extend(f);
            errors.extend(e);
            analyzed += n;
        }
        for f in fresh {
            match self.models.get_mut(&f.path).filter(|_| f.part) {
                // The new models of some functions replace theirs.
                Some(m) => {
                    let mut new: HashMap<usize, Function> = f
                        .fns
                        .into_iter()
                        .map(|g| (g.loc.span.byte_start, g))
                        .collect();
                    for g in &mut m.fns {
                        if let Some(n) = new.remove(&g.loc.span.byte_start) {
                            *g = n;
                        }
                    }
                    // A closure handed to a worker in a body parsed since is new.
                    let mut added: Vec<Function> = new.into_values().collect();
                    added.sort_by_key(|g| g.loc.span.byte_start);
                    m.fns.extend(added);
                    m.reads.extend(f.reads);
                }
                None => {
                    self.models.insert(f.path.clone(), f);
                }
            }
        }
        let mut krate = Crate {
            key: self.key.to_string(),
            reexports: self.roots.reexports.clone(),
            functions: Vec::new(),
            unparsed: self
                .unparsed
                .iter()
                .flat_map(|(path, u)| {
                    u.fns
                        .iter()
                        .map(|(name, sig, has_self)| crate::ir::UnparsedFn {
                            ident: name.clone(),
                            self_type: sig.self_type.clone(),
                            trait_name: sig.trait_name.clone(),
                            module: sig.module.clone(),
                            has_self: *has_self,
                            path: path.clone(),
                        })
                })
                .collect(),
        };
        // The models move into the crate; `restore` gives them back for the next
        // incremental lowering.
        let mut skipped_tests = 0;
        let mut field_reads = HashSet::new();
        for f in self.models.values_mut() {
            krate.functions.append(&mut f.fns);
            skipped_tests += f.skipped;
            field_reads.extend(f.reads.fields.iter().map(String::as_str));
        }
        // The files not parsed that declare types whose fields were read.
        let undeclared_fields = self
            .unparsed
            .iter()
            .filter(|(_, u)| {
                u.types
                    .iter()
                    .any(|(t, _)| field_reads.contains(t.as_str()))
            })
            .map(|(path, _)| path.clone())
            .collect();

        CrateOutput {
            krate,
            errors,
            analyzed,
            lowered: self
                .models
                .iter()
                .map(|(p, m)| (p.clone(), m.skipped))
                .collect(),
            skipped_tests,
            retention: Default::default(),
            index,
            undeclared_fields,
        }
    }

    /// Adds the retention facts (the crate's constants, then each file's facts) to
    /// the last lowering's output.
    pub fn finish(&self, out: CrateOutput) -> CrateOutput {
        timed(Phase::Lower, || self.add_retention(out))
    }

    fn add_retention(&self, mut out: CrateOutput) -> CrateOutput {
        let pending = self.ask(|_| |s: &mut Shard<'a>| timed(Phase::Lower, || s.consts()));
        let mut consts = self.local.consts();
        for part in self.gather(pending) {
            consts.extend(part);
        }
        consts.sort_by(|a, b| a.0.cmp(&b.0));
        let consts: Arc<Vec<retention::ConstItem>> =
            Arc::new(consts.into_iter().flat_map(|(_, c)| c).collect());
        let apis = self.local.apis;
        let tables = Arc::new(crate::ir::Tables {
            dedup: apis.dedup_tables.clone(),
            outbox: apis.outbox_tables.clone(),
            unique: Vec::new(),
        });
        let pending = self.ask(|_| {
            let (consts, tables) = (consts.clone(), tables.clone());
            // The retention parts, and the internal failures of every phase so far.
            move |s: &mut Shard<'a>| {
                timed(Phase::Lower, || {
                    (s.walk(&consts, &tables), s.internal_errors())
                })
            }
        });
        let mut walked = self.local.walk(&consts, &tables);
        out.errors.extend(self.local.internal_errors());
        for (part, internal) in self.gather(pending) {
            walked.extend(part);
            out.errors.extend(internal);
        }
        walked.sort_by(|a, b| a.0.cmp(&b.0));
        out.retention = retention::finish(walked.into_iter().map(|(_, w)| w).collect());
        out
    }
}
