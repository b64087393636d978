//! `passk run` (generate, evaluate and report in one directory, with resume), and
//! generation for the sets whose prompt is not code to continue: MBPP's and the contest
//! sets' tasks in words, and MultiPL-E's own stop tokens. The model is
//! `tests/support/openai_server.py`, answering from the benchmarks' own solutions or
//! from answers the tests write, so that the score each run must reach is known.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use passk_tests::openai::OpenAiServer;
use passk_tests::{finish, humaneval_dir, humaneval_problems, passk, read_jsonl, shared_benchmark, write_jsonl};
use serde_json::{json, Value};

/// `passk run` against `server` into `dir`, without an API key.
fn run(server: &OpenAiServer, problems: &Path, dir: &Path, extra: &[&str]) -> Command {
    let mut command = passk(["run", "--endpoint", &server.base, "--model", "test-model", "--problems"]);
    command.arg(problems).arg("--output").arg(dir).args(extra).env_remove("OPENAI_API_KEY");
    command
}

fn summary(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

/// Per problem (task, n, c), as the run's summary gives them.
fn counts(summary: &Value) -> Vec<(String, u64, u64)> {
    let mut counts: Vec<(String, u64, u64)> = summary["per_problem"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["task_id"].as_str().unwrap().to_owned(), p["n"].as_u64().unwrap(), p["c"].as_u64().unwrap()))
        .collect();
    counts.sort();
    counts
}

fn lines(path: &Path) -> usize {
    std::fs::read(path).map_or(0, |text| text.iter().filter(|&&byte| byte == b'\n').count())
}

/// The real HumanEval, answered right on even problems and wrong on odd ones: one
/// command gives the samples, the results, the summary and the report, and pass@1 is
/// exactly the share of right answers. The same command again asks for nothing and runs
/// nothing; a larger n asks only for the new samples and judges the new file whole.
#[test]
fn passk_run_takes_humaneval_from_an_endpoint_to_its_deserved_score_and_runs_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let problems = humaneval_dir().join("HumanEval.jsonl.gz");
    let answers: Vec<Value> = humaneval_problems()
        .iter()
        .enumerate()
        .map(|(number, problem)| {
            let completion =
                if number % 2 == 0 { problem["canonical_solution"].clone() } else { json!("    return None\n") };
            json!({"task_id": problem["task_id"], "completion": completion})
        })
        .collect();
    let server =
        OpenAiServer::start_for(dir.path(), &problems, &answers, &["--rate-limit-every", "13", "--fail-every", "17"]);
    let out = dir.path().join("run");

    let first = finish(&mut run(&server, &problems, &out, &["--k", "1"]));
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    for file in ["samples.jsonl", "samples.jsonl.request.json", "results.jsonl", "summary.json", "report.html"] {
        assert!(out.join(file).is_file(), "{file} is in the run's directory");
    }
    let scored = summary(&out);
    assert_eq!(scored["pass@1"], json!(82.0 / 164.0), "{scored:#}");
    for (task, n, c) in counts(&scored) {
        let number: usize = task.trim_start_matches("HumanEval/").parse().unwrap();
        assert_eq!((n, c), (1, u64::from(number % 2 == 0)), "{task}");
    }
    // Completions were cut at HumanEval's stop sequences: the server's run-on is gone.
    assert!(read_jsonl(&out.join("samples.jsonl"))
        .iter()
        .all(|s| !s["completion"].as_str().unwrap().contains("check_it")));
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.starts_with("<!DOCTYPE html>") && report.contains("pass@1"), "a report of the run");

    let asked = server.requests().len();
    let again = finish(&mut run(&server, &problems, &out, &["--k", "1"]));
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(again.stderr.contains("nothing to ask"), "{}", again.stderr);
    assert!(again.stderr.contains("nothing to run"), "{}", again.stderr);
    assert_eq!(server.requests().len(), asked, "no request");
    assert_eq!(summary(&out)["pass@1"], scored["pass@1"]);

    // More samples: only the new ones are asked for; the verdicts are of the new file.
    let more = finish(&mut run(&server, &problems, &out, &["--k", "1,2", "--n", "2", "--temperature", "0"]));
    assert_eq!(more.code, Some(0), "{}", more.stderr);
    assert!(more.stderr.contains("resuming: 164 of 328 samples"), "{}", more.stderr);
    let scored = summary(&out);
    assert!(counts(&scored).iter().all(|(_, n, _)| *n == 2), "every problem has two samples now");
    assert_eq!(scored["pass@2"], json!(82.0 / 164.0), "{scored:#}");
}

