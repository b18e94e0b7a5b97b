// Bad (MA005): no consumer here — `apply_payment` takes the event id as a plain argument (a CLI
// replay tool and the consumer both call it). The `inbox` claim's changed-row count is dropped and
// the balance update runs anyway. SPEC: "MA005 also applies in any function whose claim goes into
// a table recognized as a dedup record by its name (`processed_*`, `inbox`, ...): a claim there
// whose result is ignored is a bug wherever it is written (the seed's SQLite consumer takes the
// event id as a plain argument)"; primary: "the dedup claim".
use rusqlite::{params, Connection};

pub fn apply_payment(conn: &mut Connection, event_id: &str, account: &str, cents: i64) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    tx.execute("INSERT OR IGNORE INTO inbox (event_id) VALUES (?1)", params![event_id])?; //~ MA005
    tx.execute(
        "UPDATE balances SET cents = cents + ?1 WHERE account = ?2",
        params![cents, account],
    )?;
    tx.commit()
}

pub fn replay(conn: &mut Connection, path: &std::path::Path) -> anyhow::Result<()> {
    for line in std::fs::read_to_string(path)?.lines() {
        let mut parts = line.splitn(3, ',');
        let (Some(id), Some(account), Some(cents)) = (parts.next(), parts.next(), parts.next()) else { continue };
        apply_payment(conn, id, account, cents.trim().parse()?)?;
    }
    Ok(())
}
