// MA011 (fred, expected at `incr_by`, line 19): the same consumer as
// fixtures/ma011_non_idempotent_effect/bad_fred_stream_incr_by_points.rs, but `Pool` comes
// through `use fred::prelude::*` (as fred's own examples write it).
use fred::prelude::*;
use fred::types::streams::XReadResponse;

const STREAM: &str = "loyalty.points-earned";
const GROUP: &str = "points-counter";

pub async fn run(client: Pool, consumer: &str) -> Result<(), fred::error::Error> {
    loop {
        let reply: XReadResponse<String, String, String, String> = client
            .xreadgroup_map(GROUP, consumer, Some(100), Some(5_000), false, STREAM, ">")
            .await?;
        for (_stream, entries) in reply {
            for (id, fields) in entries {
                let account = fields.get("account_id").cloned().unwrap_or_default();
                let points: i64 = fields.get("points").and_then(|p| p.parse().ok()).unwrap_or(0);
                let _: i64 = client.incr_by(format!("points:{account}"), points).await?; //~ MA011
                let _: i64 = client.xack(STREAM, GROUP, &id).await?;
            }
        }
    }
}
