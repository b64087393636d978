//! Bad input gets one clear error naming the file, the line and the field or value, a
//! non-zero exit, no panic, and no results file.

use std::path::Path;
use std::process::Command;

use passk_tests::{finish, passk, write_jsonl, Finished};
use serde_json::json;

const BAD_INPUT: Option<i32> = Some(2);

fn evaluate(dir: &Path, samples: &Path, extra: &[&str]) -> Finished {
    let results = dir.join("results.jsonl");
    let mut command = passk(["evaluate".as_ref(), samples.as_os_str(), "--problems".as_ref(), "basic".as_ref()]);
    command.arg("--partial");
    command.arg("--results").arg(&results).args(extra);
    let finished = finish(&mut command);
    assert!(!results.exists(), "no results file after bad input");
    assert!(!dir.join("results.jsonl.partial").exists(), "no partial results file after bad input");
    finished
}

/// Evaluates a samples file named `name` holding `text`.
fn evaluate_text(name: &str, text: &str, extra: &[&str]) -> Finished {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join(name);
    std::fs::write(&samples, text).unwrap();
    evaluate(dir.path(), &samples, extra)
}

/// Evaluates a samples file holding `records`, one per line.
fn evaluate_records(records: &[serde_json::Value], extra: &[&str]) -> Finished {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    evaluate_text("samples.jsonl", &text, extra)
}

fn assert_rejected(finished: &Finished, expected: &[&str]) {
    assert_eq!(finished.code, BAD_INPUT, "stderr: {}", finished.stderr);
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    let errors: Vec<&str> = finished.stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "one error line: {}", finished.stderr);
    for part in expected {
        assert!(errors[0].contains(part), "{:?} should mention {part:?}", errors[0]);
    }
}

fn good_sample() -> serde_json::Value {
    json!({"task_id": "basic/0", "completion": "    return values\n"})
}

#[test]
fn a_missing_samples_file() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("absent.jsonl");
    assert_rejected(&evaluate(dir.path(), &samples, &[]), &["absent.jsonl", "cannot open", "No such file"]);
}

#[test]
fn an_unreadable_samples_file() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("a-directory.jsonl");
    std::fs::create_dir(&samples).unwrap();
    assert_rejected(&evaluate(dir.path(), &samples, &[]), &["a-directory.jsonl", "cannot open", "Is a directory"]);
}

/// Compression is told by a file's first bytes, so that standard input may be
/// compressed too; a gzip stream cut short is an error naming the file.
#[test]
fn a_gzip_stream_cut_short() {
    let mut compressed = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut compressed, good_sample().to_string().repeat(200).as_bytes()).unwrap();
    let compressed = compressed.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl.gz");
    std::fs::write(&samples, &compressed[..compressed.len() / 2]).unwrap();
    assert_rejected(&evaluate(dir.path(), &samples, &[]), &["samples.jsonl.gz:1", "cannot read"]);
}

#[test]
fn a_malformed_line() {
    assert_rejected(
        &evaluate_text(
            "samples.jsonl",
            &format!("{}\n\n{{\"task_id\": \"basic/0\", \"completion\": \n", good_sample()),
            &[],
        ),
        &["samples.jsonl:3", "not valid JSON"],
    );
}

#[test]
fn a_line_that_is_not_an_object() {
    assert_rejected(&evaluate_text("samples.jsonl", "[1, 2]\n", &[]), &["samples.jsonl:1", "expected a JSON object"]);
}

#[test]
fn a_line_without_task_id() {
    assert_rejected(
        &evaluate_records(&[good_sample(), json!({"completion": "    return 1\n"})], &[]),
        &["samples.jsonl:2", "`task_id`", "missing"],
    );
}

#[test]
fn a_line_without_a_candidate() {
    assert_rejected(
        &evaluate_records(&[json!({"task_id": "basic/0"})], &[]),
        &["samples.jsonl:1", "`completion`", "missing"],
    );
}

/// Regression: a sample whose code is under another name (`generation`, as other tools
/// write it) was told only that `completion` is missing, not which fields it has.
#[test]
fn a_candidate_under_another_name_is_shown_with_the_fields_given() {
    assert_rejected(
        &evaluate_records(&[json!({"task_id": "basic/0", "generation": "    return values\n"})], &[]),
        &["samples.jsonl:1: field `completion` (or `solution`) is missing; the line's fields are task_id, generation"],
    );
}