/// Ctrl-C while the samples are asked for, and again while they run: each time nothing
/// is lost, and the same command finishes the run from where it stopped.
#[test]
fn passk_run_interrupted_in_either_phase_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let problems = passk_tests::repo_root().join("problems/basic.jsonl");
    // Each answer takes a moment to run, so that the evaluation can be caught midway.
    let answers: Vec<Value> = read_jsonl(&problems)
        .iter()
        .map(|problem| {
            // Once per sample: a recursive solution calls itself many times.
            let wait = "    import builtins, time\n    if not hasattr(builtins, 'waited'):\n        builtins.waited = time.sleep(0.3)\n";
            let completion = format!("{wait}{}", problem["canonical_solution"].as_str().unwrap());
            json!({"task_id": problem["task_id"], "completion": completion})
        })
        .collect();
    let server = OpenAiServer::start_for(dir.path(), &problems, &answers, &["--delay", "0.2"]);
    let out = dir.path().join("run");
    let args = ["--k", "1", "--concurrency", "2", "--jobs", "1"];

    let interrupt_when = |ready: &dyn Fn() -> bool| {
        let child = run(&server, &problems, &out, &args).stderr(Stdio::piped()).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(180);
        while !ready() {
            assert!(Instant::now() < deadline, "the run did not get there");
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(libc::pid_t::try_from(child.id()).unwrap(), libc::SIGINT) };
        let stopped = child.wait_with_output().unwrap();
        (stopped.status.code(), String::from_utf8_lossy(&stopped.stderr).into_owned())
    };

    let samples = out.join("samples.jsonl");
    let (code, stderr) = interrupt_when(&|| lines(&samples) >= 4);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("run the same command again"), "{stderr}");
    let kept = lines(&samples);
    assert!((4..24).contains(&kept), "{kept} samples kept");

    let partial = out.join("results.jsonl.partial");
    let (code, stderr) = interrupt_when(&|| lines(&partial) >= 3);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains(&format!("resuming: {kept} of 24 samples")), "{stderr}");
    assert_eq!(lines(&samples), 24, "the samples were all asked for before the evaluation began");
    let judged = lines(&partial);
    assert!(judged >= 3, "{judged} verdicts kept");

    let finished = finish(&mut run(&server, &problems, &out, &args));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(finished.stderr.contains("nothing to ask"), "{}", finished.stderr);
    assert!(finished.stderr.to_lowercase().contains("resum"), "the evaluation resumed: {}", finished.stderr);
    let results = read_jsonl(&out.join("results.jsonl"));
    assert_eq!(results.len(), 24);
    let failed: Vec<&Value> = results.iter().filter(|result| result["passed"] != true).collect();
    assert!(failed.is_empty(), "a verdict of an interrupted run is not a failure: {failed:#?}");
    assert_eq!(summary(&out)["pass@1"], json!(1.0));
}

/// The first `count` records of a released file, written where the test can give them
/// to passk and to the server, in the file's own layout (JSON Lines or one array).
fn first_records(source: &Path, count: usize, into: &Path) -> Vec<Value> {
    let mut text = String::new();
    let file = std::fs::File::open(source).unwrap();
    if source.extension().is_some_and(|extension| extension == "gz") {
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text).unwrap();
    } else {
        std::io::Read::read_to_string(&mut std::io::BufReader::new(file), &mut text).unwrap();
    }
    let records: Vec<Value> = if text.trim_start().starts_with('[') {
        let all: Vec<Value> = serde_json::from_str(&text).unwrap();
        let some: Vec<Value> = all.into_iter().take(count).collect();
        std::fs::write(into, serde_json::to_vec(&some).unwrap()).unwrap();
        some
    } else {
        let some: Vec<Value> = text.lines().take(count).map(|line| serde_json::from_str(line).unwrap()).collect();
        write_jsonl(into, &some);
        some
    };
    records
}

