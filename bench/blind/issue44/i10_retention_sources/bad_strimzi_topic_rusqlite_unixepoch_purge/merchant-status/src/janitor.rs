// Bad (MA012): processed event ids are purged after one day (`unixepoch() - 86400`), while
// the `payments` KafkaTopic keeps 3 days (deploy/kafka/payments-topic.yaml): a replay of day 2
// re-applies events. SPEC MA012: "the dedup store's retention (TTL, cleanup interval) is shorter
// than the replay window of the source (topic `retention.ms` ...)"; primary in Rust: "the literal
// that holds the retention (... the interval in the cleanup SQL)".
use rusqlite::Connection;

pub fn purge_expired(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM processed_events WHERE seen_at < unixepoch() - 86400", //~ MA012
        [],
    )?;
    Ok(())
}
