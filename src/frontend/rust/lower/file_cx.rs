//! A file's lowering context ([`FileCx`]): where the file is, what the crate's index
//! says of the names it uses, and which of those crate-wide facts its lowering read
//! ([`IndexReads`]), so that a change of one re-lowers it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use proc_macro2::Span as PmSpan;
use syn::Expr;

use super::super::{sql, CrateIndex, TypeInfo, UseMap};
use super::links_untyped_receiver;
use super::spans::expr_span;
use crate::apis::Apis;
use crate::diagnostic::Span;
use crate::ir::Loc;
use crate::support::lines::LineIndex;

/// What the calls of the crate pass a parameter ([`FileCx::param_arg`]).
pub(super) enum ParamArg {
    /// A collection naming this table (`db.collection("hog")`).
    Table(String),
    /// SQL text (`"INSERT INTO .."`, `INSERT_SQL`).
    Text(String),
}

pub struct FileCx<'a> {
    pub path: Arc<str>,
    /// The file's path on disk (`include_str!` is relative to it).
    pub abs: &'a std::path::Path,
    pub included: &'a super::super::text::Included<'a>,
    pub apis: &'a Apis,
    pub index: &'a CrateIndex,
    pub uses: &'a UseMap,
    pub lines: &'a LineIndex<'a>,
    pub module: Vec<String>,
    /// The crate-wide facts the file's lowering read (the front end re-lowers a file
    /// when one of them changes; the prefilter parses the files declaring the types
    /// whose fields were read).
    pub reads: &'a std::cell::RefCell<IndexReads>,
    /// Lower only the functions whose bodies open at these positions (line,
    /// 0-based column): those parsed since the file was last lowered.
    pub only: Option<&'a HashSet<(usize, usize)>>,
}

impl<'a> FileCx<'a> {
    /// The context of the file's code in its inline module `inner` (a path below
    /// the file's module): the same file, crate facts and functions lowered.
    pub fn in_module(&self, inner: impl IntoIterator<Item = String>) -> FileCx<'a> {
        let mut module = self.module.clone();
        module.extend(inner);
        FileCx {
            path: self.path.clone(),
            abs: self.abs,
            included: self.included,
            apis: self.apis,
            index: self.index,
            uses: self.uses,
            lines: self.lines,
            module,
            reads: self.reads,
            only: self.only,
        }
    }

    /// Whether the function with this body is lowered (see `only`).
    pub(super) fn wanted(&self, block: &syn::Block) -> bool {
        self.only.is_none_or(|only| {
            let s = block.brace_token.span.open().start();
            only.contains(&(s.line, s.column))
        })
    }
}

/// Keys of the [`CrateIndex`] a file's lowering read, found or not (and, in the
/// front end, the keys whose entries changed).
#[derive(Clone, Debug, Default)]
pub struct IndexReads {
    /// Function names whose signatures were read whatever their owner.
    pub fns: HashSet<String>,
    /// Function names read for one owner: a type or trait (`self_type` or
    /// `trait_name`), or `""` for free functions.
    pub owned: HashMap<String, HashSet<String>>,
    /// Function names whose number of methods was read ([`links_untyped_receiver`]).
    pub counted: HashSet<String>,
    /// Types whose fields were read (`fields`).
    pub fields: HashSet<String>,
    /// Constant names (`consts`).
    pub consts: HashSet<String>,
    /// Function names looked up in `batch_returned`.
    pub batch_returned: HashSet<String>,
}

impl IndexReads {
    /// Whether any key read is among the keys `changed`.
    /// Adds what `other` read.
    pub fn extend(&mut self, other: IndexReads) {
        self.fns.extend(other.fns);
        for (name, owners) in other.owned {
            self.owned.entry(name).or_default().extend(owners);
        }
        self.counted.extend(other.counted);
        self.fields.extend(other.fields);
        self.consts.extend(other.consts);
        self.batch_returned.extend(other.batch_returned);
    }

    pub fn touches(&self, changed: &IndexReads) -> bool {
        self.fns.iter().any(|k| changed.fns.contains(k))
            || self.owned.iter().any(|(name, owners)| {
                changed
                    .owned
                    .get(name)
                    .is_some_and(|o| owners.iter().any(|t| o.contains(t)))
            })
            || self.counted.iter().any(|k| changed.counted.contains(k))
            || self.fields.iter().any(|k| changed.fields.contains(k))
            || self.consts.iter().any(|k| changed.consts.contains(k))
            || (self.batch_returned.iter()).any(|k| changed.batch_returned.contains(k))
    }
}

