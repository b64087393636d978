//! `passk generate` against `tests/support/openai_server.py`, a server that answers as
//! real ones do: from the repository's samples, behind rate limits, failures, dropped
//! connections and refusals of parameters. No model can be served here; what matters
//! is that the samples file holds exactly the answers the server gave, once each, and
//! that their score is the one those answers deserve.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use passk_tests::openai::OpenAiServer;
use passk_tests::{finish, passk, read_jsonl, repo_root, write_jsonl, Finished};
use serde_json::{json, Value};

/// The repository's honest samples of the bundled set, as answers: two or more per problem.
fn answers() -> Vec<Value> {
    read_jsonl(&repo_root().join("problems/basic-samples.jsonl"))
        .into_iter()
        .filter(|sample| !sample["kind"].as_str().unwrap().starts_with("hostile") && sample["completion"].is_string())
        .map(|sample| json!({"task_id": sample["task_id"], "completion": sample["completion"]}))
        .collect()
}

/// Each problem's first `n` answers, as the server hands them out.
fn first_answers(answers: &[Value], n: usize) -> BTreeMap<String, Vec<String>> {
    let mut by_task: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for answer in answers {
        by_task
            .entry(answer["task_id"].as_str().unwrap().to_owned())
            .or_default()
            .push(answer["completion"].as_str().unwrap().to_owned());
    }
    by_task.into_iter().map(|(task, all)| (task, all.iter().cycle().take(n).cloned().collect())).collect()
}

/// The samples file's completions by task, each task's sorted, after checking that each
/// (task, index) is there once and the indices are 0..n.
fn samples_by_task(path: &Path, n: u32) -> BTreeMap<String, Vec<String>> {
    let mut by_task: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
    for line in read_jsonl(path) {
        let task = line["task_id"].as_str().unwrap().to_owned();
        by_task
            .entry(task)
            .or_default()
            .push((line["index"].as_u64().unwrap(), line["completion"].as_str().unwrap().to_owned()));
    }
    by_task
        .into_iter()
        .map(|(task, mut samples)| {
            samples.sort();
            let indices: Vec<u64> = samples.iter().map(|(index, _)| *index).collect();
            assert_eq!(indices, (0..u64::from(n)).collect::<Vec<_>>(), "{task}: each index once");
            // A run-on cut at a stop sequence keeps the newline before it.
            let mut texts: Vec<String> = samples.into_iter().map(|(_, text)| text.trim_end().to_owned()).collect();
            texts.sort();
            (task, texts)
        })
        .collect()
}

fn sorted(mut expected: BTreeMap<String, Vec<String>>) -> BTreeMap<String, Vec<String>> {
    expected.values_mut().for_each(|texts| {
        texts.iter_mut().for_each(|text| *text = text.trim_end().to_owned());
        texts.sort();
    });
    expected
}

/// Per-problem (n, c) of `passk evaluate` on a samples file.
fn scored(dir: &Path, samples: &Path, extra: &[&str]) -> Vec<(String, u64, u64)> {
    let summary = dir.join(format!("{}.summary.json", samples.file_name().unwrap().to_str().unwrap()));
    let results = dir.join(format!("{}.results.jsonl", samples.file_name().unwrap().to_str().unwrap()));
    let run = finish(
        passk(["evaluate"])
            .arg(samples)
            .args(["--problems", "basic", "--k", "1", "--summary"])
            .arg(&summary)
            .arg("--results")
            .arg(&results)
            .args(extra),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let summary: Value = serde_json::from_slice(&std::fs::read(summary).unwrap()).unwrap();
    summary["per_problem"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["task_id"].as_str().unwrap().to_owned(), p["n"].as_u64().unwrap(), p["c"].as_u64().unwrap()))
        .collect()
}

fn statuses(requests: &[Value]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for request in requests {
        *counts.entry(request["status"].to_string()).or_default() += 1;
    }
    counts
}

