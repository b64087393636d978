//! Identical samples run once, memory that does not grow with the number of samples,
//! and more workers than cores without false time-outs.

use std::process::Command;

use passk_tests::{finish, humaneval_dir, machine_to_myself, passk, passk_binary, read_jsonl, repo_root, write_jsonl};
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
            .args(["--problems", "basic", "--partial", "--k", "1", "--results"])
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

/// With one worker per CPU passk may use, each worker's driver, judge and candidates are
/// kept on one CPU (the same one: the judge's test compares its own set with the
/// candidate's); with fewer workers than CPUs the kernel places them.
#[test]
fn each_worker_keeps_to_a_cpu_of_its_own_only_when_there_is_one_per_cpu() {
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        eprintln!("skipped: needs two CPUs");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |jobs: &str, expected: &str| {
        let problems = dir.path().join(format!("problems-{jobs}.jsonl"));
        let test =
            format!("import os\n\ndef check(candidate):\n    found = candidate()\n    assert {expected}, found\n");
        write_jsonl(
            &problems,
            &[
                json!({"task_id": "cpus/0", "prompt": "import os\n\ndef cpus():\n", "entry_point": "cpus", "test": test}),
            ],
        );
        let samples = dir.path().join(format!("samples-{jobs}.jsonl"));
        let records: Vec<Value> = (0..8)
            .map(|i| json!({"task_id": "cpus/0", "completion": "    return sorted(os.sched_getaffinity(0))\n", "i": i}))
            .collect();
        write_jsonl(&samples, &records);
        let results = dir.path().join(format!("results-{jobs}.jsonl"));
        let summary = dir.path().join(format!("summary-{jobs}.json"));
        let mut command = Command::new("taskset");
        command.args(["-c", "0,1"]).arg(passk_binary()).arg("evaluate").arg(&samples).arg("--problems").arg(&problems);
        command
            .args(["--no-dedup", "--k", "1", "--jobs", jobs, "--summary"])
            .arg(&summary)
            .arg("--results")
            .arg(&results);
        let finished = finish(&mut command);
        assert_eq!(finished.code, Some(0), "{}", finished.stderr);
        for result in read_jsonl(&results) {
            assert_eq!(result["status"], "passed", "{result}");
        }
        let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
        summary["run"]["worker_cpus"].clone()
    };
    let one_cpu_each = run("2", "len(found) == 1 and found == sorted(os.sched_getaffinity(0))");
    assert_eq!(one_cpu_each, json!([0, 1]));
    assert_eq!(run("1", "found == [0, 1]"), Value::Null);
}
