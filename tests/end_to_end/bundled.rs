//! The README's first command: a full evaluation of the bundled problem set and its
//! samples, with nothing downloaded.

use std::io::Write;
use std::process::Command;

use passk_tests::{finish, passk, passk_binary, read_jsonl, repo_root, write_jsonl};
use serde_json::{json, Value};

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
    // What the host's control groups allow is the machine's.
    insta::with_settings!({ filters => vec![(r"(?m)^(  cgroups +).*$", "$1[redacted]")] }, {
        insta::assert_snapshot!("bundled-table", finished.stdout);
    });
    // Regression: the README's copy of this table lacked its `packages` line. It is
    // this table, but for the control groups, which are the machine's.
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let shown = readme.split("The first command prints a table like this").nth(1).unwrap();
    let shown = shown.split("```\n").nth(1).unwrap();
    let without_cgroups = |table: &str| -> Vec<String> {
        table.lines().filter(|line| !line.starts_with("  cgroups ")).map(str::to_owned).collect()
    };
    assert_eq!(without_cgroups(shown), without_cgroups(&finished.stdout), "the README's table is the run's");

    let mut summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let driver = summary["settings"]["driver_sha256"].as_str().unwrap_or_default();
    assert!(driver.len() == 64 && driver.bytes().all(|byte| byte.is_ascii_hexdigit()), "{driver}");
    // The driver's digest changes with every change of the driver or the language table.
    for machine_specific in ["samples", "results", "python", "python_version", "jobs", "driver_sha256"] {
        summary["settings"][machine_specific] = Value::from("[redacted]");
    }
    for machine_specific in
        ["harness_peak_rss_kib", "started_at", "finished_at", "seconds", "cpus", "worker_cpus", "cgroups"]
    {
        summary["run"][machine_specific] = Value::from("[redacted]");
    }
    summary.as_object_mut().unwrap().remove("per_problem");
    insta::assert_json_snapshot!("bundled-summary", summary);
}

/// `score` on evaluate's results reproduces evaluate's numbers without running anything.
#[test]
fn score_agrees_with_evaluate() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let evaluated = dir.path().join("evaluated.json");
    let scored = dir.path().join("scored.json");
    let samples = repo_root().join("problems/basic-samples.jsonl");
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .args(["--problems", "basic", "--partial", "--k", "1,2", "--results"])
            .arg(&results)
            .arg("--summary")
            .arg(&evaluated),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let finished = finish(passk(["score"]).arg(&results).args(["--k", "1,2", "--summary"]).arg(&scored));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let read = |path: &std::path::Path| -> Value { serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap() };
    let (evaluated, scored) = (read(&evaluated), read(&scored));
    for key in ["pass@1", "left_out", "problems", "samples", "counts", "per_problem"] {
        assert_eq!(evaluated[key], scored[key], "{key}");
    }
    assert!(evaluated["pass@1"].as_f64().unwrap() > 0.0);
}

#[test]
fn gzipped_samples_and_the_default_results_name() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl.gz");
    let mut gz =
        flate2::write::GzEncoder::new(std::fs::File::create(&samples).unwrap(), flate2::Compression::default());
    let lines = [
        json!({"task_id": "basic/3", "completion": "    return sum(int(d) for d in str(abs(n)))\n", "model": "m"}),
        json!({"task_id": "basic/3", "completion": "    return n\n", "model": "m"}),
    ];
    for line in &lines {
        writeln!(gz, "{line}").unwrap();
    }
    gz.finish().unwrap();
    let finished = finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--partial", "--k", "1"]));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let results = read_jsonl(&dir.path().join("samples.jsonl.gz_results.jsonl"));
    let passed: Vec<&Value> = results.iter().map(|r| &r["passed"]).collect();
    assert_eq!(passed, [true, false]);
    assert!(results.iter().all(|r| r["model"] == "m"), "other fields are kept");
}

