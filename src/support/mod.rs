//! What every layer may use and that knows nothing of messages: processor-time
//! accounting, durations (parsed and written as people write them), line indexes,
//! reading files with limits, the stack size of analysis threads.

pub mod alloc;
pub mod cpu;
pub mod duration;
pub mod files;
pub mod lines;

/// Development and test hooks, read from the environment once, by the binary
/// (`DevHooks::from_env`), never deep in library code. None changes a finding.
#[derive(Clone, Debug, Default)]
pub struct DevHooks {
    /// `MSGAUDIT_CHECK_PREFILTER=1`: lower every crate whole as well and report on
    /// stderr each function the prefilter's rounds model differently.
    pub check_prefilter: bool,
    /// `MSGAUDIT_DEBUG_PREFILTER=1`: print each round of the prefilter.
    pub debug_prefilter: bool,
    /// `MSGAUDIT_DEBUG_IR=name`: print the model of the functions so named.
    pub debug_ir: Option<String>,
    /// `MSGAUDIT_SHARD_MIN_FILES=n`: crates of `n` files or more are lowered on
    /// several threads (tests of the sharding; default 48).
    pub shard_min_files: Option<usize>,
    /// `MSGAUDIT_FAULT_INJECT=suffix`: lowering a file whose path ends so panics
    /// (tests of the isolation of internal errors); `oom:suffix`: it takes memory
    /// until the system refuses it (tests of running out of memory).
    pub fault_inject: Option<String>,
    /// `MSGAUDIT_MEMORY_BUDGET_MIB=n`: the run's memory budget for crates analyzed at
    /// one time (tests of the admission; default `driver::budget::RUN_MEMORY_BUDGET`).
    pub memory_budget_mib: Option<u64>,
}

impl DevHooks {
    pub fn from_env() -> DevHooks {
        let var = |name: &str| std::env::var(name).ok();
        DevHooks {
            check_prefilter: var("MSGAUDIT_CHECK_PREFILTER").is_some(),
            debug_prefilter: var("MSGAUDIT_DEBUG_PREFILTER").is_some(),
            debug_ir: var("MSGAUDIT_DEBUG_IR"),
            shard_min_files: var("MSGAUDIT_SHARD_MIN_FILES").and_then(|v| v.parse().ok()),
            fault_inject: var("MSGAUDIT_FAULT_INJECT"),
            memory_budget_mib: var("MSGAUDIT_MEMORY_BUDGET_MIB").and_then(|v| v.parse().ok()),
        }
    }
}

/// Stack size of analysis threads: syn and the lowering recurse over the syntax tree.
pub const STACK_SIZE: usize = 64 << 20;