fn note(set: &mut HashSet<String>, key: &str) {
    if !set.contains(key) {
        set.insert(key.to_string());
    }
}

impl FileCx<'_> {
    /// The crate's functions named `name`, read whatever their owner.
    pub(super) fn fn_sigs(&self, name: &str) -> Option<&Vec<super::super::FnSig>> {
        note(&mut self.reads.borrow_mut().fns, name);
        self.index.fns.get(name)
    }

    /// The crate's functions named `name`, of which only those of `owner` (a type
    /// or trait; `""`: free functions) will be used.
    pub(super) fn owned_sigs(&self, name: &str, owner: &str) -> Option<&Vec<super::super::FnSig>> {
        let mut reads = self.reads.borrow_mut();
        match reads.owned.get_mut(name) {
            Some(owners) => note(owners, owner),
            None => {
                reads
                    .owned
                    .insert(name.to_string(), HashSet::from([owner.to_string()]));
            }
        }
        self.index.fns.get(name)
    }

    /// Whether a batch handler returns the result of this function (`owner`: its
    /// `impl`'s type, `None` for a free function); a method on a receiver of unknown
    /// type counts when the crate has one method of that name.
    pub(super) fn batch_returned(&self, name: &str, owner: Option<&str>) -> bool {
        note(&mut self.reads.borrow_mut().batch_returned, name);
        let Some(owners) = self.index.batch_returned.get(name) else {
            return false;
        };
        owners.contains(owner.unwrap_or(""))
            || (owner.is_some() && owners.contains("*") && self.links_untyped(name))
    }

    /// Whether this function is handed to a job-queue worker as its handler
    /// (`owner`: its `impl`'s type, `None` for a free function).
    pub(super) fn handed_to_worker(&self, name: &str, owner: Option<&str>) -> bool {
        note(&mut self.reads.borrow_mut().batch_returned, name);
        let Some(owners) = self.index.batch_returned.get(name) else {
            return false;
        };
        let marked = format!(
            "{}{}",
            crate::frontend::rust::lambda::HANDED,
            owner.unwrap_or("")
        );
        owners.contains(&marked)
    }

    /// The value of the crate's constant `name`.
    pub(super) fn const_value(&self, name: &str) -> Option<&String> {
        note(&mut self.reads.borrow_mut().consts, name);
        self.index.consts.get(name)
    }

    /// The SQL the crate's struct literals put in field `field` of type `ty`.
    pub(super) fn field_text(&self, ty: &str, field: &str) -> Option<String> {
        self.const_value(&format!("{ty}.{field}"))
            .filter(|t| !t.is_empty())
            .cloned()
    }

    /// The name (a topic) the crate's struct literals put in field `field` of type `ty`.
    pub(super) fn field_name(&self, ty: &str, field: &str) -> Option<String> {
        use crate::frontend::rust::index::field_name_key;
        self.const_value(&field_name_key(ty, field))
            .filter(|t| !t.is_empty())
            .cloned()
    }

    /// The table a collection the crate's struct literals put in field `field` of
    /// type `ty` names (`processed: db.collection("processed_events")`).
    pub(super) fn field_table(&self, ty: &str, field: &str) -> Option<String> {
        use crate::frontend::rust::index::{field_table_key, TABLE_CONST};
        let t = self.const_value(&field_table_key(ty, field))?;
        match t.strip_prefix(TABLE_CONST) {
            Some(name) => self.const_value(name).map(|t| t.to_ascii_lowercase()),
            None => Some(t.clone()),
        }
    }

    /// What every call of the crate passes as the parameter `i` (`self` not counted)
    /// of the function `name` taking `n` such parameters (and `self` when
    /// `method`): a collection naming its table, or SQL text ([`ParamArg`]). None
    /// when no call is seen, one passes something else, calls disagree, or the
    /// function is passed as a value (`index::params`).
    pub(super) fn param_arg(
        &self,
        name: &str,
        i: usize,
        n: usize,
        method: bool,
    ) -> Option<ParamArg> {
        use crate::frontend::rust::index::{
            escaped_key, param_key, TABLE_ARG, TABLE_CONST, TEXT_ARG,
        };
        if self.const_value(&escaped_key(name)).is_some() {
            return None;
        }
        let mut keys = vec![param_key(name, i, n, false)];
        if method {
            // `repo.save(a)`, or `Repo::save(&repo, a)`.
            keys = vec![
                param_key(name, i, n, true),
                param_key(name, i + 1, n + 1, false),
            ];
        }
        let mut found: Option<&String> = None;
        for k in &keys {
            match (self.const_value(k), found) {
                (None, _) => {}
                (Some(v), _) if v.is_empty() => return None,
                (Some(v), Some(f)) if v != f => return None,
                (Some(v), _) => found = Some(v),
            }
        }
        let v = found?;
        let named = |t: &str| match t.strip_prefix(TABLE_CONST) {
            Some(c) => self.const_value(c).cloned(),
            None => Some(t.to_string()),
        };
        if let Some(t) = v.strip_prefix(TABLE_ARG) {
            return named(t)
                .filter(|t| !t.is_empty())
                .map(|t| ParamArg::Table(t.to_ascii_lowercase()));
        }
        let t = named(v.strip_prefix(TEXT_ARG)?)?;
        super::super::text::looks_like_sql(&t).then_some(ParamArg::Text(t))
    }

    /// The fields of the crate's type `ty`.
    pub(super) fn fields_of(&self, ty: &str) -> Option<&HashMap<String, TypeInfo>> {
        note(&mut self.reads.borrow_mut().fields, ty);
        self.index.fields.get(ty)
    }

    /// [`links_untyped_receiver`], noted as a read.
    pub(super) fn links_untyped(&self, name: &str) -> bool {
        note(&mut self.reads.borrow_mut().counted, name);
        links_untyped_receiver(self.index, self.apis, name)
    }
}

