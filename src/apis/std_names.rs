//! What the standard library's names (and their like: web-framework wrappers,
//! anyhow, tokio's macros) mean, as the runtime pack says: the front end follows
//! values, text, results and durations through them.

use foldhash::{HashMap, HashSet};
use std::sync::OnceLock;

use serde::Deserialize;

use super::{Apis, TtlUnit};

/// A pack's `[durations]`: how code makes and reads durations
/// (`Duration::from_secs(n)`, `TimeDelta::days(n)`, `d.as_secs()`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DurationSpec {
    /// Duration types: their unit-named constructors (`typed_constructors`) make
    /// durations only on them.
    #[serde(default)]
    pub types: Vec<String>,
    /// Functions that make a duration of any path (`from_secs`), by unit.
    #[serde(default)]
    pub constructors: HashMap<String, TtlUnit>,
    /// Functions that make a duration on a duration type (`TimeDelta::seconds`).
    #[serde(default)]
    pub typed_constructors: HashMap<String, TtlUnit>,
    /// Methods that read a duration as a number of units (`as_secs`).
    #[serde(default)]
    pub readers: HashMap<String, TtlUnit>,
}

/// Names whose meaning is the standard library's (and its like: the wrappers of web
/// frameworks), read from the packs: the front end follows values through them and
/// never takes them for a call into the crate.
#[derive(Debug, Default, Clone)]
pub struct StdNames {
    /// Methods of standard types: a receiver of unknown type calling one is not
    /// taken for the crate's own method of that name (`std_methods`).
    pub methods: HashSet<String>,
    /// Methods that return their receiver or a view of it, keeping what it is
    /// (`clone`, `as_ref`, `unwrap`; `alias_methods`).
    pub aliases: HashSet<String>,
    /// Calls whose one argument passes through (`Ok(x)`, `Box::new(x)`; `passthrough`).
    pub passthrough: HashSet<String>,
    /// Calls whose last argument passes through (`timeout(d, fut)`;
    /// `passthrough_last`).
    pub passthrough_last: HashSet<String>,
    /// Associated functions that make a value of the type they are called on
    /// (`Client::new(&conf)`, `Client::from_conf(c)`; `constructors`): called on a
    /// type an API pack gives a role, the value has that role.
    pub constructors: HashSet<String>,
    /// No-argument accessors of the wrappers types see through (`accessors`).
    pub accessors: HashSet<String>,
    /// Names every crate defines (`new`, `fmt`): a file naming one is not linked to
    /// the file defining it (`ubiquitous`).
    pub ubiquitous: HashSet<String>,
    /// Calls and macros whose awaited result waits for spawned tasks (`join_all`,
    /// `JoinSet::join_next`; `task_joins`).
    pub task_joins: HashSet<String>,
    /// Methods awaited on a set of spawned tasks that take one task's outcome
    /// (`JoinSet::join_next`, a `FuturesUnordered`'s `next`; `task_takes`): only a
    /// loop draining the set with one finishes every task.
    pub task_takes: HashSet<String>,
    /// Types of a set of spawned tasks whose first type argument is the tasks'
    /// output (tokio's `JoinSet<T>`; `task_set_types`).
    pub task_set_types: HashSet<String>,
    /// Methods of a stream of futures that run them concurrently (futures'
    /// `buffer_unordered`, `buffered`; `stream_joins`): awaiting a chain through one
    /// joins the futures, as `join_all` does.
    pub stream_joins: HashSet<String>,
    /// Calls that make an in-process channel, returning its two ends (`mpsc::channel`,
    /// `flume::unbounded`; `channel_makers`).
    pub channel_makers: HashSet<String>,
    /// Iterator methods whose items are the receiver's elements (`iter`, `drain`;
    /// `element_methods`).
    pub element_methods: HashSet<String>,
    /// Methods of a collection giving one of its elements (`get`, `first`;
    /// `element_accessors`): a dispatch table's handler.
    pub element_accessors: HashSet<String>,
    /// Methods of an `Option` or `Result` whose value is their closure's
    /// (`value_closures`): `topic.and_then(|t| table.get(&t))` is a table's handler.
    pub value_closures: HashSet<String>,
    /// Methods of a collection taking one of its elements out (`pop`;
    /// `element_takes`): a struct pushed into a local `Vec` comes back with its fields.
    pub element_takes: HashSet<String>,
    /// Iterator adapters whose closure's first parameter is an element (`map`,
    /// `for_each`; `element_closures`).
    pub element_closures: HashSet<String>,
    /// Calls and methods that box a future (`Box::pin(async { .. })`, `.boxed()`;
    /// `future_boxes`): a function returning one boxed async block does that block's
    /// work when its future is awaited, as an `async fn` would.
    pub future_boxes: HashSet<String>,
    /// Methods of a message stream whose closure handles each message (futures'
    /// `for_each`, `try_for_each_concurrent`; `stream_callbacks`).
    pub stream_callbacks: HashSet<String>,
    /// Methods of a message stream that make a stream of the same messages, mapped or
    /// filtered (futures' `map`, `try_filter_map`; `stream_adapters`).
    pub stream_adapters: HashSet<String>,
    /// Methods of no argument whose result holds its receiver's text (`to_string`,
    /// `as_str`; `text_methods`): a string evaluates through them.
    pub text_methods: HashSet<String>,
    /// Methods of no argument that render their receiver as text (`to_string`;
    /// `renders`): a clock reading rendered is an id, as one `format!`ted is.
    pub renders: HashSet<String>,
    /// Collection types (`Vec`, `HashMap`; `collections`): a value of one holds the
    /// crate's values, it is none of them.
    pub collections: HashSet<String>,
    /// Types looked through to their first type argument (`Arc<Repo>`, `Option<T>`,
    /// a web framework's `State<App>`; `wrappers`).
    pub wrappers: HashSet<String>,
    /// Standard and primitive types named without a path (`String`, `u64`;
    /// `std_types`): from outside the crate.
    pub types: HashSet<String>,
    /// Endings of type names looked through as wrappers (`io::Result<T>`, a crate's
    /// `AppResult<T>`; `wrapper_suffixes`).
    pub wrapper_suffixes: Vec<String>,
    /// Functions whose result carries what they were given, encoded (`to_vec`,
    /// `to_string_pretty`; `serializers`): an envelope's fresh id stays in it.
    pub serializers: HashSet<String>,
    /// Methods that put their arguments into their receiver in place (a header
    /// map's `insert`; `store_methods`): the receiver then holds a fresh id it was
    /// given, and carries it into the publish it is passed to.
    pub store_methods: HashSet<String>,
    /// Path calls whose one argument's text is their result (`String::from`),
    /// matched as path suffixes (`text_conversions`).
    pub text_conversions: Vec<Vec<String>>,
    /// How durations are made and read (`[durations]`).
    pub durations: DurationSpec,
    /// What the macros of std and its like do (`[macro_kinds]`).
    pub macro_kinds: HashMap<String, MacroKind>,
    /// How results carry an operation's failure (`[results]`).
    pub results: ResultSpec,
}

