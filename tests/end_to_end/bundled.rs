//! The README's first command: a full evaluation of the bundled problem set and its
//! samples, with nothing downloaded.

use passk_tests::{finish, passk, read_jsonl, repo_root};
use serde_json::Value;

#[test]
fn the_bundled_samples_get_the_verdicts_they_were_written_for() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let finished = finish(
        passk(["evaluate"])
            .arg(repo_root().join("problems/basic-samples.jsonl"))
            .args(["--problems", "basic", "--results"])
            .arg(&results)
            .arg("--summary")
            .arg(&summary),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let results = read_jsonl(&results);
    assert!(results.len() >= 48);
    for result in &results {
        let kind = result["kind"].as_str().unwrap();
        let should_pass = kind == "correct" || kind == "hostile: prints 50 MB and then passes";
        assert_eq!(result["passed"], should_pass, "{kind}: {result}");
    }
    insta::assert_snapshot!("bundled-table", finished.stdout);

    let mut summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    for machine_specific in ["samples", "results", "python", "python_version", "jobs"] {
        summary["settings"][machine_specific] = Value::from("[redacted]");
    }
    summary.as_object_mut().unwrap().remove("per_problem");
    insta::assert_json_snapshot!("bundled-summary", summary);
}
