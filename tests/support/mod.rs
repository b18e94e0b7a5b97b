//! Helpers shared by the format tests.

use serde_json::Value;

/// A SARIF log as snapshotted: the rule catalogue reduced to its ids and the
/// version replaced, since both change with every rule and release (the test of
/// the descriptors checks them against `rules::ALL` instead).
pub fn sarif_for_snapshot(text: &str) -> String {
    let mut log: Value = serde_json::from_str(text).unwrap();
    let driver = &mut log["runs"][0]["tool"]["driver"];
    let ids: Vec<Value> = driver["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    driver["rules"] = Value::from(ids);
    for key in ["version", "semanticVersion"] {
        driver[key] = Value::from("[version]");
    }
    serde_json::to_string_pretty(&log).unwrap()
}