fn id_of(record: &Value) -> String {
    let id = ["task_id", "name", "id"].iter().find_map(|field| record.get(*field)).unwrap();
    id.as_str().map_or_else(|| id.to_string(), str::to_owned)
}

/// MBPP gives the task in words: a base model is asked with the words and the first
/// assert in a docstring (as the MBPP paper and bigcode's harness ask), its answer is
/// cut where bigcode cuts it (the server's run-on `assert False` would fail every
/// sample), and a chat model is asked with the words and the assert. Answered with
/// MBPP's own solutions, every sample passes.
#[test]
fn mbpp_and_sanitized_mbpp_are_asked_in_words_and_their_own_solutions_pass() {
    for (file, mode) in [("mbpp/mbpp.jsonl.gz", "completion"), ("mbpp/sanitized-mbpp.json.gz", "chat")] {
        let Some(source) = shared_benchmark(file) else { return };
        let dir = tempfile::tempdir().unwrap();
        let problems = dir.path().join(if file.ends_with(".json.gz") { "sanitized.json" } else { "mbpp.jsonl" });
        let records = first_records(&source, 30, &problems);
        let answers: Vec<Value> =
            records.iter().map(|record| json!({"task_id": id_of(record), "completion": record["code"]})).collect();
        let server = OpenAiServer::start_for(
            dir.path(),
            &problems,
            &answers,
            &["--whole-programs", "--run-on", "\nassert False\n"],
        );
        let out = dir.path().join("run");
        let finished = finish(&mut run(&server, &problems, &out, &["--k", "1", "--mode", mode]));
        assert_eq!(finished.code, Some(0), "{file}: {}", finished.stderr);
        assert_eq!(summary(&out)["pass@1"], json!(1.0), "{file}: {}", finished.stderr);
        let first = &server.requests()[0]["body"];
        let (words, assert) = match mode {
            "completion" => {
                let prompt = first["prompt"].as_str().unwrap();
                assert!(prompt.starts_with("\"\"\"\n") && prompt.ends_with("\n\"\"\"\n"), "{prompt}");
                assert!(first["stop"].as_array().unwrap().contains(&json!("\nassert")), "{first}");
                (prompt.to_owned(), true)
            }
            _ => (first["messages"][0]["content"].as_str().unwrap().to_owned(), true),
        };
        let record = records
            .iter()
            .find(|record| words.contains(record["text"].as_str().or(record["prompt"].as_str()).unwrap()));
        let record = record.unwrap_or_else(|| panic!("{file}: the request quotes a task's words: {words}"));
        if assert {
            assert!(
                words.contains(record["test_list"][0].as_str().unwrap()),
                "{file}: the first assert is shown: {words}"
            );
        }
    }
}

