//! Identical samples run once, memory that does not grow with the number of samples,
//! and more workers than cores without false time-outs.

use passk_tests::{finish, humaneval_dir, machine_to_myself, passk, read_jsonl, repo_root, write_jsonl};
use serde_json::{json, Value};

fn canonical(task: usize) -> String {
    let problems = std::fs::read_to_string(repo_root().join("problems/basic.jsonl")).unwrap();
    let problem: Value = serde_json::from_str(problems.lines().nth(task).unwrap()).unwrap();
    problem["canonical_solution"].as_str().unwrap().to_owned()
}

fn evaluate(records: &[Value], extra: &[&str]) -> (Vec<Value>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, records);
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .args(["--problems", "basic", "--k", "1", "--results"])
            .arg(&results)
            .arg("--summary")
            .arg(&summary)
            .args(extra),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    (read_jsonl(&results), serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap())
}

#[test]
fn identical_samples_run_once_and_every_one_gets_the_verdict() {
    let wrong = "    return []\n";
    let mut records = Vec::new();
    for i in 0..30 {
        let completion = if i % 3 == 0 { wrong.to_owned() } else { canonical(0) };
        records.push(json!({"task_id": "basic/0", "completion": completion, "sample": i}));
    }
    // The same text answering another problem is another program.
    records.push(json!({"task_id": "basic/1", "completion": wrong, "sample": 30}));
    let (results, summary) = evaluate(&records, &[]);
    assert_eq!(summary["run"]["executions"], 3, "{}", summary["run"]);
    assert_eq!(summary["run"]["reused"], 28);
    for (i, result) in results.iter().enumerate() {
        assert_eq!(result["sample"], i, "each result keeps its own sample's fields");
        assert_eq!(result["passed"], i % 3 != 0 && i != 30, "{result}");
    }
    let (_, summary) = evaluate(&records, &["--no-dedup"]);
    assert_eq!(summary["run"]["executions"], 31, "--no-dedup runs every sample");
    assert_eq!(summary["counts"], json!({"failed": 11, "passed": 20}));
}

/// The harness's own peak memory at 100,000 samples is no more than at 10,000. The first
/// sample is slow, so everything read behind it waits; this guards the bound on how far
/// ahead samples are read.
#[test]
fn memory_does_not_grow_with_the_number_of_samples() {
    let _machine = machine_to_myself();
    let programs: Vec<String> = (0..24).map(canonical).collect();
    let slow = format!("{}import time\ntime.sleep(2)\n", programs[0]);
    let samples = |n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| {
                let task = i % 24;
                let completion = if i == 0 { &slow } else { &programs[task] };
                json!({"task_id": format!("basic/{task}"), "completion": completion, "note": format!("sample {i}")})
            })
            .collect()
    };
    let peak = |n: usize| -> i64 {
        let (results, summary) = evaluate(&samples(n), &[]);
        assert_eq!(results.len(), n);
        assert_eq!(summary["counts"]["passed"], n);
        summary["run"]["harness_peak_rss_kib"].as_i64().unwrap()
    };
    let small = peak(10_000);
    let large = peak(100_000);
    assert!(large < small + 8 * 1024, "peak memory grew from {small} KiB to {large} KiB");
}

#[test]
fn more_workers_than_cores_give_no_false_time_outs() {
    let _machine = machine_to_myself();
    let problems = humaneval_dir().join("HumanEval.jsonl.gz");
    let records = passk_tests::humaneval_canonical_samples();
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let jobs = (cores * 4).to_string();
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .arg("--problems")
            .arg(&problems)
            .args(["--jobs", &jobs, "--results"])
            .arg(&results),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let not_passed: Vec<Value> = read_jsonl(&results).into_iter().filter(|r| r["passed"] != true).collect();
    assert_eq!(not_passed, Vec::<Value>::new());
}
