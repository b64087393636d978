//! `passk score` on results files, and how pass@k is reported when some problems have
//! fewer samples than k.

use passk_tests::{finish, passk, write_jsonl};
use serde_json::{json, Value};

fn results_with(counts: &[(&str, usize, usize)]) -> Vec<Value> {
    let mut records = Vec::new();
    for &(task, n, c) in counts {
        for i in 0..n {
            records.push(json!({"task_id": task, "completion": "", "passed": i < c, "result": "x"}));
        }
    }
    records
}

fn summary_of(args: &[&str], records: &[Value]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    write_jsonl(&results, records);
    let summary = dir.path().join("summary.json");
    let finished = finish(passk(["score"]).arg(&results).args(args).arg("--summary").arg(&summary));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    (serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap(), finished.stderr)
}

#[test]
fn pass_at_k_per_problem_and_averaged() {
    let (summary, _) = summary_of(&["--k", "1,2"], &results_with(&[("a", 4, 1), ("b", 4, 4), ("c", 4, 0)]));
    let close = |value: &Value, expected: f64| (value.as_f64().unwrap() - expected).abs() < 1e-12;
    assert!(close(&summary["pass@1"], (0.25 + 1.0 + 0.0) / 3.0), "{summary}");
    // pass@2 for n=4, c=1: 1 - C(3,2)/C(4,2) = 1/2.
    assert!(close(&summary["pass@2"], (0.5 + 1.0 + 0.0) / 3.0), "{summary}");
    // pass^2 for n=4, c=1: C(1,2)/C(4,2) = 0.
    let first = json!({"task_id": "a", "n": 4, "c": 1, "pass@1": 0.25, "pass@2": 0.5, "pass^1": 0.25, "pass^2": 0.0});
    assert_eq!(summary["per_problem"][0], first);
    assert_eq!(summary["samples"], 12);
    assert_eq!(summary["problems"], 3);
    assert_eq!(summary["counts"], json!({"failed": 7, "passed": 5}));
}

#[test]
fn a_k_beyond_some_problems_samples_is_left_out_with_a_warning() {
    let (summary, stderr) = summary_of(&["--k=1,5,10"], &results_with(&[("a", 10, 3), ("b", 5, 1), ("c", 4, 4)]));
    assert!(summary.get("pass@1").is_some());
    assert!(summary.get("pass@5").is_none() && summary.get("pass@10").is_none(), "{summary}");
    assert_eq!(summary["left_out"]["pass@5"], json!({"short": 1, "problems": 3}));
    assert_eq!(summary["left_out"]["pass@10"], json!({"short": 2, "problems": 3}));
    assert!(stderr.contains("pass@5 left out: 1 of 3 problems have fewer than 5 samples"), "{stderr}");
    assert!(stderr.contains("pass@10 left out: 2 of 3 problems have fewer than 10 samples"), "{stderr}");
}

#[test]
fn results_with_infrastructure_errors_get_no_pass_at_k() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let mut records = results_with(&[("a", 3, 1)]);
    records.push(json!({"task_id": "a", "passed": false, "status": "infrastructure"}));
    write_jsonl(&results, &records);
    let summary = dir.path().join("summary.json");
    let finished = finish(passk(["score"]).arg(&results).arg("--summary").arg(&summary));
    assert_eq!(finished.code, Some(3), "{}", finished.stderr);
    assert!(finished.stdout.contains("not reported"), "{}", finished.stdout);
    assert!(finished.stderr.contains("1 sample has no verdict"), "{}", finished.stderr);
    let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(summary["complete"], false);
    assert!(summary.get("pass@1").is_none());
    assert_eq!(summary["counts"]["infrastructure"], 1);
}

/// Regression: HumanEval+'s and MBPP+'s tables gave two lines `variance pass@1: ...`,
/// the second of them base_pass@1's under pass@1's name.
#[test]
fn each_variance_line_names_its_own_score() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let line = |task: &str, passed: bool, base_passed: bool| json!({"task_id": task, "completion": "", "passed": passed, "base_passed": base_passed, "result": "x"});
    let records = [line("a", true, true), line("a", false, true), line("b", false, false), line("b", false, true)];
    write_jsonl(&results, &records);
    let finished = finish(passk(["score"]).arg(&results).args(["--k", "1"]));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let variance: Vec<&str> =
        finished.stdout.lines().filter(|line| line.trim_start().starts_with("variance")).collect();
    assert_eq!(variance.len(), 2, "{}", finished.stdout);
    assert!(variance[0].contains(" pass@1: "), "{}", finished.stdout);
    assert!(variance[1].contains(" base_pass@1: "), "{}", finished.stdout);
}

/// Regression: a problem set given to `passk score` or `passk compare` was told only that
/// "field `passed` is missing" (or, MBPP's, that `task_id` must be a string), as if it
/// were a damaged results file.
#[test]
fn a_problem_set_given_as_results_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let mbpp = dir.path().join("mbpp.jsonl");
    write_jsonl(&mbpp, &[json!({"task_id": 11, "text": "", "code": "", "test_list": [], "test_setup_code": ""})]);
    let basic = passk_tests::repo_root().join("problems/basic.jsonl");
    for problems in [&basic, &mbpp] {
        let score = finish(passk(["score"]).arg(problems));
        let compare = finish(passk(["compare"]).arg(problems).arg(problems));
        for finished in [score, compare] {
            assert_eq!(finished.code, Some(2), "{}", finished.stderr);
            let expected = format!("{}:1: this is a problem set (fields task_id, ", problems.display());
            assert!(finished.stderr.contains(&expected), "{}", finished.stderr);
            assert!(
                finished.stderr.contains("results are what `passk evaluate SAMPLES --problems"),
                "{}",
                finished.stderr
            );
        }
    }
}

/// Regression: `passk score` on the record of settings a complete run keeps beside its
/// results (`<results>.run.json`) was told to write each JSON object on a line of its own.
#[test]
fn a_runs_settings_record_given_as_results_names_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[json!({"task_id": "basic/0", "completion": "    return values\n"})]);
    let results = dir.path().join("results.jsonl");
    let evaluated =
        finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--partial", "--results"]).arg(&results));
    assert_eq!(evaluated.code, Some(0), "{}", evaluated.stderr);
    let settings = dir.path().join("results.jsonl.run.json");
    let scored = finish(passk(["score"]).arg(&settings));
    assert_eq!(scored.code, Some(2), "{}", scored.stderr);
    let expected = format!(
        "{}: this is the record of a run's settings that passk keeps beside its results; give the results file, {}",
        settings.display(),
        results.display()
    );
    assert!(scored.stderr.contains(&expected), "{}", scored.stderr);
}
