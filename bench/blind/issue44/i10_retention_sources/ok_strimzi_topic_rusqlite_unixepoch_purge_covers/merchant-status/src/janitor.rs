// OK (MA012): processed event ids are kept two days (`unixepoch() - 172800`), longer than
// the 12 hours the `payments` KafkaTopic retains. SPEC MA012 fires only when the dedup retention
// "is shorter than the replay window of the source".
use rusqlite::Connection;

pub fn purge_expired(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM processed_events WHERE seen_at < unixepoch() - 172800",
        [],
    )?;
    Ok(())
}
