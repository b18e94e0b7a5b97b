//! One YAML file through the YAML front end (parse with budget, every format, the
//! replay windows and the pipeline description), then the rules that read YAML
//! clients. Runs on a thread with the analyzer's stack size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use msgaudit::analysis::STACK_SIZE;
use msgaudit::frontend::yaml;
use msgaudit::source::{FileKind, SourceFile};

fn run(text: String) {
    // The relevance checks run first in `analyze`; run them, but lower every file.
    let path = "deploy/msgaudit-pipeline.yml";
    let _ = yaml::is_relevant(&text);
    let _ = yaml::topics::is_relevant(&text);
    let _ = yaml::pipeline::is_relevant(path, &text);
    let file = SourceFile {
        path: path.into(),
        abs: path.into(),
        text,
        kind: FileKind::Yaml,
        crate_key: String::new(),
        package_key: String::new(),
        bom: false,
    };
    let lowered = yaml::lower_file(&file);
    let clients: Vec<(String, msgaudit::ir::KafkaClient)> = lowered
        .clients
        .iter()
        .map(|c| (c.dir.clone(), c.client.clone()))
        .collect();
    let _ = msgaudit::rules::ma012_dedup_retention_window::check(
        &msgaudit::rules::ma012_dedup_retention_window::Input {
            crates: &[],
            clients: &clients,
            windows: &lowered.windows,
            stages: &lowered.stages,
        },
    );
    let _ = msgaudit::rules::ma004_missing_read_committed::check(&clients);
    let _ = msgaudit::rules::ma007_auto_ack::check_config(&lowered.clients);
    let _ = msgaudit::rules::ma008_unconfirmed_publish::check_config(&lowered.clients);
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let text = text.to_string();
    std::thread::Builder::new()
        .stack_size(STACK_SIZE)
        .spawn(move || run(text))
        .expect("spawn")
        .join()
        .expect("YAML thread panicked");
});