/// A contest problem is a program reading standard input (or, in LiveCodeBench, a
/// LeetCode method): a chat model is asked for it in the language given, from the
/// problem's statement, and a base model continues the statement in a docstring.
/// SandboxFusion's CodeContests and LiveCodeBench problems that the tests have right
/// programs for pass in both modes.
#[test]
fn contest_problems_are_asked_for_whole_programs_and_right_programs_pass() {
    use crate::sandboxfusion::{CODE_CONTESTS_SOLUTIONS, LIVECODEBENCH_SOLUTIONS};
    let code_contests_name = |record: &Value| {
        let labels: Value = serde_json::from_str(record["labels"].as_str().unwrap()).unwrap();
        labels["name"].as_str().unwrap().to_owned()
    };
    // Each file, its problems' right programs, and what those are named by.
    type Solutions<'a> = &'a [(&'a str, &'a str)];
    type Named<'a> = &'a dyn Fn(&Value) -> String;
    let sets: [(&str, Solutions, Named); 2] = [
        ("stdio/sandboxfusion_code_contests_sample.jsonl", &CODE_CONTESTS_SOLUTIONS, &code_contests_name),
        ("stdio/sandboxfusion_live_code_bench_v1_sample.jsonl", &LIVECODEBENCH_SOLUTIONS, &id_of),
    ];
    for (file, solutions, name_of) in sets {
        let Some(source) = shared_benchmark(file) else { return };
        let dir = tempfile::tempdir().unwrap();
        let problems = dir.path().join("contests.jsonl");
        let mut chosen = Vec::new();
        let mut answers = Vec::new();
        for record in read_jsonl(&source) {
            if let Some((_, program)) = solutions.iter().find(|(name, _)| *name == name_of(&record)) {
                answers.push(json!({"task_id": id_of(&record), "completion": program}));
                chosen.push(record);
            }
        }
        assert_eq!(chosen.len(), solutions.len(), "{file}: the solved problems are found");
        write_jsonl(&problems, &chosen);
        for mode in ["chat", "completion"] {
            let dir = tempfile::tempdir().unwrap();
            let flags = ["--whole-programs", "--run-on", "\n\"\"\"\nThe next problem.\n"];
            let server = OpenAiServer::start_for(dir.path(), &problems, &answers, &flags);
            let out = dir.path().join("run");
            let args = ["--k", "1", "--mode", mode, "--language", "python"];
            let finished = finish(&mut run(&server, &problems, &out, &args));
            assert_eq!(finished.code, Some(0), "{file} {mode}: {}", finished.stderr);
            assert_eq!(summary(&out)["pass@1"], json!(1.0), "{file} {mode}: {}", finished.stderr);
            let body = &server.requests()[0]["body"];
            let asked = match mode {
                "chat" => body["messages"][0]["content"].as_str().unwrap().to_owned(),
                _ => body["prompt"].as_str().unwrap().to_owned(),
            };
            let quoted = chosen.iter().any(|record| asked.contains(record["content"].as_str().unwrap().trim()));
            assert!(quoted, "{file} {mode}: the statement is asked: {asked}");
        }
    }
}

