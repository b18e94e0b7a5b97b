//! One Rust file through the path `analysis::analyze` takes for a crate: the
//! front end (with its pre-parse refusal of deep nesting), the ordering facts,
//! the rules and the inventory, then the cross-crate rules. The inner functions
//! are called directly because `analyze` catches panics per crate, which would
//! hide them from the fuzzer. Runs on a thread with the analyzer's stack size.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use msgaudit::analysis::{flow, inventory, STACK_SIZE};
use msgaudit::apis::Apis;
use msgaudit::frontend::rust;
use msgaudit::source::{FileKind, SourceFile};

fn apis() -> &'static Apis {
    static APIS: OnceLock<Apis> = OnceLock::new();
    APIS.get_or_init(Apis::builtin)
}

fn run(text: String) {
    let apis = apis();
    let file = SourceFile {
        path: "src/lib.rs".into(),
        abs: "src/lib.rs".into(),
        text,
        kind: FileKind::Rust,
        crate_key: String::new(),
        package_key: String::new(),
        bom: false,
    };
    // Tests included, so that `#[cfg(test)]` code is lowered too.
    let lowered = rust::lower_crate("", &[&file], apis, true);
    let tables = flow::Tables {
        dedup: apis.dedup_tables.clone(),
        outbox: apis.outbox_tables.clone(),
        unique: Vec::new(),
    };
    let facts = flow::crate_facts(&lowered.krate, &tables);
    let findings = msgaudit::rules::check_all(&lowered.krate, &facts);
    let mut inv = inventory::crate_inventory(&inventory::CrateInput {
        krate: &lowered.krate,
        facts: &facts,
        tables: &tables,
        apis,
        retention: &lowered.retention,
    });
    inv.attach(&findings);
    let clients: Vec<(String, msgaudit::ir::KafkaClient)> = lowered
        .krate
        .functions
        .iter()
        .flat_map(|f| f.kafka_clients.iter().cloned())
        .map(|c| (String::new(), c))
        .collect();
    let crates = [(String::new(), lowered.retention)];
    let _ = msgaudit::rules::ma012_dedup_retention_window::check(
        &msgaudit::rules::ma012_dedup_retention_window::Input {
            crates: &crates,
            clients: &clients,
            windows: &[],
            stages: &[],
        },
    );
    let _ = msgaudit::rules::ma004_missing_read_committed::check(&clients);
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let text = text.to_string();
    // A panic in the thread aborts the process (libfuzzer-sys's panic hook).
    std::thread::Builder::new()
        .stack_size(STACK_SIZE)
        .spawn(move || run(text))
        .expect("spawn")
        .join()
        .expect("analysis thread panicked");
});
