use super::declare_rule;
use super::pairs::{code, label};
use crate::analysis::serverless::linked;
use crate::diagnostic::Finding;
use crate::ir::{BatchHandler, EventSourceMapping};

declare_rule! {
    /// ## What it does
    ///
    /// Finds a serverless batch handler (a function handed to `lambda_runtime::run`
    /// whose event is an SQS, Kinesis, DynamoDB Streams or Kafka batch) that reports
    /// which records failed, by returning a partial-batch response (`SqsBatchResponse`,
    /// `KinesisEventResponse`, `DynamoDbEventResponse` with `batch_item_failures`),
    /// while the event source mapping that triggers it, in the deploy YAML of the tree
    /// (AWS SAM, CloudFormation, the Serverless Framework), does not enable
    /// `ReportBatchItemFailures`.
    ///
    /// ## Why is this bad?
    ///
    /// Without `ReportBatchItemFailures` the service does not read the response: a
    /// handler that returns `Ok` has processed the whole batch, as far as the service
    /// knows. The records listed as failed are deleted from the queue (or the stream's
    /// position moves past them) with the others: they are **lost**, never retried.
    ///
    /// Boundary broken: per-record failure reporting.
    ///
    /// ## Example
    ///
    /// ```yaml
    /// OrdersFunction:
    ///   Type: AWS::Serverless::Function
    ///   Properties:
    ///     CodeUri: target/lambda/orders/
    ///     Events:
    ///       Queue:
    ///         Type: SQS
    ///         Properties:
    ///           Queue: !GetAtt OrdersQueue.Arn
    /// ```
    ///
    /// ```rust
    /// async fn handler(event: LambdaEvent<SqsEvent>) -> Result<SqsBatchResponse, Error> {
    ///     let mut response = SqsBatchResponse::default();
    ///     // ... push the ids of the records that failed ...
    ///     Ok(response)
    /// }
    /// ```
    ///
    /// Use instead:
    ///
    /// ```yaml
    ///         Properties:
    ///           Queue: !GetAtt OrdersQueue.Arn
    ///           FunctionResponseTypes:
    ///             - ReportBatchItemFailures
    /// ```
    ///
    /// ## Not reported
    ///
    /// - No deploy YAML in the tree, or a mapping that links to no handler: a mapping
    ///   links by the binary it names (SAM `CodeUri`'s last component,
    ///   `Metadata.BuildProperties.Binary`, `Handler`, the Serverless `handler`, a
    ///   CloudFormation function's `Code.S3Key` or `Handler`) matching the handler's
    ///   package, Cargo target or `[[bin]]` name, or, when the tree has exactly one batch
    ///   handler for that event type and one such mapping, to that one.
    /// - A handler that returns no partial-batch response (its `Err` redelivers the
    ///   whole batch, as it should without the setting).
    /// - `FunctionResponseTypes` written through a condition (`!If`): read as set.
    ///
    /// Each tool reads its own key: `FunctionResponseTypes` (a list) in AWS SAM and
    /// CloudFormation, `functionResponseType` (one value) in a Serverless Framework
    /// `sqs:` or `stream:` event. The other tool's spelling enables nothing, and is
    /// reported.
    ///
    /// ## Handlers
    ///
    /// The handler is the function handed to `run` (directly, through `service_fn`, or
    /// through a closure that forwards its event: `move |event| async move {
    /// handler(pool, event).await }`); its event may be any parameter, after the state
    /// it is given. A closure whose own body is the handler counts, named by its place.
    ///
    /// ## Known limits
    ///
    /// - A template this reader cannot read (a `Fn::Transform` in the resource) is
    ///   counted as `deploy_template_not_read`, not checked.
    pub static MA015 = {
        code: "MA015",
        name: "batch-failures-not-reported",
        severity: Error,
        concern: AckOnFailure,
        consequence: Loss,
        summary: "A serverless batch handler reports per-record failures, but its event source mapping does not enable ReportBatchItemFailures.",
        boundary: "per-record failure reporting",
    };
}

pub fn check(mappings: &[EventSourceMapping], handlers: &[BatchHandler]) -> Vec<Finding> {
    let mut out = Vec::new();
    for m in mappings.iter().filter(|m| !m.reports_failures) {
        let reporting: Vec<(&BatchHandler, &crate::ir::Loc)> = linked(m, mappings, handlers)
            .into_iter()
            .filter_map(|h| h.partial_return.as_ref().map(|at| (h, at)))
            .collect();
        let Some((first, _)) = reporting.first() else {
            continue;
        };
        let mut labels: Vec<_> = reporting
            .iter()
            .map(|(h, at)| {
                label(
                    at,
                    format!("{} reports the records that failed here", code(&h.name)),
                )
            })
            .collect();
        labels.sort();
        labels.dedup();
        out.push(MA015.finding(
            &m.loc,
            format!(
                "the {} event source of {} does not enable `ReportBatchItemFailures`, but its handler {} returns the records that failed",
                first.source.describe(),
                code(&m.function),
                code(&first.name),
            ),
            "the service ignores the partial-batch response: when the handler returns, the whole \
             batch counts as processed and the records it listed as failed are deleted (lost)"
                .into(),
            labels,
            "add `FunctionResponseTypes: [ReportBatchItemFailures]` to the event source \
             (`functionResponseType: ReportBatchItemFailures` in serverless.yml)"
                .into(),
        ));
    }
    out
}

/// MA015 as the dispatcher runs it ([`super::Rule`]).
pub struct Check;

impl super::Rule for Check {
    fn meta(&self) -> &'static super::RuleMeta {
        &MA015
    }

    fn check_tree(&self, tree: &super::TreeInput) -> Vec<Finding> {
        check(tree.mappings, tree.handlers)
    }
}