/// A pack's `[results]`: how a result carries an operation's failure (std
/// `Result`, anyhow).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultSpec {
    /// Variants and constructors of success (`Ok`).
    #[serde(default)]
    pub ok: Vec<String>,
    /// Variants and constructors of failure (`Err`).
    #[serde(default)]
    pub err: Vec<String>,
    /// Variants that wrap a present value (`Some`): a pattern of one binds it.
    #[serde(default)]
    pub some: Vec<String>,
    /// Methods of no argument testing the outcome, and which side is true
    /// (`is_err = "err"`).
    #[serde(default)]
    pub tests: HashMap<String, ResultSide>,
    /// Methods that panic on the other side (`unwrap`, `expect`).
    #[serde(default)]
    pub panics: Vec<String>,
    /// Methods whose result keeps the failure as a failure (`map_err`, `context`).
    #[serde(default)]
    pub keeps: Vec<String>,
    /// Methods that turn the failure into a value and go on (`ok`,
    /// `unwrap_or_default`).
    #[serde(default)]
    pub swallows: Vec<String>,
    /// Macros that make an error value (`anyhow!`).
    #[serde(default)]
    pub error_macros: Vec<String>,
    /// Iterator methods true when one item passes their test (`any`), and when
    /// every item does (`all`): `results.iter().any(|r| r.is_err())`.
    #[serde(default)]
    pub any_of: Vec<String>,
    #[serde(default)]
    pub all_of: Vec<String>,
    /// Methods that count a collection's or an iterator's items (`len`, `count`).
    #[serde(default)]
    pub counts: Vec<String>,
    /// Iterator methods giving the first item that passes their test, if one does
    /// (`find`, `position`): `results.iter().find(|r| r.is_err())` is some when one
    /// failed.
    #[serde(default)]
    pub finds: Vec<String>,
}

