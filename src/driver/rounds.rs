//! The prefilter's rounds within one crate: the files that name an API are parsed
//! first, then round by round the files and function bodies the model of what is
//! parsed needs ([`demand`], [`lazy`]); `MSGAUDIT_CHECK_PREFILTER` compares the
//! result with the whole crate's model.

use rayon::prelude::*;

use super::{demand, lazy};
use crate::apis::Apis;
use crate::frontend::rust;
use crate::source::SourceFile;
use crate::support::cpu;

/// What the prefilter knows of a crate: which of its files name an API, and the
/// names that make a function body worth parsing.
#[derive(Clone, Copy)]
pub(super) struct Prefilter<'p> {
    pub named: &'p [bool],
    pub lexicon: &'p lazy::Lexicon,
}

/// What [`lower_needed`] leaves unparsed.
#[derive(Default)]
pub(super) struct Unparsed {
    pub files: usize,
    /// Function bodies of parsed files, by file and the position of the name.
    pub bodies: Vec<(String, usize)>,
}

/// A parsed file, with the function bodies left out of it.
struct ParsedFile<'f> {
    file: &'f SourceFile,
    scan: rust::scan::FileScan<'f>,
    module: Vec<String>,
    bodies: Vec<lazy::Body<'f>>,
}

/// A file with its lexical scan and module path.
type Scanned<'f> = (&'f SourceFile, rust::scan::FileScan<'f>, Vec<String>);

fn scanned<'f>(key: &str, f: &'f SourceFile) -> Scanned<'f> {
    let scan = cpu::timed(cpu::Phase::Lexical, || rust::scan::scan(&f.text));
    (f, scan, rust::module_path(key, &f.path))
}

/// The files to parse, each with the function bodies that can be left out.
fn add_parsed<'f>(
    files: Vec<Scanned<'f>>,
    lexicon: &lazy::Lexicon,
    include_tests: bool,
) -> Vec<ParsedFile<'f>> {
    files
        .into_par_iter()
        .map(|(file, scan, module)| {
            let bodies = cpu::timed(cpu::Phase::Lexical, || {
                lazy::unneeded_bodies(&file.text, &scan, lexicon, include_tests)
            });
            ParsedFile {
                file,
                scan,
                module,
                bodies,
            }
        })
        .collect()
}

/// Parses `new` files, leaving out their bodies, and keeps them in `parsed`.
fn add<'f>(
    fe: &mut rust::CrateFrontEnd<'f>,
    parsed: &mut Vec<ParsedFile<'f>>,
    mentioned: &mut std::collections::HashSet<&'f str>,
    new: Vec<ParsedFile<'f>>,
) {
    let mut lazy_files = Vec::with_capacity(new.len());
    for p in &new {
        mentioned.extend(p.scan.idents.iter().copied());
        lazy_files.push((p.file, p.bodies.iter().map(|b| b.range.clone()).collect()));
    }
    fe.add_lazy(lazy_files);
    parsed.extend(new);
}