#[test]
fn through_rate_limits_failures_and_dropped_connections_every_sample_arrives_once_and_scores_as_it_deserves() {
    let dir = tempfile::tempdir().unwrap();
    let answers = answers();
    let server = OpenAiServer::start(
        dir.path(),
        &answers,
        &["--rate-limit-every", "5", "--fail-every", "7", "--drop-every", "11"],
    );
    let output = dir.path().join("samples.jsonl");
    let run = finish(&mut server.generate(&output, &["--model", "test-model", "--n", "2"]));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.contains("HTTP 429"), "the rate limit was met and retried: {}", run.stderr);
    assert!(run.stderr.contains("connection"), "a dropped connection was retried: {}", run.stderr);

    let expected = first_answers(&answers, 2);
    assert_eq!(samples_by_task(&output, 2), sorted(expected.clone()), "the server's answers, each once");
    let counts = statuses(&server.requests());
    assert_eq!(counts.get("200"), Some(&24), "one answered request per problem: {counts:?}");
    for status in ["429", "500", "\"dropped\""] {
        assert!(counts.contains_key(status), "{status} happened: {counts:?}");
    }
    // Completions were cut at Python's stop sequences, so the server's run-on is gone.
    assert!(read_jsonl(&output).iter().all(|line| !line["completion"].as_str().unwrap().contains("def check_it")));

    // The score is the one the answers themselves get.
    let answered = dir.path().join("answered.jsonl");
    let lines: Vec<Value> = expected
        .iter()
        .flat_map(|(task, texts)| texts.iter().map(move |text| json!({"task_id": task, "completion": text})))
        .collect();
    write_jsonl(&answered, &lines);
    let (mut generated, mut deserved) = (scored(dir.path(), &output, &[]), scored(dir.path(), &answered, &[]));
    generated.sort();
    deserved.sort();
    assert_eq!(generated, deserved);

    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("samples.jsonl.request.json")).unwrap()).unwrap();
    assert_eq!(record["model"], "test-model");
    assert_eq!(record["n"], 2);
    assert_eq!(record["temperature"], 0.8, "more than one sample is sampled at 0.8 unless told");
    assert_eq!(record["endpoint"], json!(server.base));
}

/// OpenAI's newer models refuse `max_tokens`; some servers refuse `n > 1`, and
/// llama.cpp's answers one choice whatever `n` says. Each is learned once, and every
/// sample still arrives, sample i of a seeded run asked with seed + i.
#[test]
fn a_server_that_refuses_max_tokens_or_n_or_ignores_n_gets_requests_it_takes() {
    for flags in [&["--refuse-max-tokens", "--refuse-n"][..], &["--ignore-n"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let answers = answers();
        let server = OpenAiServer::start(dir.path(), &answers, flags);
        let output = dir.path().join("samples.jsonl");
        let run = finish(&mut server.generate(&output, &["--model", "test-model", "--n", "3", "--seed", "7"]));
        assert_eq!(run.code, Some(0), "{flags:?}: {}", run.stderr);
        assert_eq!(samples_by_task(&output, 3), sorted(first_answers(&answers, 3)), "{flags:?}");
        let requests = server.requests();
        let answered: Vec<&Value> = requests.iter().filter(|request| request["status"] == 200).collect();
        assert_eq!(answered.len(), 72, "{flags:?}: each of the 24 problems' 3 samples");
        if flags.contains(&"--refuse-max-tokens") {
            assert!(run.stderr.contains("the length limit is sent as `max_completion_tokens`"), "{}", run.stderr);
            assert!(run.stderr.contains("refuses n > 1"), "{}", run.stderr);
            assert_eq!(run.stderr.matches("refuses n > 1").count(), 1, "said once: {}", run.stderr);
            assert!(answered.iter().all(|request| request["body"].get("max_tokens").is_none()));
            assert!(answered.iter().all(|request| request["body"]["max_completion_tokens"] == 1024));
        } else {
            // Regression: a server ignoring n was asked for n - 1, n - 2, ... with the
            // same seed, which a seeded server answers with the same sample each time.
            let said = "answers one sample whatever n asks for";
            assert_eq!(run.stderr.matches(said).count(), 1, "said once: {}", run.stderr);
            assert!(answered.iter().all(|request| request["body"]["max_tokens"] == 1024));
            let alone = answered.iter().filter(|request| request["body"].get("n").is_none()).count();
            assert!(alone >= 48, "once learned, samples are asked for alone: {alone}");
        }
        // Asked alone, sample i is asked with seed + i, so they can differ.
        let mut seeds: Vec<u64> = answered.iter().map(|r| r["body"]["seed"].as_u64().unwrap()).collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds, [7, 8, 9], "{flags:?}");
        let refused = requests.iter().filter(|request| request["status"] == 400).count();
        assert!(refused <= 2 * 16, "a refusal is learned from, not repeated: {refused} refusals");
        let record: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("samples.jsonl.request.json")).unwrap()).unwrap();
        assert_eq!(record["learned"]["n"], false, "{flags:?}: {record:#}");
    }
}

