// MA008: EventBridge `put_events` can fail per entry (`failed_entry_count`, each entry's
// `error_code`) while the call succeeds; the result is discarded with `let _ =` after `?`. No
// progress record follows, so this is an unchecked publish: MA008 at `put_events`.
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use aws_sdk_eventbridge::Client as EventBridgeClient;

pub async fn emit_signups(eb: &EventBridgeClient, bus: &str, user_ids: &[String]) -> anyhow::Result<()> {
    let entries: Vec<PutEventsRequestEntry> = user_ids
        .iter()
        .map(|id| {
            PutEventsRequestEntry::builder()
                .event_bus_name(bus)
                .source("accounts.signup")
                .detail_type("UserSignedUp")
                .detail(format!(r#"{{"user_id":"{id}"}}"#))
                .build()
        })
        .collect();
    let _ = eb.put_events().set_entries(Some(entries)).send().await?; //~ MA008
    Ok(())
}
