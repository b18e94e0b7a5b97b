// OK: the same plain function; the `inbox` claim's changed-row count is tested and a duplicate
// returns before the update. SPEC §1: "The result of the dedup claim (`INSERT … ON CONFLICT DO
// NOTHING`, rows affected / `RETURNING`) must gate the effect."
use rusqlite::{params, Connection};

pub fn apply_payment(conn: &mut Connection, event_id: &str, account: &str, cents: i64) -> rusqlite::Result<bool> {
    let tx = conn.transaction()?;
    let inserted = tx.execute("INSERT OR IGNORE INTO inbox (event_id) VALUES (?1)", params![event_id])?;
    if inserted == 0 {
        return Ok(false);
    }
    tx.execute(
        "UPDATE balances SET cents = cents + ?1 WHERE account = ?2",
        params![cents, account],
    )?;
    tx.commit()?;
    Ok(true)
}

pub fn replay(conn: &mut Connection, path: &std::path::Path) -> anyhow::Result<usize> {
    let mut applied = 0;
    for line in std::fs::read_to_string(path)?.lines() {
        let mut parts = line.splitn(3, ',');
        let (Some(id), Some(account), Some(cents)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if apply_payment(conn, id, account, cents.trim().parse()?)? {
            applied += 1;
        }
    }
    Ok(applied)
}