#[test]
fn a_completion_that_is_not_a_string() {
    assert_rejected(
        &evaluate_records(&[json!({"task_id": "basic/0", "completion": 42})], &[]),
        &["samples.jsonl:1", "`completion`", "must be a string"],
    );
}

#[test]
fn both_a_completion_and_a_solution() {
    assert_rejected(
        &evaluate_records(&[json!({"task_id": "basic/0", "completion": "", "solution": ""})], &[]),
        &["samples.jsonl:1", "both `completion` and `solution`"],
    );
}

#[test]
fn a_task_unknown_to_the_problem_set() {
    assert_rejected(
        &evaluate_records(&[good_sample(), good_sample(), json!({"task_id": "HumanEval/0", "completion": ""})], &[]),
        &["samples.jsonl:3", "\"HumanEval/0\"", "basic"],
    );
}

#[test]
fn an_empty_samples_file() {
    assert_rejected(&evaluate_text("samples.jsonl", "\n  \n", &[]), &["samples.jsonl", "contains no samples"]);
}

/// Guards against running (and writing results for) everything before a bad line.
#[test]
fn a_bad_line_late_in_a_large_file_stops_everything_before_it_runs() {
    let mut records = vec![good_sample(); 499];
    records.push(json!({"task_id": "basic/0", "completion": null}));
    assert_rejected(&evaluate_records(&records, &[]), &["samples.jsonl:500", "`completion`"]);
}

#[test]
fn k_of_zero() {
    assert_rejected(&evaluate_records(&[good_sample()], &["--k", "1,0"]), &["--k", "at least 1"]);
}

#[test]
fn a_negative_or_zero_or_unreadable_timeout() {
    assert_rejected(&evaluate_records(&[good_sample()], &["--timeout=-1"]), &["--timeout", "'-1'", "positive"]);
    assert_rejected(&evaluate_records(&[good_sample()], &["--timeout", "0"]), &["--timeout", "positive"]);
    assert_rejected(&evaluate_records(&[good_sample()], &["--timeout", "soon"]), &["--timeout", "\"soon\""]);
}

#[test]
fn zero_jobs() {
    assert_rejected(&evaluate_records(&[good_sample()], &["--jobs", "0"]), &["--jobs", "'0'"]);
}

#[test]
fn an_unknown_problem_set() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let results = dir.path().join("results.jsonl");
    let finished =
        finish(passk(["evaluate"]).arg(&samples).args(["--problems", "no-such-set", "--results"]).arg(&results));
    assert_rejected(&finished, &["--problems no-such-set: no such file", "bundled: basic"]);
}

fn evaluate_against(dir: &Path, problems: &[serde_json::Value]) -> Finished {
    let problem_file = dir.join("problems.jsonl");
    write_jsonl(&problem_file, problems);
    let samples = dir.join("samples.jsonl");
    write_jsonl(&samples, &[json!({"task_id": "t/0", "completion": "    return 1\n"})]);
    let results = dir.join("results.jsonl");
    let finished =
        finish(passk(["evaluate"]).arg(&samples).arg("--problems").arg(&problem_file).arg("--results").arg(&results));
    assert!(!results.exists());
    finished
}

fn problem(task_id: &str, entry_point: &str) -> serde_json::Value {
    json!({"task_id": task_id, "prompt": "def f():\n", "entry_point": entry_point, "test": "def check(c):\n    assert c() == 1\n"})
}

#[test]
fn a_problem_without_a_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut broken = problem("t/1", "f");
    broken.as_object_mut().unwrap().remove("test");
    let finished = evaluate_against(dir.path(), &[problem("t/0", "f"), broken]);
    assert_rejected(&finished, &["problems.jsonl:2", "`test`", "missing"]);
}

#[test]
fn a_problem_whose_entry_point_is_not_an_identifier() {
    let dir = tempfile::tempdir().unwrap();
    let finished = evaluate_against(dir.path(), &[problem("t/0", "f); __import__('os').system('true'")]);
    assert_rejected(&finished, &["problems.jsonl:1", "`entry_point`", "not a Python identifier"]);
}

#[test]
fn a_problem_set_with_a_task_twice() {
    let dir = tempfile::tempdir().unwrap();
    let finished = evaluate_against(dir.path(), &[problem("t/0", "f"), problem("t/0", "f")]);
    assert_rejected(&finished, &["problems.jsonl:2", "\"t/0\"", "first on line 1"]);
}