/// MultiPL-E's records carry the stop tokens their completions were cut at: those are
/// sent and applied, not the language's list, where a file gives others.
#[test]
fn multipl_e_completions_end_at_the_files_own_stop_tokens() {
    let Some(source) = shared_benchmark("multipl-e/humaneval-js.jsonl.gz") else { return };
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("humaneval-js.jsonl");
    let records: Vec<Value> = first_records(&source, 5, &problems)
        .into_iter()
        .map(|mut record| {
            record["stop_tokens"] = json!(["\n// END"]);
            record
        })
        .collect();
    write_jsonl(&problems, &records);
    let answers: Vec<Value> = records
        .iter()
        .map(|record| json!({"task_id": record["name"], "completion": "  return 1;\n}\n// END\nconsole.log(2);\n"}))
        .collect();
    // Without the stop tokens in the request, the server runs on past them.
    let server = OpenAiServer::start_for(dir.path(), &problems, &answers, &["--run-on", ""]);
    let output = dir.path().join("samples.jsonl");
    let finished = finish(
        passk(["generate", "--endpoint", &server.base, "--model", "test-model", "--problems"])
            .arg(&problems)
            .arg("--output")
            .arg(&output)
            .env_remove("OPENAI_API_KEY"),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    for request in server.requests() {
        assert_eq!(request["body"]["stop"], json!(["\n// END"]), "the file's stop tokens are sent");
    }
    for sample in read_jsonl(&output) {
        assert_eq!(sample["completion"], "  return 1;\n}", "cut at the file's stop token");
    }
}

/// An endpoint where nothing listens is said in seconds, not after a minute of retries;
/// a run may go on at another address; a default that changed with n is named with the
/// option that keeps the file's; a template is refused where it would be ignored.
#[test]
fn an_unreachable_endpoint_fails_fast_and_resuming_elsewhere_or_with_more_samples_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("samples.jsonl");
    let started = Instant::now();
    let nobody = finish(
        passk(["generate", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--problems", "basic", "--output"])
            .arg(&output),
    );
    assert_eq!(nobody.code, Some(3), "{}", nobody.stderr);
    assert!(nobody.stderr.contains("nothing answers at http://127.0.0.1:9/v1/completions"), "{}", nobody.stderr);
    assert!(started.elapsed() < Duration::from_secs(20), "told in {:?}", started.elapsed());
    assert_eq!(nobody.stderr.matches("retrying").count(), 0, "one error, not a line a request: {}", nobody.stderr);

    let answers: Vec<Value> = read_jsonl(&passk_tests::repo_root().join("problems/basic.jsonl"))
        .iter()
        .map(|problem| json!({"task_id": problem["task_id"], "completion": problem["canonical_solution"]}))
        .collect();
    let first_dir = tempfile::tempdir().unwrap();
    let first = OpenAiServer::start(first_dir.path(), &answers, &[]);
    let done = finish(&mut first.generate(&output, &["--model", "test-model"]));
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    drop(first);

    let second_dir = tempfile::tempdir().unwrap();
    let second = OpenAiServer::start(second_dir.path(), &answers, &[]);
    let defaulted = finish(&mut second.generate(&output, &["--model", "test-model", "--n", "2"]));
    assert_eq!(defaulted.code, Some(2), "{}", defaulted.stderr);
    assert!(
        defaulted.stderr.contains("--temperature was left to its default: give --temperature 0.0"),
        "{}",
        defaulted.stderr
    );
    let elsewhere = finish(&mut second.generate(&output, &["--model", "test-model", "--n", "2", "--temperature", "0"]));
    assert_eq!(elsewhere.code, Some(0), "another address serves the same model: {}", elsewhere.stderr);
    assert_eq!(read_jsonl(&output).len(), 48);
    assert_eq!(second.requests().len(), 24, "only the new samples were asked for");

    let template = dir.path().join("instruction.j2");
    std::fs::write(&template, "Write {{ entry_point }}.\n{{ prompt | nonesuch }}").unwrap();
    let ignored =
        finish(second.generate(&dir.path().join("t.jsonl"), &["--model", "test-model", "--template"]).arg(&template));
    assert_eq!(ignored.code, Some(2), "{}", ignored.stderr);
    assert!(ignored.stderr.contains("add --mode chat"), "{}", ignored.stderr);
    let broken = finish(
        second
            .generate(&dir.path().join("t.jsonl"), &["--model", "test-model", "--mode", "chat", "--template"])
            .arg(&template),
    );
    assert_eq!(broken.code, Some(2), "{}", broken.stderr);
    assert!(broken.stderr.contains(&format!("error: {}", template.display())), "the file is named: {}", broken.stderr);
    assert!(broken.stderr.contains("line 2"), "{}", broken.stderr);
    std::fs::write(&template, "Write {{ entry_pont }}.").unwrap();
    let misspelt = finish(
        second
            .generate(&dir.path().join("t.jsonl"), &["--model", "test-model", "--mode", "chat", "--template"])
            .arg(&template),
    );
    assert_eq!(misspelt.code, Some(2), "{}", misspelt.stderr);
    assert!(misspelt.stderr.contains("a template's variables are prompt, description"), "{}", misspelt.stderr);

    // Regression: --restart emptied the file before the first request, so a mistyped
    // model lost every sample asked for before.
    let before = std::fs::read(&output).unwrap();
    let typo = finish(&mut second.generate(&output, &["--model", "test-modle", "--restart"]));
    assert_eq!(typo.code, Some(2), "{}", typo.stderr);
    assert_eq!(std::fs::read(&output).unwrap(), before, "the samples are put back");
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("samples.jsonl.request.json")).unwrap()).unwrap();
    assert_eq!(record["model"], "test-model", "and their record");

    let directory = finish(&mut second.generate(dir.path(), &["--model", "test-model"]));
    assert_eq!(directory.code, Some(2), "{}", directory.stderr);
    assert!(directory.stderr.contains("is a directory: passk generate writes a samples file"), "{}", directory.stderr);
    let file = finish(&mut run(&second, Path::new("basic"), &output, &[]));
    assert_eq!(file.code, Some(2), "{}", file.stderr);
    assert!(file.stderr.contains("is a file: passk run writes a directory"), "{}", file.stderr);
}