/// A wrong model name, a missing key: each is one clear error, exit status 2, and no
/// request loop.
#[test]
fn a_wrong_model_or_a_missing_key_is_one_clear_error_not_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let server = OpenAiServer::start(dir.path(), &answers(), &["--key", "sk-test"]);
    let output = dir.path().join("samples.jsonl");

    let no_key = finish(&mut server.generate(&output, &["--model", "test-model", "--concurrency", "1"]));
    assert_eq!(no_key.code, Some(2), "{}", no_key.stderr);
    assert!(no_key.stderr.contains("HTTP 401"), "{}", no_key.stderr);
    assert!(no_key.stderr.contains("no API key was sent: set OPENAI_API_KEY"), "{}", no_key.stderr);
    assert_eq!(server.requests().len(), 1, "one request, no loop");

    let wrong = finish(
        server.generate(&output, &["--model", "gpt-nonesuch", "--concurrency", "1"]).env("OPENAI_API_KEY", "sk-test"),
    );
    assert_eq!(wrong.code, Some(2), "{}", wrong.stderr);
    assert!(wrong.stderr.contains("has no model \"gpt-nonesuch\"; it serves test-model"), "{}", wrong.stderr);
    assert_eq!(wrong.stderr.matches("error:").count(), 1, "{}", wrong.stderr);
    assert_eq!(server.requests().len(), 2, "one request, no loop");

    let keyed =
        finish(server.generate(&output, &["--model", "test-model", "--restart"]).env("OPENAI_API_KEY", "sk-test"));
    assert_eq!(keyed.code, Some(0), "{}", keyed.stderr);
    assert!(server.requests().iter().skip(2).all(|request| request["authorization"] == "Bearer sk-test"));
    assert_eq!(read_jsonl(&output).len(), 24);

    // A larger n asks for more; a smaller one is refused, as the file cannot give any back.
    let more = finish(
        server
            .generate(&output, &["--model", "test-model", "--n", "2", "--temperature", "0"])
            .env("OPENAI_API_KEY", "sk-test"),
    );
    assert_eq!(more.code, Some(0), "{}", more.stderr);
    assert_eq!(read_jsonl(&output).len(), 48);
    let fewer = finish(
        server
            .generate(&output, &["--model", "test-model", "--n", "1", "--temperature", "0"])
            .env("OPENAI_API_KEY", "sk-test"),
    );
    assert_eq!(fewer.code, Some(2), "{}", fewer.stderr);
    assert!(fewer.stderr.contains("n: 2 then, 1 now"), "{}", fewer.stderr);

    let no_scheme = finish(
        passk(["generate", "--endpoint", "localhost:8000/v1", "--model", "m", "--problems", "basic", "--output"])
            .arg(&output),
    );
    assert_eq!(no_scheme.code, Some(2), "{}", no_scheme.stderr);
    assert!(no_scheme.stderr.contains("not an http:// or https:// URL"), "{}", no_scheme.stderr);
}