#[test]
fn a_problem_whose_canonical_solution_is_not_a_string() {
    let dir = tempfile::tempdir().unwrap();
    let mut broken = problem("t/0", "f");
    broken["canonical_solution"] = json!(["    return 1"]);
    let finished = evaluate_against(dir.path(), &[broken]);
    assert_rejected(&finished, &["problems.jsonl:1", "`canonical_solution`", "must be a string"]);
}

#[test]
fn a_missing_interpreter_is_a_failed_run_not_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let finished = evaluate(dir.path(), &samples, &["--python", "/nonexistent/python3"]);
    assert_eq!(finished.code, Some(1), "{}", finished.stderr);
    assert!(finished.stderr.contains("/nonexistent/python3"), "{}", finished.stderr);
}

#[test]
fn score_rejects_results_without_passed() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    write_jsonl(&results, &[json!({"task_id": "a", "passed": true}), json!({"task_id": "a", "passed": "yes"})]);
    assert_rejected(&finish(passk(["score"]).arg(&results)), &["results.jsonl:2", "`passed`", "true or false"]);
    write_jsonl(&results, &[json!({"task_id": "a"})]);
    assert_rejected(&finish(passk(["score"]).arg(&results)), &["results.jsonl:1", "`passed`", "missing"]);
    std::fs::write(&results, "").unwrap();
    assert_rejected(&finish(passk(["score"]).arg(&results)), &["results.jsonl", "contains no results"]);
}

#[test]
fn score_rejects_k_of_zero() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    write_jsonl(&results, &[json!({"task_id": "a", "passed": true})]);
    assert_rejected(&finish(passk(["score"]).arg(&results).arg("--k=0")), &["--k", "at least 1"]);
}

#[test]
fn results_over_the_samples_file() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let before = std::fs::read(&samples).unwrap();
    let finished = finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--results"]).arg(&samples));
    assert_rejected(&finished, &["samples.jsonl", "is the samples file"]);
    assert_eq!(std::fs::read(&samples).unwrap(), before, "the samples file is untouched");
}

/// Regression: `--results` naming another file (a second samples file, the problems) wrote
/// the run's results over it without a word. passk's own results, complete or not, are
/// still run over (a run with the same settings resumes or reruns them).
#[test]
fn results_over_a_file_that_is_not_results() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let other = dir.path().join("other.jsonl");
    write_jsonl(&other, &[good_sample()]);
    let before = std::fs::read(&other).unwrap();
    let finished = finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--results"]).arg(&other));
    assert_rejected(
        &finished,
        &["--results", "other.jsonl holds something other than passk's results", "task_id", "name another file"],
    );
    assert_eq!(std::fs::read(&other).unwrap(), before, "the other file is untouched");
    let results = dir.path().join("results.jsonl");
    for _ in 0..2 {
        let ran = finish(
            passk(["evaluate", "--partial", "--restart"])
                .arg(&samples)
                .args(["--problems", "basic", "--results"])
                .arg(&results),
        );
        assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    }
    // And results given as the samples run again, with a word that says so.
    let again = finish(passk(["evaluate", "--partial"]).arg(&results).args(["--problems", "basic"]));
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(again.stderr.contains("results.jsonl:1: this is a line of passk's results"), "{}", again.stderr);
}

/// Regression: a bad `--summary` path was reported only after the whole run had run.
#[test]
fn an_unwritable_summary_path_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let missing = dir.path().join("no-such-dir").join("summary.json");
    let finished = evaluate(dir.path(), &samples, &["--summary", missing.to_str().unwrap()]);
    assert_rejected(&finished, &["cannot write --summary", "no-such-dir/summary.json", "No such file"]);
    let finished = evaluate(dir.path(), &samples, &["--summary", dir.path().to_str().unwrap()]);
    assert_rejected(&finished, &["cannot write --summary", "is a directory"]);
}