/// Parses the files of a crate that mention an API token, then, round by round,
/// the files the model of what is parsed needs ([`demand`]); of each parsed file,
/// the function bodies that name the API (or may retry) first, then those the
/// model needs ([`lazy`]); lowers what is parsed.
pub(super) fn lower_needed<'f>(
    key: &'f str,
    files: &[&'f SourceFile],
    inputs: rust::Inputs<'f>,
    prefilter: Option<Prefilter>,
) -> (rust::CrateOutput, Unparsed) {
    let (include_tests, apis) = (inputs.include_tests, inputs.apis);
    rust::with_front_end(key, inputs, shards_for(files, inputs.hooks), |fe| {
        let Some(Prefilter { named, lexicon }) = prefilter else {
            fe.add(files);
            return (fe.lower(), Unparsed::default());
        };
        let mut seed: Vec<&SourceFile> = Vec::new();
        let mut rest: Vec<&SourceFile> = Vec::new();
        for (f, n) in files.iter().zip(named) {
            if *n {
                seed.push(f);
            } else {
                rest.push(f);
            }
        }
        let mut rest: Vec<Scanned> = rest.into_par_iter().map(|f| scanned(key, f)).collect();
        for (f, s, _) in &rest {
            fe.declare_unparsed(f, s);
        }
        let seed: Vec<Scanned> = seed.into_par_iter().map(|f| scanned(key, f)).collect();
        // A crate whose other files nearly all name what the API files define (a
        // plugin architecture, one trait implemented everywhere) would need nearly all
        // of them: parse everything at once rather than lowering round by round. When
        // most of them do, the first round decides (below). This only decides speed;
        // either way the result is the same.
        // (`MSGAUDIT_CHECK_PREFILTER` checks the rounds, so it turns this off.)
        let linked = if !inputs.hooks.check_prefilter {
            cpu::timed(cpu::Phase::Closure, || linked_share(&seed, &rest, apis))
        } else {
            0.0
        };
        let mut seed = seed;
        if linked > 0.95 {
            seed.append(&mut rest);
        }
        // Identifiers the parsed files mention (a constant they name is needed).
        let mut mentioned: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut parsed: Vec<ParsedFile> = Vec::new();
        let lazy = |files| add_parsed(files, lexicon, include_tests);
        add(fe, &mut parsed, &mut mentioned, lazy(seed));
        let mut first = true;
        // Each round lowers only what the files parsed since may change (see
        // `lower_new`), so its model is the one a full lowering would give.
        loop {
            let lowered = fe.lower_new();
            if rest.is_empty() && parsed.iter().all(|p| p.bodies.is_empty()) {
                return (fe.finish(lowered), Unparsed::default());
            }
            let d = cpu::timed(cpu::Phase::Closure, || demand::demand(&lowered, apis));
            let (take, keep): (Vec<_>, Vec<_>) = cpu::timed(cpu::Phase::Closure, || {
                rest.into_iter()
                    .partition(|(f, s, m)| d.needs(&f.path, m, s, &mentioned))
            });
            // When most of the crate is needed, one more round of lowering costs more
            // than parsing the few files left: parse everything. So too when most
            // files are linked by name and the first round already needs a quarter.
            let (n, left) = (take.len(), keep.len());
            let all = n * 2 > left * 3 || (first && linked > 0.6 && n * 3 >= left);
            first = false;
            let (take, keep) = if all {
                (take.into_iter().chain(keep).collect(), Vec::new())
            } else {
                (take, keep)
            };
            rest = keep;
            // The bodies the model needs now.
            let needed: Vec<(rust::Lazy, bool)> = cpu::timed(cpu::Phase::Closure, || {
                parsed
                    .par_iter_mut()
                    .filter_map(|p| {
                        let ParsedFile {
                            file,
                            scan,
                            module,
                            bodies,
                        } = p;
                        let mut now = Vec::new();
                        let mut refresh = false;
                        let runs = d.bodies.get(&file.path);
                        let may = d.may_need(scan);
                        bodies.retain_mut(|b| {
                            let item = &scan.items[b.item];
                            // Whether the body stores a callable: asked at most once, of a
                            // setter's body first, of any other only when it is needed.
                            let setter = d.setter_named(item);
                            let stores = setter && b.stores_callable(&d, &file.text, item);
                            // A body that may fill a field read as a topic: its
                            // signature (its struct literals' names) is read again too.
                            let fills = b.fills_name_field(&d, &file.text, item);
                            let needed = stores
                                || fills
                                || runs.is_some_and(|r| r.contains(&b.at))
                                || may && b.needed(&d, &file.text, item, module);
                            if needed {
                                now.push(b.range.clone());
                                refresh |= stores
                                    || fills
                                    || !setter && b.stores_callable(&d, &file.text, item);
                            }
                            !needed
                        });
                        (!now.is_empty()).then_some(((*file, now), refresh))
                    })
                    .collect()
            });
            // Files whose setters were parsed now: their signatures change.
            let refresh: Vec<String> = (needed.iter())
                .filter(|(_, refresh)| *refresh)
                .map(|((f, _), _)| f.path.clone())
                .collect();
            let needed: Vec<rust::Lazy> = needed.into_iter().map(|(n, _)| n).collect();
            // `MSGAUDIT_DEBUG_PREFILTER=1` prints each round (development aid).
            if inputs.hooks.debug_prefilter {
                eprintln!(
                    "{key}: {} parsed, {} needed, {} left; {} bodies needed, {} bodies left out",
                    lowered.analyzed,
                    take.len(),
                    rest.len(),
                    needed.iter().map(|(_, b)| b.len()).sum::<usize>(),
                    parsed.iter().map(|p| p.bodies.len()).sum::<usize>()
                );
            }
            if take.is_empty() && needed.is_empty() {
                let bodies = parsed
                    .iter()
                    .flat_map(|p| p.bodies.iter().map(|b| (p.file.path.clone(), b.at)))
                    .collect();
                let unparsed = Unparsed {
                    files: rest.len(),
                    bodies,
                };
                return (fe.finish(lowered), unparsed);
            }
            fe.restore(lowered);
            fe.refresh_sigs(&refresh);
            fe.parse_bodies(needed);
            add(fe, &mut parsed, &mut mentioned, lazy(take));
        }
    })
}