/// Regression: a refusal of one problem's request cancelled the others in flight, and
/// samples the server had answered (and billed) were never written.
#[test]
fn answers_in_flight_when_another_request_is_refused_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    // Answers for half the problems: the rest are refused with 400.
    let some: Vec<Value> = answers()
        .into_iter()
        .filter(|answer| {
            let task = answer["task_id"].as_str().unwrap();
            task.trim_start_matches("basic/").parse::<u32>().unwrap() % 2 == 0
        })
        .collect();
    let server = OpenAiServer::start(dir.path(), &some, &["--delay", "0.2"]);
    let output = dir.path().join("samples.jsonl");
    let run = finish(&mut server.generate(&output, &["--model", "test-model", "--concurrency", "8"]));
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let answered = server.requests().iter().filter(|request| request["status"] == 200).count();
    assert!(answered > 0, "some were answered before the refusal");
    assert_eq!(read_jsonl(&output).len(), answered, "every answered sample is in the file: {}", run.stderr);
}

/// Ctrl-C loses nothing: the samples written stay, and the same command asks only for
/// the rest. Other settings are refused rather than mixed into the file.
#[test]
fn an_interrupted_generation_resumes_asking_only_for_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let server = OpenAiServer::start(dir.path(), &answers(), &["--delay", "0.3"]);
    let output = dir.path().join("samples.jsonl");
    let args = ["--model", "test-model", "--concurrency", "2"];
    let child = server.generate(&output, &args).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read(&output).map_or(0, |text| text.iter().filter(|&&b| b == b'\n').count()) < 4 {
        assert!(Instant::now() < deadline, "no samples arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(libc::pid_t::try_from(child.id()).unwrap(), libc::SIGINT) };
    let interrupted = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&interrupted.stderr);
    assert_eq!(interrupted.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("run the same command again to ask for the rest"), "{stderr}");
    let kept = read_jsonl(&output).len();
    assert!((4..24).contains(&kept), "{kept} samples kept");

    let other = finish(&mut server.generate(&output, &["--model", "test-model", "--temperature", "0.5"]));
    assert_eq!(other.code, Some(2), "{}", other.stderr);
    assert!(other.stderr.contains("temperature: 0.0 then, 0.5 now"), "{}", other.stderr);

    // The resumed run's requests are told apart by the key it sends.
    let resumed: Finished = finish(server.generate(&output, &args).env("OPENAI_API_KEY", "resumed"));
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    assert!(resumed.stderr.contains(&format!("resuming: {kept} of 24 samples")), "{}", resumed.stderr);
    let asked = server.requests().iter().filter(|request| request["authorization"] == "Bearer resumed").count();
    assert_eq!(asked, 24 - kept, "only the missing were asked for");
    assert_eq!(samples_by_task(&output, 1).len(), 24);

    let again = finish(&mut server.generate(&output, &args));
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(again.stderr.contains("nothing to ask"), "{}", again.stderr);
}

/// Chat mode: the instruction quotes the prompt in a fence, the raw answer is kept, and
/// `passk evaluate --extract` scores the code in it.
#[test]
fn a_chat_models_raw_answers_are_kept_and_score_with_extract() {
    let dir = tempfile::tempdir().unwrap();
    let canonical: Vec<Value> = read_jsonl(&repo_root().join("problems/basic.jsonl"))
        .into_iter()
        .map(|problem| json!({"task_id": problem["task_id"], "completion": problem["canonical_solution"]}))
        .collect();
    let server = OpenAiServer::start(dir.path(), &canonical, &[]);
    let output = dir.path().join("chat.jsonl");
    let run = finish(&mut server.generate(&output, &["--model", "test-model", "--mode", "chat"]));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let requests = server.requests();
    let first = &requests[0];
    assert_eq!(first["path"], "/v1/chat/completions");
    let content = first["body"]["messages"][0]["content"].as_str().unwrap();
    assert!(content.contains("```python\n") && content.contains("one fenced code block"), "{content}");
    assert!(first["body"].get("stop").is_none(), "a chat answer is not cut");
    let samples = read_jsonl(&output);
    assert!(samples.iter().all(|line| line["completion"].as_str().unwrap().starts_with("Here is the code")));
    // A misspelt variable in a template is an error, not an empty question.
    let template = dir.path().join("template.j2");
    std::fs::write(&template, "Solve: {{ promt }}").unwrap();
    let misspelt = finish(
        server
            .generate(&dir.path().join("other.jsonl"), &["--model", "test-model", "--mode", "chat", "--template"])
            .arg(&template),
    );
    assert_eq!(misspelt.code, Some(2), "{}", misspelt.stderr);
    assert!(misspelt.stderr.contains("undefined"), "{}", misspelt.stderr);
    let scores = scored(dir.path(), &output, &["--extract"]);
    assert_eq!(scores.len(), 24);
    assert!(scores.iter().all(|(_, n, c)| (*n, *c) == (1, 1)), "every canonical answer passes: {scores:?}");
}