#[test]
fn a_main_guard_does_not_run_as_under_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let guarded =
        "    return sum(int(d) for d in str(abs(n)))\n\nif __name__ == \"__main__\":\n    raise SystemExit(1)\n";
    write_jsonl(&samples, &[json!({"task_id": "basic/3", "completion": guarded})]);
    let results = dir.path().join("results.jsonl");
    let finished =
        finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--partial", "--results"]).arg(&results));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(read_jsonl(&results)[0]["passed"], true);
}

/// The progress bar shows on a terminal, with a rate and an ETA, and not when stderr is
/// piped (which every other test checks implicitly by reading clean output).
#[test]
fn a_progress_bar_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let typescript = dir.path().join("typescript");
    let results = dir.path().join("results.jsonl");
    let command = format!(
        "{} evaluate {} --problems basic --results {}",
        passk_binary().display(),
        repo_root().join("problems/basic-samples.jsonl").display(),
        results.display()
    );
    // `script` gives the command a pseudo-terminal and records what it drew.
    let finished = finish(Command::new("script").args(["--quiet", "--return", "--command", &command]).arg(&typescript));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let drawn = String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned();
    assert!(drawn.contains("/60 samples"), "a count out of the total: {drawn}");
    assert!(drawn.contains("/s") && drawn.contains("ETA"), "a rate and an ETA: {drawn}");
    // Regression: the rate was drawn as "12.3456/s".
    for (at, _) in drawn.match_indices("/s ") {
        let rate: String = drawn[..at].chars().rev().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let decimals = rate.find('.').unwrap_or(0);
        assert!(decimals <= 2, "a rate with sensible precision: {}", rate.chars().rev().collect::<String>());
    }
}

#[test]
fn verbose_logging_reports_each_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(
        &samples,
        &[json!({"task_id": "basic/3", "completion": "    print('hello from the candidate')\n    return n\n"})],
    );
    let results = dir.path().join("results.jsonl");
    let finished = finish(
        passk(["-vv", "evaluate"]).arg(&samples).args(["--problems", "basic", "--partial", "--results"]).arg(&results),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(finished.stderr.contains("workers ready"), "{}", finished.stderr);
    assert!(finished.stderr.contains("status=failed"), "{}", finished.stderr);
    assert!(finished.stderr.contains("hello from the candidate"), "{}", finished.stderr);
}

/// Regression: samples covering 10 of HumanEval's 164 problems scored pass@1 1.0 over
/// those 10, with no warning. A subset is refused, naming what is missing; `--partial`
/// evaluates it on purpose, and the table and summary say it is a subset.
#[test]
fn samples_that_leave_out_problems_are_refused_unless_partial() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let problems = std::fs::read_to_string(repo_root().join("problems/basic.jsonl")).unwrap();
    let first: Value = serde_json::from_str(problems.lines().next().unwrap()).unwrap();
    write_jsonl(&samples, &[json!({"task_id": "basic/0", "completion": first["canonical_solution"]})]);
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let evaluate = |extra: &[&str]| {
        finish(
            passk(["evaluate"])
                .arg(&samples)
                .args(["--problems", "basic", "--k", "1", "--results"])
                .arg(&results)
                .arg("--summary")
                .arg(&summary)
                .args(extra),
        )
    };
    let refused = evaluate(&[]);
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    for part in ["leaves out 23 problems of the 24 in basic", "basic/1, basic/2", "and 13 more", "add --partial"] {
        assert!(refused.stderr.contains(part), "{part}: {}", refused.stderr);
    }
    assert!(!results.exists() && !summary.exists(), "nothing ran");

    let partial = evaluate(&["--partial"]);
    assert_eq!(partial.code, Some(0), "{}", partial.stderr);
    assert!(partial.stdout.starts_with("1 sample of 1 problem\n"), "{}", partial.stdout);
    assert!(partial.stdout.contains("pass@1          1.0000  over 1 of 24 problems"), "{}", partial.stdout);
    let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(summary["subset"]["of"], 24, "{summary}");
    assert_eq!(summary["subset"]["missing"].as_array().unwrap().len(), 23, "{summary}");
    assert_eq!(summary["subset"]["missing"][0], "basic/1", "{summary}");
}
