//! What every layer may use and that knows nothing of messages: processor-time
//! accounting, durations (parsed and written as people write them), line indexes,
//! reading files with limits, the stack size of analysis threads.

pub mod cpu;
pub mod duration;
pub mod files;
pub mod lines;

/// Stack size of analysis threads: syn and the lowering recurse over the syntax tree.
pub const STACK_SIZE: usize = 64 << 20;