/// At scale: all of HumanEval at n = 10 from a server that takes one sample per request,
/// 64 requests in flight, through rate limits, failures and dropped connections: 1,640
/// requests, and the file holds each of the 1,640 answers exactly once.
#[test]
fn sixteen_hundred_requests_through_faults_give_every_answer_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let problems = passk_tests::humaneval_dir().join("HumanEval.jsonl.gz");
    let answers: Vec<Value> = passk_tests::humaneval_problems()
        .iter()
        .flat_map(|problem| {
            (0..10).map(move |i| {
                let completion = format!("{}    # answer {i}\n", problem["canonical_solution"].as_str().unwrap());
                json!({"task_id": problem["task_id"], "completion": completion})
            })
        })
        .collect();
    let flags = ["--refuse-n", "--rate-limit-every", "50", "--fail-every", "37", "--drop-every", "101"];
    let server = OpenAiServer::start_for(dir.path(), &problems, &answers, &flags);
    let output = dir.path().join("samples.jsonl");
    let started = Instant::now();
    let run = finish(
        passk(["generate", "--endpoint", &server.base, "--model", "test-model", "--problems"])
            .arg(&problems)
            .args(["--n", "10", "--concurrency", "64", "--output"])
            .arg(&output)
            .env_remove("OPENAI_API_KEY"),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let took = started.elapsed();
    assert_eq!(samples_by_task(&output, 10), sorted(first_answers(&answers, 10)), "each answer once");
    let counts = statuses(&server.requests());
    assert_eq!(counts.get("200"), Some(&1640), "{counts:?}");
    assert!(took < Duration::from_secs(240), "1,640 requests took {took:?}");
}