/// `run --restart` runs the samples again and asks for none; `--ask-again` asks for
/// every one again. A chat model's answers to all of HumanEval, each repeating its
/// prompt in a fence, score 1.0 once extracted (HumanEval/64's `FIX = """` included).
#[test]
fn passk_run_restarts_the_evaluation_without_asking_again_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    let problems = humaneval_dir().join("HumanEval.jsonl.gz");
    let answers = passk_tests::humaneval_canonical_samples();
    let server = OpenAiServer::start_for(dir.path(), &problems, &answers, &[]);
    let out = dir.path().join("run");
    let chat = ["--k", "1", "--mode", "chat"];
    let first = finish(&mut run(&server, &problems, &out, &chat));
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let failed: Vec<Value> =
        read_jsonl(&out.join("results.jsonl")).into_iter().filter(|result| result["passed"] != true).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(summary(&out)["pass@1"], json!(1.0));
    assert_eq!(server.requests().len(), 164);

    let restarted = finish(&mut run(&server, &problems, &out, &[&chat[..], &["--restart"]].concat()));
    assert_eq!(restarted.code, Some(0), "{}", restarted.stderr);
    assert!(restarted.stderr.contains("nothing to ask"), "{}", restarted.stderr);
    assert!(!restarted.stderr.contains("nothing to run"), "the samples ran again: {}", restarted.stderr);
    assert_eq!(server.requests().len(), 164, "no request");

    let asked = finish(&mut run(&server, &problems, &out, &[&chat[..], &["--ask-again"]].concat()));
    assert_eq!(asked.code, Some(0), "{}", asked.stderr);
    assert_eq!(server.requests().len(), 328, "every sample asked for again");
    assert_eq!(summary(&out)["pass@1"], json!(1.0));
    assert!(!out.join("samples.jsonl.before-restart").exists(), "the earlier samples are dropped once replaced");
}

/// Other languages, end to end: HumanEval-X's JavaScript and C++ problems, a base model
/// continuing each prompt and stopped at the language's stop sequences, and a chat model
/// answering in a fence. Answered with HumanEval-X's own solutions, every sample passes.
#[test]
fn humaneval_x_in_javascript_and_cpp_goes_from_an_endpoint_to_a_full_score() {
    for (language, run_on) in [("js", "\nconsole.log(1);\n"), ("cpp", "\nint unused() { return 0; }\n")] {
        let Some(source) = shared_benchmark(&format!("humaneval-x/humaneval_{language}.jsonl.gz")) else { return };
        let dir = tempfile::tempdir().unwrap();
        let problems = dir.path().join(format!("humaneval_{language}.jsonl"));
        let records = first_records(&source, 12, &problems);
        let answers: Vec<Value> = records
            .iter()
            .map(|record| json!({"task_id": record["task_id"], "completion": record["canonical_solution"]}))
            .collect();
        for mode in ["completion", "chat"] {
            let dir = tempfile::tempdir().unwrap();
            let fence = if language == "js" { "javascript" } else { "cpp" };
            let server =
                OpenAiServer::start_for(dir.path(), &problems, &answers, &["--run-on", run_on, "--fence", fence]);
            let out = dir.path().join("run");
            let finished = finish(&mut run(&server, &problems, &out, &["--k", "1", "--mode", mode]));
            assert_eq!(finished.code, Some(0), "{language} {mode}: {}", finished.stderr);
            let results = read_jsonl(&out.join("results.jsonl"));
            let failed: Vec<&Value> = results.iter().filter(|result| result["passed"] != true).collect();
            assert!(failed.is_empty(), "{language} {mode}: {failed:#?}");
        }
    }
}
