//! The ways a run is used that must not go wrong: the same command again, samples on
//! standard input, raw chat output, and the commands that help a user get started.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use passk_tests::{finish, passk, read_jsonl, repo_root, write_jsonl, Finished};
use serde_json::{json, Value};

fn canonical_samples() -> Vec<Value> {
    let text = std::fs::read_to_string(repo_root().join("problems/basic.jsonl")).unwrap();
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|problem| json!({"task_id": problem["task_id"], "completion": problem["canonical_solution"]}))
        .collect()
}

fn summary(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Regression: the same command after a complete run executed everything again and
/// overwrote the results. Now it runs nothing and reports the same numbers, for any
/// `--k` and to a newly asked `--summary`; other settings, results changed since, or
/// `--restart` run again.
#[test]
fn the_same_command_after_a_complete_run_runs_nothing_and_reports_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &canonical_samples());
    let results = dir.path().join("results.jsonl");
    let evaluate = |extra: &[&str]| -> Finished {
        finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--results"]).arg(&results).args(extra))
    };
    let first_summary = dir.path().join("first.json");
    let first = evaluate(&["--summary", first_summary.to_str().unwrap()]);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let written = std::fs::metadata(&results).unwrap().modified().unwrap();
    let bytes = std::fs::read(&results).unwrap();

    let again_summary = dir.path().join("again.json");
    let again = evaluate(&["--k", "1,2", "--summary", again_summary.to_str().unwrap()]);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(again.stderr.contains("nothing to run") && again.stderr.contains("--restart"), "{}", again.stderr);
    assert_eq!(
        again.stdout.lines().find(|l| l.contains("pass@1")),
        first.stdout.lines().find(|l| l.contains("pass@1"))
    );
    assert!(again.stdout.contains("sandbox       full"), "the conditions of the run: {}", again.stdout);
    assert_eq!(std::fs::read(&results).unwrap(), bytes, "the results are not rewritten");
    assert_eq!(std::fs::metadata(&results).unwrap().modified().unwrap(), written);
    let (first_summary, again_summary) = (summary(&first_summary), summary(&again_summary));
    assert_eq!(again_summary["pass@1"], first_summary["pass@1"]);
    assert_eq!(again_summary["settings"]["k"], json!([1, 2]));
    assert_eq!(again_summary["run"]["from_earlier_run"], true);
    assert_eq!(again_summary["run"]["started_at"], first_summary["run"]["started_at"], "the run it reports");

    let other = evaluate(&["--timeout", "5"]);
    assert_eq!(other.code, Some(0), "{}", other.stderr);
    assert!(other.stderr.contains("other settings (timeout: was 3.0, now 5.0); running again"), "{}", other.stderr);
    // Regression: the run with other settings replaced the complete results it found,
    // which were lost.
    let earlier = dir.path().join("results.jsonl.earlier");
    assert!(other.stderr.contains(&format!("they are kept as {}", earlier.display())), "{}", other.stderr);
    assert_eq!(std::fs::read(&earlier).unwrap(), bytes, "the earlier run's results, as they were");
    let earlier_record: Value = summary(&dir.path().join("results.jsonl.earlier.run.json"));
    assert_eq!(earlier_record["verdict_settings"]["timeout"], json!(3.0), "and the record of their run");
    let rerun = evaluate(&["--timeout", "5"]);
    assert!(rerun.stderr.contains("nothing to run"), "{}", rerun.stderr);

    let mut edited = std::fs::OpenOptions::new().append(true).open(&results).unwrap();
    edited.write_all(b"\n").unwrap();
    let changed = evaluate(&["--timeout", "5"]);
    assert_eq!(changed.code, Some(0), "{}", changed.stderr);
    assert!(changed.stderr.contains("changed since its run; running again"), "{}", changed.stderr);

    let restarted = evaluate(&["--timeout", "5", "--restart"]);
    assert_eq!(restarted.code, Some(0), "{}", restarted.stderr);
    assert!(!restarted.stderr.contains("nothing to run"), "{}", restarted.stderr);
    assert_eq!(read_jsonl(&results).len(), 24);
}