/// Regression: an output path in a folder that does not exist got only the OS's "No such
/// file or directory". Every command's output option names the folder and says to
/// create it, before anything runs, with exit 2 (`passk score --summary` and `compare
/// --summary` had printed their table first and exited 1, as `canonical --output` did).
#[test]
fn an_output_path_in_a_missing_folder_names_the_folder_and_says_to_create_it() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let results = dir.path().join("results.jsonl");
    let ran =
        finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--partial", "--results"]).arg(&results));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let folder = dir.path().join("some/missing/dir");
    let target = |name: &str| folder.join(name).display().to_string();
    let commands: [(&str, Vec<String>); 5] = [
        ("--results", vec!["evaluate".into(), samples.display().to_string(), "--problems".into(), "basic".into()]),
        ("--summary", vec!["score".into(), results.display().to_string()]),
        ("--summary", vec!["compare".into(), results.display().to_string(), results.display().to_string()]),
        ("--report", vec!["score".into(), results.display().to_string()]),
        ("--output", vec!["canonical".into(), "--problems".into(), "basic".into()]),
    ];
    for (option, args) in commands {
        let name = if option == "--report" { "out.html" } else { "out.jsonl" };
        let finished = finish(passk(&args).args([option, &target(name)]));
        assert_rejected(
            &finished,
            &[
                &format!("cannot write {option} {}", target(name)),
                &format!("the folder {} does not exist: create it (`mkdir -p {}`)", folder.display(), folder.display()),
            ],
        );
        assert!(finished.stdout.is_empty(), "{args:?}: nothing ran: {}", finished.stdout);
        assert!(!dir.path().join("some").exists());
    }
}

/// Regression: a results path that is a directory ran every sample, then failed to move
/// the results into place.
#[test]
fn a_results_path_that_is_a_directory_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let results = dir.path().join("results-dir");
    std::fs::create_dir(&results).unwrap();
    let finished =
        finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--partial", "--results"]).arg(&results));
    assert_rejected(&finished, &["cannot write --results", "results-dir", "is a directory"]);
    assert!(!dir.path().join("results-dir.partial").exists(), "nothing ran");
}

/// Regression: `--results /dev/null`, as root, put the results file in the device's place
/// (the results are written beside the path and moved over it), and `--restart` moved
/// the device itself to `/dev/null.before-restart`; `--summary` replaced a device the
/// same way. An output path that is there and not a regular file is refused before
/// anything runs, and left as it was. (A pipe stands in for the device here.)
#[test]
fn an_output_path_that_is_a_device_or_a_pipe_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let pipe = dir.path().join("pipe");
    let name = std::ffi::CString::new(pipe.to_str().unwrap()).unwrap();
    // SAFETY: `name` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0, "{}", std::io::Error::last_os_error());
    for (option, extra) in [("--results", vec!["--restart"]), ("--summary", vec![])] {
        let mut command = passk(["evaluate"]);
        command.arg(&samples).args(["--problems", "basic", "--partial", option]).arg(&pipe).args(extra);
        if option == "--summary" {
            command.arg("--results").arg(dir.path().join("results.jsonl"));
        }
        assert_rejected(&finish(&mut command), &[&format!("cannot write {option}"), "not a regular file"]);
        let kind = std::fs::symlink_metadata(&pipe).unwrap().file_type();
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind), "{option}: the pipe is still there");
        assert!(!dir.path().join("pipe.before-restart").exists(), "{option}");
    }
}

/// Regression: each of these got a bare JSON parse error, with no word of what to change.
#[test]
fn a_whole_json_document_or_a_byte_order_mark_gets_the_fix_in_the_message() {
    let sample = good_sample();
    let array = format!("[{sample},\n {sample}]\n");
    assert_rejected(
        &evaluate_text("samples.json", &array, &[]),
        &["samples.json:1", "JSON Lines expected", "this is a JSON array", "a line of its own"],
    );
    let pretty = serde_json::to_string_pretty(&sample).unwrap();
    assert_rejected(
        &evaluate_text("samples.jsonl", &format!("\n{pretty}\n"), &[]),
        &["samples.jsonl:2", "JSON Lines expected", "spread over several lines"],
    );
    assert_rejected(
        &evaluate_text("samples.jsonl", &format!("\u{feff}{sample}\n"), &[]),
        &["samples.jsonl", "byte-order mark", "remove the byte-order mark"],
    );
}

