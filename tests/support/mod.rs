//! Helpers shared by the format tests.

use serde_json::Value;

/// A SARIF log as snapshotted: the rule catalogue reduced to its ids and the
/// version replaced, since both change with every rule and release (the test of
/// the descriptors checks them against `rules::ALL` instead), and `%SRCROOT%`'s
/// `uri` (the directory the test ran in) replaced.
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
    // The directory the test ran in.
    let root = &mut log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"];
    if root.get("uri").is_some() {
        root["uri"] = Value::from("file:///[cwd]/");
    }
    serde_json::to_string_pretty(&log).unwrap()
}