/// A server that misbehaves (found by a red team): a runaway answer of 200 MiB, fewer or
/// more choices than asked, choices without text, redirects, escape sequences in its
/// messages, and two runs writing one file. Each is bounded, said once, or refused.
#[test]
fn a_misbehaving_server_is_bounded_and_its_answers_are_taken_only_as_asked() {
    let answers = answers();

    // A runaway body is cut off at what n answers of max_tokens could take.
    let dir = tempfile::tempdir().unwrap();
    let server = OpenAiServer::start(dir.path(), &answers, &["--huge-answer", "200"]);
    let output = dir.path().join("samples.jsonl");
    let (run, peak_kib) = passk_tests::finish_measuring_memory(
        &mut server.generate(&output, &["--model", "test-model", "--concurrency", "4"]),
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("answered more than 16 MiB for 1 samples of at most 1024 tokens"), "{}", run.stderr);
    assert!(peak_kib < 200 << 10, "memory stays bounded: {peak_kib} KiB");
    assert_eq!(read_jsonl(&output).len(), 0);

    // Fewer choices than asked: the follow-up for the rest has a seed of its own, so no
    // two requests for one problem share a seed.
    let dir = tempfile::tempdir().unwrap();
    let server = OpenAiServer::start(dir.path(), &answers, &["--half-choices"]);
    let output = dir.path().join("samples.jsonl");
    let run = finish(&mut server.generate(&output, &["--model", "test-model", "--n", "4", "--seed", "42"]));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(samples_by_task(&output, 4).len(), 24);
    let mut seeds: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for request in server.requests().iter().filter(|request| request["status"] == 200) {
        let prompt = request["body"]["prompt"].as_str().unwrap().to_owned();
        seeds.entry(prompt).or_default().push(request["body"]["seed"].as_u64().unwrap());
    }
    assert_eq!(seeds.len(), 24);
    for (prompt, mut seeds) in seeds {
        let asked = seeds.len();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), asked, "a seed of its own for each request: {prompt}");
    }

    // More choices than asked: a sample asked for alone takes one, its own seed's.
    let dir = tempfile::tempdir().unwrap();
    let server = OpenAiServer::start(dir.path(), &answers, &["--refuse-n", "--extra-choices", "2"]);
    let output = dir.path().join("samples.jsonl");
    let run = finish(&mut server.generate(&output, &["--model", "test-model", "--n", "3", "--seed", "7"]));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(samples_by_task(&output, 3).len(), 24, "each index once");
    let answered = server.requests().iter().filter(|request| request["status"] == 200).count();
    assert_eq!(answered, 72, "one request a sample");

    // Choices without text are said once, and written empty (they fail).
    let dir = tempfile::tempdir().unwrap();
    let server = OpenAiServer::start(dir.path(), &answers, &["--textless"]);
    let output = dir.path().join("samples.jsonl");
    let run = finish(&mut server.generate(&output, &["--model", "test-model", "--mode", "chat"]));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stderr.matches("answered a choice without text").count(), 1, "{}", run.stderr);

    // A redirect is not followed: the samples would not be the endpoint's.
    let elsewhere_dir = tempfile::tempdir().unwrap();
    let elsewhere = OpenAiServer::start(elsewhere_dir.path(), &answers, &[]);
    let redirecting = tempfile::tempdir().unwrap();
    let server = OpenAiServer::start(redirecting.path(), &answers, &["--redirect", &elsewhere.base.replace("/v1", "")]);
    let run = finish(&mut server.generate(&dir.path().join("redirected.jsonl"), &["--model", "test-model"]));
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("redirects elsewhere"), "{}", run.stderr);
    assert!(elsewhere.requests().is_empty(), "nothing was asked of the other server");

    // The server's words reach the terminal without its escape sequences.
    let run = finish(&mut server.generate(&dir.path().join("escaped.jsonl"), &["--model", "\u{1b}[2Jall passed"]));
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);

    // Two runs on one file: the second is refused at once, naming the first.
    let dir = tempfile::tempdir().unwrap();
    let server = OpenAiServer::start(dir.path(), &answers, &["--delay", "0.5"]);
    let output = dir.path().join("samples.jsonl");
    let first = server
        .generate(&output, &["--model", "test-model", "--concurrency", "1"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !server.requests().iter().any(|request| request["status"] == 200) {
        assert!(Instant::now() < deadline, "the first run asked nothing");
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = finish(&mut server.generate(&output, &["--model", "test-model"]));
    assert_eq!(second.code, Some(2), "{}", second.stderr);
    assert!(second.stderr.contains("is being written by another passk run (pid"), "{}", second.stderr);
    let first = first.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    assert_eq!(samples_by_task(&output, 1).len(), 24);
}

/// On a terminal, samples arriving draw a bar of samples out of the total, tokens a
/// second and an ETA; `--requests-per-second` paces the requests.
#[test]
fn a_terminal_shows_samples_tokens_a_second_and_eta_and_the_pace_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let server = OpenAiServer::start(dir.path(), &answers(), &["--delay", "0.05"]);
    let output = dir.path().join("samples.jsonl");
    let typescript = dir.path().join("typescript");
    let command = format!(
        "{} generate --endpoint {} --model test-model --problems basic --n 2 --requests-per-second 8 --output {}",
        passk_tests::passk_binary().display(),
        server.base,
        output.display()
    );
    let started = Instant::now();
    // `script` gives the command a pseudo-terminal and records what it drew.
    let finished = finish(
        std::process::Command::new("script")
            .args(["--quiet", "--return", "--command", &command])
            .arg(&typescript)
            .env_remove("OPENAI_API_KEY"),
    );
    let took = started.elapsed();
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let drawn = String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned();
    assert!(drawn.contains("/48 samples"), "samples out of the total: {drawn}");
    assert!(drawn.contains("tokens/s") && drawn.contains("ETA"), "a rate and an ETA: {drawn}");
    // 24 requests (n = 2 each) at 8 a second take about three seconds.
    assert!(took >= Duration::from_millis(2500), "the pace was kept: {took:?}");
    assert_eq!(server.requests().len(), 24, "one request a problem");
}