/// Samples written to passk's standard input, in the current directory `dir`.
fn evaluate_from_stdin(dir: &Path, name: &str, input: &[u8]) -> Finished {
    let mut child = passk(["evaluate", name, "--problems", "basic"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    Finished {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Regression: `passk evaluate /dev/stdin` failed with "changed while it was being
/// evaluated" (it reads its samples twice) and left files in /dev (the results went
/// beside the samples). `-` and `/dev/stdin` now read standard input once, plain or
/// compressed, and the results go to the current directory.
#[test]
fn samples_on_standard_input() {
    let text: String = canonical_samples().iter().map(|sample| format!("{sample}\n")).collect();
    let dev_before = entries(Path::new("/dev"));
    for name in ["-", "/dev/stdin"] {
        let dir = tempfile::tempdir().unwrap();
        let finished = evaluate_from_stdin(dir.path(), name, text.as_bytes());
        assert_eq!(finished.code, Some(0), "{name}: {}", finished.stderr);
        assert!(finished.stdout.contains("pass@1          1.0000"), "{}", finished.stdout);
        assert_eq!(read_jsonl(&dir.path().join("stdin_results.jsonl")).len(), 24);
        assert_eq!(entries(dir.path()), ["stdin_results.jsonl", "stdin_results.jsonl.run.json"], "no copy left");

        // The same samples again are the same command: nothing runs.
        let again = evaluate_from_stdin(dir.path(), name, text.as_bytes());
        assert!(again.stderr.contains("nothing to run"), "{}", again.stderr);
    }
    assert_eq!(entries(Path::new("/dev")), dev_before, "nothing written in /dev");

    let mut compressed = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    compressed.write_all(text.as_bytes()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let finished = evaluate_from_stdin(dir.path(), "-", &compressed.finish().unwrap());
    assert_eq!(finished.code, Some(0), "compressed: {}", finished.stderr);

    let broken = evaluate_from_stdin(dir.path(), "-", b"{\"task_id\": \"basic/0\"}\n");
    assert_eq!(broken.code, Some(2), "{}", broken.stderr);
    assert!(broken.stderr.contains("standard input:1: field `completion`"), "{}", broken.stderr);
}

/// Regression: 164 chat-model answers to HumanEval scored pass@1 0.0 (all `error`, with
/// no hint why). Answers in several styles, written for the bundled problems: without
/// `--extract` the run says to use it; with it, each correct answer passes, each wrong
/// one fails on its tests, and each results line keeps the raw text, what ran and the
/// rule that took it out.
#[test]
fn extract_takes_the_program_out_of_raw_model_output() {
    let answers = read_jsonl(&repo_root().join("problems/basic-chat-answers.jsonl"));
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let evaluate = |extra: &[&str]| {
        let samples = repo_root().join("problems/basic-chat-answers.jsonl");
        let mut command = passk(["evaluate"]);
        command.arg(samples).args(["--problems", "basic", "--partial", "--k", "1", "--results"]).arg(&results);
        let finished = finish(command.args(extra));
        assert_eq!(finished.code, Some(0), "{}", finished.stderr);
        (finished, read_jsonl(&results))
    };

    let (raw, raw_results) = evaluate(&[]);
    assert!(raw.stderr.contains("10 of 13 samples look like raw chat output"), "{}", raw.stderr);
    assert!(raw.stderr.contains("use --extract"), "{}", raw.stderr);
    for (answer, result) in answers.iter().zip(&raw_results) {
        if answer["completion"].as_str().unwrap().contains("```") {
            assert_eq!(result["passed"], false, "a fence does not run as Python: {result}");
        }
    }

    let (extracted, results) = evaluate(&["--extract"]);
    assert!(!extracted.stderr.contains("use --extract"), "{}", extracted.stderr);
    for (answer, result) in answers.iter().zip(&results) {
        let style = &answer["style"];
        assert_eq!(result["completion"], answer["completion"], "{style}: the raw text is kept");
        assert_eq!(result["extracted"]["rule"], answer["rule"], "{style}: {}", result["extracted"]);
        assert!(result["extracted"]["code"].as_str().is_some_and(|code| !code.contains("```")), "{style}");
        if answer["kind"] == "correct" {
            assert_eq!(result["passed"], true, "{style}: {}", result["detail"]);
        } else {
            assert_eq!(result["status"], "failed", "{style}: wrong code fails its tests: {result}");
        }
    }
    // What ran is what the results line says ran.
    let guarded = results.iter().find(|r| r["task_id"] == "basic/15").unwrap();
    assert!(!guarded["extracted"]["code"].as_str().unwrap().contains("input()"), "{guarded}");
}

#[test]
fn canonical_writes_a_samples_file_that_scores_one() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let written = finish(passk(["canonical", "--problems", "basic", "--output"]).arg(&samples));
    assert_eq!(written.code, Some(0), "{}", written.stderr);
    assert_eq!(read_jsonl(&samples), canonical_samples());
    let printed = finish(&mut passk(["canonical", "--problems", "basic"]));
    assert_eq!(printed.stdout.as_bytes(), std::fs::read(&samples).unwrap(), "the same on standard output");
    let finished = finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--k", "1"]));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(finished.stdout.contains("pass@1          1.0000"), "{}", finished.stdout);
}

/// Regression: `passk help --help` was an error.
#[test]
fn help_describes_itself_and_every_command() {
    let help = finish(&mut passk(["help", "--help"]));
    assert_eq!(help.code, Some(0), "{}", help.stderr);
    assert!(help.stdout.contains("Usage: passk help"), "{}", help.stdout);
    let evaluate = finish(&mut passk(["help", "evaluate"]));
    assert_eq!(evaluate.code, Some(0), "{}", evaluate.stderr);
    assert!(evaluate.stdout.contains("Usage: passk evaluate") && evaluate.stdout.contains("--extract"));
    assert_eq!(evaluate.stdout, finish(&mut passk(["evaluate", "--help"])).stdout);
    let unknown = finish(&mut passk(["help", "evalute"]));
    assert_eq!(unknown.code, Some(2), "{}", unknown.stderr);
    assert!(unknown.stderr.contains("no command \"evalute\"; the commands are evaluate"), "{}", unknown.stderr);
}

/// Regression: `passk ... 2>&1 | head -n 1` made passk panic with exit 101 once the
/// reader was gone, on the next line it wrote. A closed output ends what is shown, not
/// the run: passk exits quietly and its results are complete.
#[test]
fn output_piped_into_a_reader_that_stops_early_ends_quietly_with_the_results_complete() {
    let dir = tempfile::tempdir().unwrap();
    let samples = repo_root().join("problems/basic-samples.jsonl");
    let results = dir.path().join("results.jsonl");
    let passk = passk_tests::passk_binary().display().to_string();
    for (reader, command) in [
        (
            "head -n 1",
            format!("{passk} evaluate {} --problems basic --results {}", samples.display(), results.display()),
        ),
        (
            "grep -m1 warning",
            format!(
                "{passk} evaluate {} --problems basic --restart --results {}",
                samples.display(),
                results.display()
            ),
        ),
        ("head -c 10", format!("{passk} canonical --problems basic")),
        ("head -n 1", format!("{passk} help evaluate")),
    ] {
        // passk's own exit code, and what it wrote besides the reader's share.
        let script = format!("{command} 2>&1 | {reader} >/dev/null; echo ${{PIPESTATUS[0]}}");
        let run = finish(std::process::Command::new("bash").args(["-c", &script]));
        assert_eq!(run.stdout.trim(), "0", "{command} | {reader}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{command} | {reader}: {}", run.stderr);
    }
    let lines = read_jsonl(&results);
    assert_eq!(lines.len(), read_jsonl(&samples).len(), "every sample has its verdict in the results");
}

/// Regression: `tests/run` in a fresh worktree built passk for minutes without a word,
/// as the suite builds the binary it tests with `cargo build --quiet`. Cargo's progress
/// now shows: a test of the suite run on its own, with the binary built already, shows
/// cargo's `Finished` line.
#[test]
fn the_suite_shows_cargo_building_the_binary_it_tests() {
    let suite = std::env::current_exe().unwrap();
    let run = finish(std::process::Command::new(suite).args(["--exact", "bad_input::a_missing_samples_file"]));
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("1 passed"), "{}", run.stdout);
    assert!(run.stderr.contains("Finished"), "cargo's own words: {:?}", run.stderr);
}

/// Regression: `fetch-humaneval --help` downloaded HumanEval into a folder named
/// `--help`, and `fetch-benchmark --help` refused `--help` as a benchmark's name.
#[test]
fn the_fetch_scripts_answer_help_with_their_usage_and_fetch_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (script, says) in [("fetch-humaneval", "fetch-humaneval [DIR]"), ("fetch-benchmark", "humaneval-plus")] {
        for flag in ["--help", "-h"] {
            let run = finish(
                std::process::Command::new(repo_root().join("problems").join(script))
                    .arg(flag)
                    .current_dir(dir.path())
                    .env("PASSK_PYPI_INDEX", "http://127.0.0.1:9/simple")
                    .env("PASSK_MIRROR", dir.path().join("no-mirror")),
            );
            assert_eq!(run.code, Some(0), "{script} {flag}: {}", run.stderr);
            assert!(run.stdout.contains(says), "{script} {flag}: {}", run.stdout);
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the scripts left something behind");
}

/// Regression: one chat answer among one sample was said to "look like raw chat output",
/// the verb of many.
#[test]
fn one_chat_answer_looks_like_chat_output() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let answer = "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```\n";
    write_jsonl(&samples, &[json!({"task_id": "basic/0", "completion": answer})]);
    let results = dir.path().join("results.jsonl");
    let mut command = passk(["evaluate"]);
    command.arg(&samples).args(["--problems", "basic", "--partial", "--k", "1", "--results"]).arg(&results);
    let finished = finish(&mut command);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(finished.stderr.contains("1 of 1 sample looks like raw chat output"), "{}", finished.stderr);
}