/// Regression: a `--results` in a folder this user cannot write was reported as `cannot
/// create or lock <results>.lock`, a file the user never named, with exit 1 where the
/// same mistake with `--summary` exits 2. Both name the user's path, exit 2, and say
/// which user cannot write where.
#[test]
fn a_results_folder_this_user_cannot_write_is_named_as_given_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let folder = dir.path().join("read-only");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    for option in ["--results", "--summary"] {
        let target = folder.join("out.jsonl");
        let mut command = passk(["evaluate"]);
        command.arg(&samples).args(["--problems", "basic", "--partial", option]).arg(&target);
        if option == "--summary" {
            let writable = dir.path().join("writable");
            std::fs::create_dir(&writable).unwrap();
            std::fs::set_permissions(&writable, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
            command.arg("--results").arg(writable.join("results.jsonl"));
        }
        // Root writes anywhere: the folder refuses only an unprivileged user.
        passk_tests::as_unprivileged_user(&mut command);
        let finished = finish(&mut command);
        let target = target.display().to_string();
        assert_rejected(&finished, &[&format!("cannot write {option} {target}: Permission denied"), "cannot write in"]);
        assert!(!finished.stderr.contains(".lock"), "{}", finished.stderr);
    }
}

/// Regression: messages that pointed the wrong way. Samples and problems swapped got
/// "name it with --format"; MBPP's samples against another set got "field task_id must
/// be a string"; `--problems humaneval` did not say where HumanEval comes from. Each
/// now says what happened and what to do, in the whole of stderr.
#[test]
fn samples_for_the_wrong_place_or_set_are_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let problems = passk_tests::repo_root().join("problems/basic.jsonl");
    let mbpp = dir.path().join("mbpp-samples.jsonl");
    write_jsonl(&mbpp, &[json!({"task_id": 11, "completion": "def remove_Occ(s, ch):\n    return s\n"})]);
    let mbpp_plus = dir.path().join("mbpp-plus-samples.jsonl");
    write_jsonl(&mbpp_plus, &[json!({"task_id": "Mbpp/2", "solution": "def similar_elements(a, b):\n    return a\n"})]);
    let cases: [(&str, &Path, &Path); 5] = [
        ("samples and problems swapped", &problems, &samples),
        ("a problem set as the samples", &problems, Path::new("basic")),
        ("MBPP's samples against another set", &mbpp, Path::new("basic")),
        ("MBPP+'s samples against another set", &mbpp_plus, Path::new("basic")),
        ("HumanEval not fetched", &samples, Path::new("humaneval")),
    ];
    let mut transcript = String::new();
    let results = dir.path().join("r.jsonl");
    for (case, given, problems) in cases {
        let finished =
            finish(passk(["evaluate"]).arg(given).arg("--problems").arg(problems).arg("--results").arg(&results));
        assert_eq!(finished.code, BAD_INPUT, "{case}: {}", finished.stderr);
        transcript.push_str(&format!("{case}:\n{}\n", finished.stderr));
    }
    let dir = dir.path().display().to_string();
    let root = passk_tests::repo_root().display().to_string();
    insta::with_settings!({ filters => vec![(dir.as_str(), "[dir]"), (root.as_str(), "[repo]")] }, {
        insta::assert_snapshot!("wrong-way-messages", transcript);
    });
}

