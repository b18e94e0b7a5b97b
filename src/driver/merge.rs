//! The second half of the driver's run: the YAML files lowered on the pool, and the
//! results of crates and YAML files merged into the output and the facts the
//! tree-wide rules check.

use rayon::prelude::*;

use super::{AnalysisOutput, CrateResult, Tick};
use crate::diagnostic::InputError;
use crate::frontend::yaml;
use crate::ir::{BatchHandler, ConfigClient, EventSourceMapping, KafkaClient, PipelineStage};
use crate::ir::{ReplayWindow, RetentionFacts};
use crate::source::SourceFile;
use crate::support::cpu;
use std::collections::BTreeMap;

/// Lowers the YAML files on the pool's big-stack threads: serde-saphyr recurses once
/// per nesting level (bounded by its budget's `max_depth`). A panic is an input error
/// of its file.
pub(super) fn lower_yaml(
    pool: &rayon::ThreadPool,
    yaml_files: &[&SourceFile],
    bar: &indicatif::ProgressBar,
) -> Vec<yaml::Lowered> {
    pool.install(|| {
        yaml_files
            .par_iter()
            .map(|f| {
                let _tick = Tick(bar, 1);
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    cpu::timed(cpu::Phase::Yaml, || yaml::lower_file(f))
                }))
                .unwrap_or_else(|_| yaml::Lowered {
                    errors: vec![InputError {
                        path: f.path.clone(),
                        line: None,
                        column: None,
                        message: "internal error while analyzing this YAML file; please report"
                            .into(),
                    }],
                    ..Default::default()
                })
            })
            .collect()
    })
}

/// What the crates tell the tree-wide rules.
pub(super) struct CrateFacts {
    /// Kafka clients, with the directory they link in.
    pub clients: Vec<(String, KafkaClient)>,
    /// Each crate's dedup retention facts.
    pub retention: Vec<(String, RetentionFacts)>,
    /// Serverless batch handlers, with their binary's names.
    pub handlers: Vec<BatchHandler>,
}

/// Moves the crates' findings, inventory, errors and counts into `out`, and returns
/// what the tree-wide rules need of them.
pub(super) fn crate_results(
    results: Vec<CrateResult>,
    targets: &BTreeMap<String, Vec<String>>,
    out: &mut AnalysisOutput,
) -> CrateFacts {
    let mut clients = Vec::new();
    let mut retention = Vec::new();
    let mut handlers = Vec::new();
    for r in results {
        handlers.extend(r.handlers.into_iter().map(|(key, mut h)| {
            h.names = targets.get(&key).cloned().unwrap_or_default();
            h
        }));
        out.findings.extend(r.findings);
        out.inventory.extend(r.inventory);
        retention.push((r.key, r.retention));
        clients.extend(r.clients);
        out.errors.extend(r.errors);
        out.analyzed += r.analyzed;
        out.unparsed_bodies += r.unparsed_bodies;
        if r.unparsed > 0 {
            *out.skipped.entry("no_relevant_tokens".into()).or_default() += r.unparsed;
        }
        if r.skipped_tests > 0 {
            *out.skipped.entry("test_code_items".into()).or_default() += r.skipped_tests;
        }
    }
    CrateFacts {
        clients,
        retention,
        handlers,
    }
}

/// What the YAML files tell the tree-wide rules.
pub(super) struct YamlFacts {
    pub config_clients: Vec<ConfigClient>,
    pub windows: Vec<ReplayWindow>,
    pub stages: Vec<PipelineStage>,
    pub mappings: Vec<EventSourceMapping>,
}

/// Moves the YAML files' errors and counts into `out`, and returns what the
/// tree-wide rules need of them.
pub(super) fn yaml_results(results: Vec<yaml::Lowered>, out: &mut AnalysisOutput) -> YamlFacts {
    let mut config_clients = Vec::new();
    let mut windows = Vec::new();
    let mut stages = Vec::new();
    let mut mappings = Vec::new();
    for r in results {
        mappings.extend(r.mappings);
        if r.unread_deploy > 0 {
            *out.skipped
                .entry("deploy_template_not_read".into())
                .or_default() += r.unread_deploy;
        }
        windows.extend(r.windows);
        stages.extend(r.stages);
        if r.errors.is_empty() {
            out.analyzed += 1;
        }
        out.errors.extend(r.errors);
        config_clients.extend(r.clients);
    }
    YamlFacts {
        config_clients,
        windows,
        stages,
        mappings,
    }
}
