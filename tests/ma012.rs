//! MA012's pipeline description through `msgaudit::check`: a bad description is an
//! input error with its position, and the rest of the tree is still analyzed.

use std::fs;

#[test]
fn bad_pipeline_description_is_an_input_error_with_position() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("msgaudit-pipeline.yml"),
        "version: 1\ntopics:\n  orders:\n    replay_windw: 7d\nstages:\n  - name: billing\n    dedup:\n      retention: two days\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("values.yaml"),
        "msgaudit:\n  topics:\n    orders: 7d\n  stages:\n    - name: a\n      consumes: orders\n      dedup: {retention: 1d}\n",
    )
    .unwrap();
    let report =
        msgaudit::check(&[dir.path().to_path_buf()], &msgaudit::Options::default()).unwrap();
    let errors: Vec<(u32, &str)> = report
        .errors
        .iter()
        .map(|e| (e.line.unwrap_or(0), e.message.as_str()))
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].0, 4);
    assert!(
        errors[0].1.contains("unknown key `replay_windw`"),
        "{errors:?}"
    );
    assert_eq!(errors[1].0, 8);
    assert!(
        errors[1].1.contains("`two days` is not a duration"),
        "{errors:?}"
    );
    // The other file is still analyzed: its stage keeps dedup records shorter than
    // the topic's window.
    let codes: Vec<&str> = report.findings.iter().map(|f| f.code).collect();
    assert_eq!(codes, vec!["MA012"]);
    assert!(report.findings[0].message.contains("kept 1 day"));
}
