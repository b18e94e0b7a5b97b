use super::declare_rule;

declare_rule! {
    /// ## What it does
    ///
    /// TODO
    pub static MA001 = {
        code: "MA001",
        name: "ack-before-commit",
        severity: Error,
        summary: "A message is acked, its offset committed or it is deleted before the transaction holding its effect commits, or before the effect runs at all.",
        boundary: "effect/progress order",
    };
}
