//! What the packs say of serverless runtimes (`[lambda]`, `[[batch_events]]`): the
//! calls that run a handler, the event type that wraps a handler's event, and the
//! batch event types with their partial-batch responses (docs/what-is-analyzed.md, serverless event
//! sources). The Rust front end reads them to find batch handlers.

use serde::Deserialize;

use crate::ir::BatchSource;

/// `[lambda]`: how a handler is handed to the runtime.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RuntimeSpec {
    /// Path calls (suffix match after `use` resolution) whose argument is the handler
    /// (`lambda_runtime::run`).
    #[serde(default)]
    pub runs: Vec<String>,
    /// Calls whose one argument is the handler they wrap (`service_fn`).
    #[serde(default)]
    pub handler_wrappers: Vec<String>,
    /// Types whose first type argument is the handler's event (`LambdaEvent<E>`).
    #[serde(default)]
    pub event_wrappers: Vec<String>,
    /// Field names of a partial-batch response that list the failed records
    /// (`batch_item_failures`): a push into one keeps that record.
    #[serde(default)]
    pub failure_lists: Vec<String>,
    /// Methods of a partial-batch response that list a failed record themselves
    /// (`response.add_failure(id)`): a call keeps that record.
    #[serde(default)]
    pub failure_adders: Vec<String>,
}

/// `[[batch_events]]`: event types of one batch source and the responses that list
/// the records that failed.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BatchEventSpec {
    /// `sqs`, `kinesis`, `dynamodb` or `kafka`.
    pub source: String,
    /// Event type names (last path segment).
    pub events: Vec<String>,
    /// Partial-batch response type names (last path segment).
    #[serde(default)]
    pub responses: Vec<String>,
    /// The item types of the response's failure list (`BatchItemFailure`).
    #[serde(default)]
    pub failure_items: Vec<String>,
    /// Fields of a record that the source always sets, though they are typed as an
    /// `Option` (SQS `message_id`): `if let Some(id) = record.message_id { .. }`
    /// always runs its body.
    #[serde(default)]
    pub record_ids: Vec<String>,
}

/// `[worker]`: a job queue's worker, built by a chain of method calls, that runs the
/// function handed to it once per job: its first parameter is the job received, and
/// its `Ok` return acks the job (an `Err` keeps it for a retry).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WorkerSpec {
    /// Types whose path call starts the builder chain (`WorkerBuilder::new(..)`).
    #[serde(default)]
    pub builders: Vec<String>,
    /// Methods of that chain whose one argument is the handler (`build_fn`).
    #[serde(default)]
    pub handler_methods: Vec<String>,
    /// Calls whose one argument is the handler they wrap (`service_fn`).
    #[serde(default)]
    pub handler_wrappers: Vec<String>,
}

/// The packs' serverless knowledge, merged, with the job-queue workers whose
/// handler's return acks its job in the same way.
#[derive(Clone, Debug, Default)]
pub struct Serverless {
    pub runtime: RuntimeSpec,
    pub events: Vec<(BatchSource, BatchEventSpec)>,
    pub worker: WorkerSpec,
}

impl Serverless {
    pub fn add_worker(&mut self, worker: Option<WorkerSpec>) {
        if let Some(w) = worker {
            self.worker.builders.extend(w.builders);
            self.worker.handler_methods.extend(w.handler_methods);
            self.worker.handler_wrappers.extend(w.handler_wrappers);
        }
    }

    pub fn add(&mut self, runtime: Option<RuntimeSpec>, events: Vec<BatchEventSpec>) {
        if let Some(r) = runtime {
            self.runtime.runs.extend(r.runs);
            self.runtime.handler_wrappers.extend(r.handler_wrappers);
            self.runtime.event_wrappers.extend(r.event_wrappers);
            self.runtime.failure_lists.extend(r.failure_lists);
            self.runtime.failure_adders.extend(r.failure_adders);
        }
        for e in events {
            let source = BatchSource::from_name(&e.source)
                .unwrap_or_else(|| panic!("[[batch_events]] source {:?} is unknown", e.source));
            self.events.push((source, e));
        }
    }

    /// The batch source of an event type, by its path (resolved through `use`).
    pub fn source_of_event(&self, segs: &[String]) -> Option<BatchSource> {
        self.events
            .iter()
            .find(|(_, e)| e.events.iter().any(|n| super::path_ends_with(segs, n)))
            .map(|(s, _)| *s)
    }

    /// Whether `name` (last path segment) is a partial-batch response type.
    pub fn is_response(&self, name: &str) -> bool {
        self.events
            .iter()
            .any(|(_, e)| e.responses.iter().any(|n| n == name))
    }

    /// Whether the call path `segs` (as written or resolved) is a call that runs a
    /// handler: its segments end with those of one of `runs`.
    pub fn is_run(&self, segs: &[String]) -> bool {
        self.runtime
            .runs
            .iter()
            .any(|r| super::path_ends_with(segs, r))
    }

    pub fn is_handler_wrapper(&self, segs: &[String]) -> bool {
        self.runtime
            .handler_wrappers
            .iter()
            .any(|r| super::path_ends_with(segs, r))
    }

    /// Whether `name` is a failure list field (`batch_item_failures`).
    pub fn is_failure_list(&self, name: &str) -> bool {
        self.runtime.failure_lists.iter().any(|n| n == name)
    }

    /// Whether `name` is a response's method that lists a failed record.
    pub fn is_failure_adder(&self, name: &str) -> bool {
        self.runtime.failure_adders.iter().any(|n| n == name)
    }

    /// Whether `name` is a record's field that the source always sets.
    pub fn is_record_id(&self, name: &str) -> bool {
        self.events
            .iter()
            .any(|(_, e)| e.record_ids.iter().any(|n| n == name))
    }

    /// Whether `name` (last path segment) is the item type of a failure list.
    pub fn is_failure_item(&self, name: &str) -> bool {
        self.events
            .iter()
            .any(|(_, e)| e.failure_items.iter().any(|n| n == name))
    }

    pub fn is_event_wrapper(&self, name: &str) -> bool {
        self.runtime.event_wrappers.iter().any(|n| n == name)
    }
}