/// Compares the model of the prefilter's parsed part with the model of the whole
/// crate: every function lowered must be lowered alike, and every function the
/// whole crate finds relevant must be lowered.
pub(super) fn check_prefilter(
    key: &str,
    files: &[&SourceFile],
    named: &[bool],
    inputs: rust::Inputs,
    partial: &crate::ir::Crate,
    unparsed: &Unparsed,
) {
    let (full, _) = lower_needed(key, files, inputs, None);
    // Functions whose bodies were left out: their models are empty.
    let no_body: std::collections::HashSet<(&str, usize)> = unparsed
        .bodies
        .iter()
        .map(|(path, at)| (path.as_str(), *at))
        .collect();
    let id = |f: &crate::ir::Function| {
        (
            f.loc.path.to_string(),
            f.loc.span.byte_start,
            f.name.clone(),
        )
    };
    let lowered: std::collections::HashMap<_, String> = partial
        .functions
        .iter()
        .map(|f| (id(f), format!("{:?}", f)))
        .collect();
    // Functions with delivery facts in files that name no API token are not
    // parsed by design (their events alone make no finding); only relevance that
    // starts in a file naming one must be parsed.
    let seeds: std::collections::HashSet<&str> = files
        .iter()
        .zip(named)
        .filter(|(_, n)| **n)
        .map(|(f, _)| f.path.as_str())
        .collect();
    let relevant = demand::relevant(&full.krate, &full.index, |f| seeds.contains(&*f.loc.path));
    for (f, r) in full.krate.functions.iter().zip(relevant) {
        let whole = format!("{:?}", f);
        let body_left_out = no_body.contains(&(&*f.loc.path, f.loc.span.byte_start));
        match lowered.get(&id(f)).filter(|_| !body_left_out) {
            Some(text) if *text != whole => {
                let at = text
                    .bytes()
                    .zip(whole.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                let from = text[..at]
                    .char_indices()
                    .rev()
                    .nth(150)
                    .map_or(0, |(i, _)| i);
                eprintln!(
                    "prefilter check: {} ({}) is modeled differently:\n  parsed part: {}\n  whole crate: {}",
                    f.name,
                    f.loc.path,
                    text[from..].chars().take(400).collect::<String>(),
                    whole[from..].chars().take(400).collect::<String>()
                )
            }
            None if r => {
                let own: Vec<String> = f
                    .body
                    .each_event()
                    .filter(|e| {
                        !matches!(
                            e.kind,
                            crate::ir::EventKind::Call(_) | crate::ir::EventKind::CallValue { .. }
                        )
                    })
                    .map(|e| e.text.clone())
                    .collect();
                let what = if body_left_out {
                    "its body is not parsed"
                } else {
                    "not parsed"
                };
                eprintln!(
                    "prefilter check: {} ({}) is relevant but {what}; own events: {own:?}",
                    f.name, f.loc.path
                )
            }
            _ => {}
        }
    }
}

/// The share of the unparsed files that mention a function or type the API files
/// define (names every crate defines, such as `new` or `fmt`, aside); 0 for fewer
/// than 8 files.
fn linked_share(seed: &[Scanned], rest: &[Scanned], apis: &Apis) -> f64 {
    let defined: std::collections::HashSet<&str> = seed
        .iter()
        .flat_map(|(_, s, _)| {
            s.items
                .iter()
                .map(|f| f.name)
                .chain(s.types.iter().map(|t| t.name))
        })
        .filter(|n| !apis.std.ubiquitous.contains(*n))
        .collect();
    let linked = rest
        .iter()
        .filter(|(_, s, _)| s.idents.iter().any(|i| defined.contains(i)))
        .count();
    if rest.len() < 8 {
        return 0.0;
    }
    linked as f64 / rest.len() as f64
}

/// Crates with at least this many files are parsed and lowered on several threads.
const SHARD_MIN_FILES: usize = 48;

/// How many threads parse and lower a crate: one for small crates, else as many as
/// the pool has (at most 4). `MSGAUDIT_SHARD_MIN_FILES` lowers the threshold (tests).
fn shards_for(files: &[&SourceFile], hooks: &crate::support::DevHooks) -> usize {
    let min = hooks.shard_min_files.unwrap_or(SHARD_MIN_FILES);
    if files.len() < min.max(2) {
        1
    } else {
        rayon::current_num_threads().clamp(1, 4)
    }
}