/// Regression: more messages that pointed the wrong way. Sanitized MBPP's file read with
/// `--format mbpp` got "write each object on a line of its own", and the original MBPP's
/// with `--format mbpp-sanitized` was read without its setup code; a `--problems` path
/// that does not exist was "neither a problem file nor a bundled problem set"; `--timeout
/// -1` got clap's tip to write `-- -1`; `--jobs 0` was "not in 1..18446744073709551615";
/// `passk score` on a samples file said only that `passed` is missing; a HumanEval file
/// read with `--format mbpp` said only that field `code` is missing; and
/// `fetch-benchmark humaneval` did not say where HumanEval comes from.
#[test]
fn more_messages_that_pointed_the_wrong_way_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let results = dir.path().join("r.jsonl");
    let fixture = |name: &str| passk_tests::format_fixture(name).display().to_string();
    let evaluate = |args: &[&str]| {
        let mut command = passk(["evaluate"]);
        command.arg(&samples).args(args).arg("--results").arg(&results);
        command
    };
    let basic = passk_tests::repo_root().join("problems/basic.jsonl").display().to_string();
    let cases: [(&str, Command); 8] = [
        (
            "sanitized MBPP as --format mbpp",
            evaluate(&["--problems", &fixture("mbpp-sanitized.json"), "--format", "mbpp"]),
        ),
        (
            "MBPP as --format mbpp-sanitized",
            evaluate(&["--problems", &fixture("mbpp.jsonl"), "--format", "mbpp-sanitized"]),
        ),
        // Regression: a HumanEval file read with --format mbpp said only that field `code`
        // was missing, not that the file is HumanEval's.
        ("HumanEval as --format mbpp", evaluate(&["--problems", &basic, "--format", "mbpp"])),
        ("a problem file that does not exist", evaluate(&["--problems", "not-fetched/MbppPlus-v0.2.0.jsonl.gz"])),
        ("a negative time limit", evaluate(&["--problems", "basic", "--timeout", "-1"])),
        ("no jobs", evaluate(&["--problems", "basic", "--jobs", "0"])),
        ("a samples file scored", {
            let mut command = passk(["score"]);
            command.arg(&samples);
            command
        }),
        ("HumanEval asked of fetch-benchmark", {
            let mut command = Command::new(passk_tests::repo_root().join("problems/fetch-benchmark"));
            command.arg("humaneval");
            command
        }),
    ];
    let mut transcript = String::new();
    for (case, mut command) in cases {
        let finished = finish(&mut command);
        let expected = if case.contains("fetch-benchmark") { Some(1) } else { BAD_INPUT };
        assert_eq!(finished.code, expected, "{case}: {}", finished.stderr);
        assert!(!results.exists(), "{case}");
        transcript.push_str(&format!("{case}:\n{}\n", finished.stderr));
    }
    let dir = dir.path().display().to_string();
    let root = passk_tests::repo_root().display().to_string();
    insta::with_settings!({ filters => vec![(dir.as_str(), "[dir]"), (root.as_str(), "[repo]")] }, {
        insta::assert_snapshot!("more-wrong-way-messages", transcript);
    });

    // The released file, as its authors publish it.
    let Some(released) = passk_tests::shared_benchmark("mbpp/sanitized-mbpp.json.gz") else { return };
    let sanitized = std::path::PathBuf::from(&dir).join("sanitized-mbpp.json");
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(std::fs::File::open(released).unwrap()), &mut text)
        .unwrap();
    std::fs::write(&sanitized, text).unwrap();
    let finished = finish(&mut evaluate(&["--problems", sanitized.to_str().unwrap(), "--format", "mbpp"]));
    assert_rejected(
        &finished,
        &["sanitized-mbpp.json:1", "this is sanitized MBPP's file", "give --format mbpp-sanitized"],
    );
}

/// Regression: `passk canonical` on a problem file without a single canonical solution
/// (the released CodeContests sample) wrote an empty samples file and exited 0, and the
/// evaluation it led to refused the empty file.
#[test]
fn canonical_refuses_a_problem_file_without_any_canonical_solution() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    let problem = |id: &str| {
        json!({"task_id": id, "prompt": "def f():\n", "entry_point": "f",
            "test": "def check(candidate):\n    assert candidate() == 1\n"})
    };
    write_jsonl(&problems, &[problem("t/0"), problem("t/1")]);
    let output = dir.path().join("samples.jsonl");
    let run = finish(passk(["canonical", "--problems"]).arg(&problems).arg("--output").arg(&output));
    assert_eq!(run.code, Some(4), "{}", run.stderr);
    assert!(run.stderr.contains("its 2 problems have no canonical solution"), "{}", run.stderr);
    assert!(!output.exists(), "an empty samples file was written");
}

/// Regression: SandboxFusion's LiveCodeBench sample gives `import sys; sys.exit(0)` as
/// every problem's canonical solution, and `passk canonical` wrote them without a word,
/// though the README says its samples should score 1.0.
#[test]
fn canonical_warns_when_every_canonical_solution_is_the_same_placeholder() {
    let Some(released) = passk_tests::shared_benchmark("stdio/sandboxfusion_live_code_bench_v1_sample.jsonl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("samples.jsonl");
    let run = finish(passk(["canonical", "--problems"]).arg(&released).arg("--output").arg(&output));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.contains("every one of the 3 canonical solutions is the same program"), "{}", run.stderr);
    assert!(run.stderr.contains("import sys; sys.exit(0)"), "{}", run.stderr);
    // A bundled set's own solutions differ: no warning.
    let bundled = finish(passk(["canonical", "--problems", "basic", "--output"]).arg(&output));
    assert!(!bundled.stderr.contains("same program"), "{}", bundled.stderr);
}

