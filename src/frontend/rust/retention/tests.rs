use super::*;

fn lit(sql: &str) -> Option<u64> {
    match interval_in(sql)? {
        Interval::Literal { millis, .. } => Some(millis),
        _ => None,
    }
}

/// The names this reader starts from, as the packs give them.
#[test]
fn names_come_from_the_packs() {
    let apis = Apis::builtin();
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(
        sorted(names(&apis)),
        [
            "NewTopic",
            "exec",
            "exec_batch",
            "exec_drop",
            "exec_first",
            "exec_fold",
            "exec_iter",
            "exec_map",
            "execute",
            "execute_iter",
            "execute_raw",
            "execute_single_page",
            "execute_unpaged",
            "query",
            "query",
            "query_as",
            "query_as_with",
            "query_iter",
            "query_one",
            "query_opt",
            "query_raw",
            "query_scalar",
            "query_single_page",
            "query_unpaged",
            "query_with",
            "sql_query",
            "subscribe",
            "with_topic",
            "with_topic_partitions"
        ]
    );
    assert_eq!(
        sorted(key_store_names(&apis)),
        [
            "cmd",
            "expire",
            "pexpire",
            "pset_ex",
            "set_ex",
            "set_nx",
            "set_options"
        ]
    );
    assert!(names_a_key_store(
        &apis.ttl_modules,
        "use redis::AsyncCommands;"
    ));
    assert!(!names_a_key_store(&apis.ttl_modules, "use sqlx::PgPool;"));
}

#[test]
fn intervals_in_cleanup_sql() {
    let d2 = 2 * DAY;
    assert_eq!(
        lit("DELETE FROM processed_events WHERE processed_at < now() - interval '2 days'"),
        Some(d2)
    );
    assert_eq!(
        lit("DELETE FROM processed_events WHERE at < NOW() - INTERVAL '48 hours'"),
        Some(d2)
    );
    assert_eq!(
        lit("DELETE FROM inbox WHERE at < NOW() - INTERVAL 2 DAY"),
        Some(d2)
    );
    assert_eq!(
        lit("DELETE FROM inbox WHERE at < now() - interval '2' day"),
        Some(d2)
    );
    assert_eq!(
        lit("DELETE FROM inbox WHERE at < datetime('now', '-2 days')"),
        Some(d2)
    );
    assert_eq!(
        interval_in("DELETE FROM inbox WHERE at < now() - $1::interval"),
        Some(Interval::Bind {
            index: 1,
            unit: None
        })
    );
    assert_eq!(
        interval_in("DELETE FROM inbox WHERE id <> $1 AND at < now() - $2 * interval '1 day'"),
        Some(Interval::Bind {
            index: 2,
            unit: Some(DAY)
        })
    );
    assert_eq!(
        interval_in("DELETE FROM inbox WHERE at < NOW() - INTERVAL ? HOUR"),
        Some(Interval::Bind {
            index: 1,
            unit: Some(HOUR)
        })
    );
    assert_eq!(
        interval_in("DELETE FROM inbox WHERE at < $1"),
        Some(Interval::Cutoff)
    );
}