impl super::super::text::ArgNames for FileCx<'_> {
    fn name_of(&self, arg: &Expr) -> String {
        sql::placeholder_name(&self.text_of(expr_span(arg)))
    }
}

impl FileCx<'_> {
    /// Evaluates strings the code fixes here (a `format!` argument is named by its
    /// text's last name).
    pub(super) fn eval<'c>(&'c self) -> super::super::text::Eval<'c> {
        super::super::text::Eval {
            from: self.abs,
            included: self.included,
            name_of: self,
        }
    }

    pub(super) fn span(&self, start: PmSpan, end: PmSpan) -> Span {
        self.lines.span(start, end)
    }

    pub(super) fn loc(&self, start: PmSpan, end: PmSpan) -> Loc {
        Loc {
            path: self.path.clone(),
            span: self.span(start, end),
        }
    }

    /// The source text of a node, whitespace collapsed.
    /// An empty span at byte `byte` of the file (where an edit inserts text).
    pub(super) fn point(&self, byte: usize) -> Loc {
        let text = self.lines.text();
        let line_start = text[..byte].rfind('\n').map_or(0, |i| i + 1);
        let line = text[..byte].matches('\n').count() as u32 + 1;
        let column = text[line_start..byte].chars().count() as u32 + 1;
        Loc {
            path: self.path.clone(),
            span: Span {
                line,
                column,
                end_line: line,
                end_column: column,
                byte_start: byte,
                byte_end: byte,
            },
        }
    }

    pub(super) fn text_of(&self, span: PmSpan) -> String {
        let sp = self.span(span, span);
        let text = self.lines.text();
        let s = text
            .get(sp.byte_start..sp.byte_end.max(sp.byte_start))
            .unwrap_or("");
        collapse(s)
    }

    /// The source text of a node without its comments and without the nodes at
    /// `holes` (inside it), whitespace collapsed as [`Self::text_of`] does.
    pub(super) fn text_without(&self, span: PmSpan, holes: &[PmSpan]) -> String {
        let sp = self.span(span, span);
        let text = self.lines.text();
        let (start, end) = (sp.byte_start, sp.byte_end.max(sp.byte_start));
        let mut kept = String::with_capacity(end.saturating_sub(start));
        let mut at = start;
        let mut cut: Vec<(usize, usize)> = holes
            .iter()
            .map(|h| self.span(*h, *h))
            .map(|h| (h.byte_start.max(start), h.byte_end.min(end)))
            .filter(|(a, b)| a < b)
            .collect();
        cut.sort_unstable();
        for (a, b) in cut {
            if a >= at {
                kept.push_str(text.get(at..a).unwrap_or(""));
                kept.push(' ');
            }
            at = at.max(b);
        }
        kept.push_str(text.get(at..end).unwrap_or(""));
        let uncommented: Vec<&str> = kept
            .lines()
            .map(|l| l.find("//").map_or(l, |i| &l[..i]))
            .collect();
        collapse(&uncommented.join("\n"))
    }
}

/// The words of `s` joined by one space, none next to a `.` (`a . b` is `a.b`).
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut words = s.split_whitespace().peekable();
    while let Some(w) = words.next() {
        out.push_str(w);
        if words
            .peek()
            .is_some_and(|next| !w.ends_with('.') && !next.starts_with('.'))
        {
            out.push(' ');
        }
    }
    out
}