/// Regression: `passk canonical` and `passk validate` given a samples file as --problems
/// asked whether "the two files" were swapped, and named `passk evaluate` as the
/// command, though each takes one file. They say what --problems takes; evaluate, which
/// does take two, still asks.
#[test]
fn a_samples_file_as_problems_is_named_for_the_command_given() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let given_as_problems =
        "this is a samples file (fields task_id, completion), given as --problems, which takes a problem set";
    for command in ["canonical", "validate"] {
        let finished = finish(passk([command]).arg("--problems").arg(&samples));
        assert_rejected(&finished, &[given_as_problems]);
        assert!(!finished.stderr.contains("swapped"), "{command}: {}", finished.stderr);
        assert!(!finished.stderr.contains("passk evaluate"), "{command}: {}", finished.stderr);
    }
    let problems = passk_tests::repo_root().join("problems/basic.jsonl");
    let results = dir.path().join("r.jsonl");
    let finished =
        finish(passk(["evaluate"]).arg(&problems).arg("--problems").arg(&samples).arg("--results").arg(&results));
    assert_rejected(&finished, &[given_as_problems, "are the two files swapped?"]);
}

/// Regression: samples of the original MBPP evaluated against sanitized MBPP were told
/// only that the first task id "is not in the problem set", though both sets number
/// their problems alike and the sanitized one keeps some of them: the message now names
/// the original's file.
#[test]
fn samples_of_the_original_mbpp_against_sanitized_mbpp_name_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[json!({"task_id": 601, "solution": "def f():\n    return 1\n"})]);
    let results = dir.path().join("r.jsonl");
    let sanitized = passk_tests::format_fixture("mbpp-sanitized.json");
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .arg("--problems")
            .arg(&sanitized)
            .arg("--partial")
            .arg("--results")
            .arg(&results),
    );
    assert_rejected(
        &finished,
        &["field `task_id` is \"601\"", "sanitized MBPP holds 2 of the original MBPP's problems", "mbpp.jsonl"],
    );
}

/// Regression: samples of sanitized MBPP given against the original MBPP, which numbers
/// its problems alike, were refused only as leaving out 547 of its 974 problems, with
/// the advice to add --partial, which would judge them by the original's tests. The
/// message now says that every problem they answer is sanitized MBPP's and how to get
/// its file. The samples are every problem of the released sanitized file, so this also
/// checks the ids passk knows for sanitized MBPP's against the file.
#[test]
fn samples_of_sanitized_mbpp_against_the_original_name_sanitized_mbpp() {
    let (Some(sanitized), Some(original)) = (
        passk_tests::shared_benchmark("mbpp/sanitized-mbpp.json.gz"),
        passk_tests::shared_benchmark("mbpp/mbpp.jsonl.gz"),
    ) else {
        return;
    };
    let problems: Vec<serde_json::Value> =
        serde_json::from_reader(flate2::read::GzDecoder::new(std::fs::File::open(sanitized).unwrap())).unwrap();
    let samples: Vec<serde_json::Value> =
        problems.iter().map(|problem| json!({"task_id": problem["task_id"], "completion": problem["code"]})).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("samples.jsonl");
    write_jsonl(&path, &samples);
    let results = dir.path().join("r.jsonl");
    let finished =
        finish(passk(["evaluate"]).arg(&path).arg("--problems").arg(&original).arg("--results").arg(&results));
    let fetch = passk_tests::repo_root().join("problems/fetch-benchmark");
    let released = passk_tests::repo_root().join("problems/released/sanitized-mbpp.json");
    assert_rejected(
        &finished,
        &[
            "leaves out 547 problems of the 974",
            "every problem these samples answer is one of sanitized MBPP's",
            &format!("{} mbpp-sanitized downloads it, then give --problems {}", fetch.display(), released.display()),
        ],
    );
    // A few of them prove nothing: nearly half the original's problems are sanitized MBPP's.
    write_jsonl(&path, &samples[..3]);
    let finished =
        finish(passk(["evaluate"]).arg(&path).arg("--problems").arg(&original).arg("--results").arg(&results));
    assert_rejected(&finished, &["leaves out 971 problems of the 974"]);
    assert!(!finished.stderr.contains("sanitized"), "{}", finished.stderr);
}