/// A side of a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultSide {
    Ok,
    Err,
}

impl ResultSpec {
    /// Adds another pack's `[results]`.
    pub(super) fn extend(&mut self, other: ResultSpec) {
        self.ok.extend(other.ok);
        self.err.extend(other.err);
        self.some.extend(other.some);
        self.tests.extend(other.tests);
        self.panics.extend(other.panics);
        self.keeps.extend(other.keeps);
        self.swallows.extend(other.swallows);
        self.error_macros.extend(other.error_macros);
        self.any_of.extend(other.any_of);
        self.all_of.extend(other.all_of);
        self.counts.extend(other.counts);
        self.finds.extend(other.finds);
    }

    /// `Some(true)` for a success name (`Ok`), `Some(false)` for a failure (`Err`).
    pub fn side(&self, name: &str) -> Option<bool> {
        if self.ok.iter().any(|n| n == name) {
            Some(true)
        } else if self.err.iter().any(|n| n == name) {
            Some(false)
        } else {
            None
        }
    }
}

impl StdNames {
    /// What the macro of this name (its last path segment) does, if it is known.
    pub fn macro_kind(&self, name: &str) -> Option<MacroKind> {
        self.macro_kinds.get(name).copied()
    }
}

/// What a macro of std, anyhow, tokio or futures does (`[macro_kinds]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MacroKind {
    /// Returns an error (`bail!`).
    ErrorReturn,
    /// Returns an error unless its condition holds (`ensure!`).
    ErrorUnless,
    /// Ends the task (`panic!`, `todo!`).
    Abort,
    /// Its branches are alternatives (`select!`).
    Alternatives,
    /// Its futures run side by side (`join!`, `try_join!`).
    Concurrent,
    /// Fills a template (`format!`): SQL with names filled in at run time.
    Format,
    /// The text of a file (`include_str!`).
    IncludeFile,
    /// Its literal arguments joined (`concat!`).
    Concat,
    /// Its arguments are a list of values (`vec!`, rusqlite's `params!`): the
    /// parameters bound to a statement.
    List,
    /// A variable of the build's environment (`env!`).
    Env,
}

/// The built-in packs' standard-library names, for the parts of the front end that
/// read syntax with no [`Apis`] at hand (the scanner, the crate index, declared
/// types). The config cannot change what `Vec` or `to_string` is.
pub fn builtin_std() -> &'static StdNames {
    static STD: OnceLock<StdNames> = OnceLock::new();
    STD.get_or_init(|| Apis::builtin().std)
}

impl DurationSpec {
    /// Adds another pack's `[durations]` (sqlx adds `PgInterval`).
    pub(super) fn extend(&mut self, other: DurationSpec) {
        self.types.extend(other.types);
        self.constructors.extend(other.constructors);
        self.typed_constructors.extend(other.typed_constructors);
        self.readers.extend(other.readers);
    }
}