/// Regression: `--problems humaneval` was told to run `problems/fetch-humaneval` and give
/// `--problems problems/humaneval/HumanEval.jsonl.gz`, paths that hold only in passk's
/// source folder. From any other folder the hint names the script and the file it
/// writes by their full paths, and the script named runs from there.
#[test]
fn the_hint_to_fetch_humaneval_works_from_any_folder() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let finished = finish(passk(["evaluate"]).arg(&samples).args(["--problems", "humaneval"]).current_dir(dir.path()));
    assert_rejected(&finished, &["HumanEval is not bundled: "]);
    let hint = finished.stderr.split("HumanEval is not bundled: ").nth(1).unwrap().trim_end();
    let (script, file) = hint.split_once(" downloads it, then give --problems ").unwrap();
    let (script, file) = (Path::new(script), Path::new(file));
    assert!(script.is_absolute() && file.is_absolute(), "{hint}");
    assert_eq!(script, passk_tests::repo_root().join("problems/fetch-humaneval"));
    // Where the script puts HumanEval when given no folder.
    assert_eq!(file, passk_tests::repo_root().join("problems/humaneval/HumanEval.jsonl.gz"));
    let help = finish(Command::new(script).arg("--help").current_dir(dir.path()));
    assert_eq!(help.code, Some(0), "{}", help.stderr);
    assert!(help.stdout.contains("(default: problems/humaneval beside this script)"), "{}", help.stdout);
}

/// Regression: a folder given as --problems (fetch-humaneval prints its folder, not the
/// file in it) got "cannot open: Is a directory (os error 21)", which named neither the
/// option nor the file meant.
#[test]
fn a_folder_as_problems_names_the_problem_files_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[good_sample()]);
    let folder = dir.path().join("humaneval");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(passk_tests::repo_root().join("problems/basic.jsonl"), folder.join("HumanEval.jsonl")).unwrap();
    let file = folder.join("HumanEval.jsonl").display().to_string();
    let folder = folder.display().to_string();
    let results = dir.path().join("r.jsonl");
    let evaluate =
        finish(passk(["evaluate"]).arg(&samples).args(["--problems", &folder]).arg("--results").arg(&results));
    let canonical = finish(&mut passk(["canonical", "--problems", &folder]));
    for finished in [evaluate, canonical] {
        assert_rejected(&finished, &[&format!("--problems {folder}: a folder, not a problem file; it holds {file}")]);
    }
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let finished = finish(passk(["validate", "--problems"]).arg(&empty));
    assert_rejected(&finished, &["a folder, not a problem file; it holds no .jsonl or .json file"]);
}

/// Regression: a MultiPL-E translation given as --problems was told to name its format
/// with --format, though no format would make it run. MultiPL-E is read now; a language
/// passk does not run is named as one, with the languages it does.
#[test]
fn a_problem_set_in_another_language_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("humaneval-ml.jsonl");
    let record = json!({"name": "HumanEval_0_has_close_elements", "language": "ml", "prompt": "let f () =\n",
                        "doctests": "transform", "original": "", "prompt_terminology": "reworded",
                        "tests": "let () = ()\n", "stop_tokens": ["\nlet"], "task_id": "HumanEval/0"});
    write_jsonl(&problems, &[record]);
    let finished = finish(passk(["canonical", "--problems"]).arg(&problems));
    assert_rejected(
        &finished,
        &["humaneval-ml.jsonl:1: field `language` is \"ml\", which passk does not run; it runs python, cpp, java, go, rust, \
           javascript, typescript, bash"],
    );
    assert!(!finished.stderr.contains("--format"), "{}", finished.stderr);
}

/// Regression: a task id with a case slip or a typo was refused as not in the problem
/// set, leaving the user to find the set's spelling; the message now names the id it is
/// closest to, and names none where no id is close.
#[test]
fn a_mistyped_task_id_is_answered_with_the_closest_id_of_the_set() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    let evaluate = |task_id: &str| {
        let samples = dir.path().join("samples.jsonl");
        write_jsonl(&samples, &[json!({"task_id": task_id, "completion": "    return 1\n"})]);
        finish(passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--partial", "--results"]).arg(&results))
    };
    assert_rejected(&evaluate("Basic/3"), &["field `task_id` is \"Basic/3\"", "did you mean \"basic/3\"?"]);
    assert_rejected(&evaluate("basic/15x"), &["did you mean \"basic/15\"?"]);
    // As close to basic/0 as to basic/1 and the rest: no guess.
    let tied = evaluate("basic/O");
    assert_rejected(&tied, &["field `task_id` is \"basic/O\", which is not in the problem set"]);
    assert!(!tied.stderr.contains("did you mean"), "{}", tied.stderr);
    let far = evaluate("basic/frobnicate");
    assert_rejected(&far, &["field `task_id` is \"basic/frobnicate\", which is not in the problem set"]);
    assert!(!far.stderr.contains("did you mean"), "{}", far.stderr);
}
