//! Long runs that survive: nothing lost when a run is killed, resumed to the same
//! results, machine faults kept apart from the model's, and time-outs that are not
//! merely a busy machine's.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use passk_tests::{
    finish, machine_to_myself, passk, passk_binary, read_jsonl, repo_root, slow_honest_samples, write_jsonl, Finished,
};
use serde_json::{json, Value};

fn evaluate_command(samples: &Path, results: &Path, extra: &[&str]) -> Command {
    let mut command = passk(["evaluate"]);
    command.arg(samples).args(["--problems", "basic", "--partial", "--k", "1", "--results"]).arg(results).args(extra);
    command
}

fn spawn(mut command: Command) -> Child {
    command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
}

fn partial(results: &Path) -> PathBuf {
    PathBuf::from(format!("{}.partial", results.display()))
}

/// Waits, up to three minutes, until the partial results hold at least `lines` lines.
/// Regression: a minute was not always enough in CI, where the whole suite shares two
/// cores and the run's first programs waited behind other tests' for that long.
fn wait_for_lines(results: &Path, lines: usize) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while std::fs::read(partial(results)).map_or(0, |text| text.iter().filter(|&&b| b == b'\n').count()) < lines {
        assert!(Instant::now() < deadline, "no progress in the run");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every line of a results file is a whole JSON object; returns how many there are.
fn whole_lines(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "the file ends in a whole line");
    for line in text.lines() {
        serde_json::from_str::<Value>(line).expect("a whole JSON line");
    }
    text.lines().count()
}

fn verdicts(results: &[Value]) -> Vec<(Value, Value, Value)> {
    results.iter().map(|r| (r["task_id"].clone(), r["passed"].clone(), r["result"].clone())).collect()
}

fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(libc::pid_t::try_from(child.id()).unwrap(), signal) };
}

/// A tiny pseudo-random sequence, so each run kills at other points.
fn random_delays(count: usize) -> Vec<Duration> {
    let mut state = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    (0..count)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            Duration::from_millis(200 + (state >> 33) % 1500)
        })
        .collect()
}

#[test]
fn a_run_killed_at_random_points_resumes_to_the_same_results() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &slow_honest_samples(4, 0.02));
    let reference = dir.path().join("reference.jsonl");
    let finished = finish(&mut evaluate_command(&samples, &reference, &[]));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let expected = read_jsonl(&reference);

    let results = dir.path().join("results.jsonl");
    for delay in random_delays(4) {
        let mut run = spawn(evaluate_command(&samples, &results, &[]));
        std::thread::sleep(delay);
        signal(&run, libc::SIGKILL);
        run.wait().unwrap();
        if partial(&results).exists() {
            whole_lines(&partial(&results));
        }
    }
    let finished = finish(&mut evaluate_command(&samples, &results, &[]));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(!partial(&results).exists(), "the partial file became the results");
    assert_eq!(whole_lines(&results), expected.len(), "exactly one line per sample");
    assert_eq!(verdicts(&read_jsonl(&results)), verdicts(&expected), "as if it had never stopped");
}

/// Samples in which the first is slow and the rest are quick: while the first runs, the
/// other worker decides all the others.
fn one_slow_then_quick(seconds: f64) -> Vec<Value> {
    let mut samples = slow_honest_samples(2, 0.02);
    let first =
        samples[0]["completion"].as_str().unwrap().replace("time.sleep(0.02)", &format!("time.sleep({seconds})"));
    samples[0]["completion"] = json!(first);
    samples
}

/// The samples a journal has a verdict for, by index.
fn journal_verdicts(results: &Path) -> std::collections::BTreeMap<u64, Value> {
    let text = std::fs::read_to_string(partial(results)).unwrap_or_default();
    let mut decided = std::collections::BTreeMap::new();
    // A last line without its newline was cut short by the kill.
    for line in text.split_inclusive('\n').filter(|line| line.ends_with('\n')) {
        let line: Value = serde_json::from_str(line).expect("a whole journal line is JSON");
        decided.insert(line["sample"].as_u64().unwrap(), line["result"].clone());
    }
    decided.retain(|_, result| result["status"] != "infrastructure");
    decided
}

/// Regression: results were written only in the samples' order, so one slow sample held
/// back everything decided after it; killed, a run lost all of that, and its resume ran
/// those programs again (785 of 1,603 on HumanEval). Now a kill -9 loses only what was
/// running, and the resume runs only what never finished.
#[test]
fn a_killed_run_loses_only_the_programs_that_were_running() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let records = one_slow_then_quick(8.0);
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let extra = ["--jobs", "2", "--no-dedup", "--timeout", "30", "--summary", summary.to_str().unwrap()];
    let mut run = spawn(evaluate_command(&samples, &results, &extra));
    wait_for_lines(&results, records.len() / 2);
    signal(&run, libc::SIGKILL);
    run.wait().unwrap();
    let decided = journal_verdicts(&results);
    assert!(!decided.contains_key(&0), "the slow first sample was still running");
    assert!(decided.len() >= records.len() / 2, "everything decided after it is on disk: {}", decided.len());

    let resumed = finish(&mut evaluate_command(&samples, &results, &extra));
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(summary["run"]["resumed_from"], decided.len(), "{summary}");
    assert_eq!(summary["run"]["executions"], records.len() - decided.len(), "only what never finished ran again");
    let results = read_jsonl(&results);
    assert_eq!(results.len(), records.len());
    for (index, (result, record)) in results.iter().zip(&records).enumerate() {
        assert_eq!(result["completion"], record["completion"], "line {index} is sample {index}");
        assert_eq!(result["passed"], record["kind"] == "correct", "{result}");
        if let Some(before) = decided.get(&(index as u64)) {
            assert_eq!(result, before, "a verdict decided before the kill is kept as it was");
        }
    }
}

/// Regression: the progress bar counted results written in the samples' order, so it
/// showed 815/3280 when about half the samples were done. It counts decided verdicts:
/// with a slow first sample, it reaches nearly all of them long before the run ends.
#[test]
fn the_progress_bar_counts_verdicts_as_they_are_decided() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let records = one_slow_then_quick(12.0);
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let command = evaluate_command(&samples, &results, &["--jobs", "2", "--no-dedup", "--timeout", "30"]);
    let line = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|arg| format!("'{}'", arg.to_str().unwrap()))
        .collect::<Vec<_>>()
        .join(" ");
    // `script` gives passk a terminal, where it draws its bar, and copies what it draws.
    let mut terminal = Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut output = terminal.stdout.take().unwrap();
    let started = Instant::now();
    let mut drawn: Vec<(Duration, usize)> = Vec::new();
    let mut buffer = [0; 4096];
    let mut text = String::new();
    let position = drawn_positions(records.len());
    loop {
        let read = std::io::Read::read(&mut output, &mut buffer).unwrap();
        if read == 0 {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&buffer[..read]));
        for shown in position(&text) {
            drawn.push((started.elapsed(), shown));
        }
        text = text.rsplit_once('\r').map_or(text.clone(), |(_, rest)| rest.to_owned());
    }
    let ended = started.elapsed();
    assert!(terminal.wait().unwrap().success());
    let near_done = records.len() - 2;
    let early = drawn.iter().find(|(_, shown)| *shown >= near_done);
    let Some((at, shown)) = early else { panic!("the bar never showed {near_done}: {drawn:?}") };
    assert!(ended - *at > Duration::from_secs(3), "{shown}/{} showed only as the run ended: {drawn:?}", records.len());
}

/// Regression: off a terminal (a CI log) passk showed no progress at all, minutes of
/// silence on a first run of HumanEval+. A run whose stderr is a pipe writes plain lines,
/// spaced by a tenth of the samples and ten seconds: this one, of 48 samples of at least
/// a quarter second each on one worker, takes more than ten seconds, so it writes at
/// least one, and never more than ten.
#[test]
fn off_a_terminal_progress_is_a_plain_line_now_and_then() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let records = slow_honest_samples(1, 0.25);
    assert_eq!(records.len(), 48);
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let finished = finish(&mut evaluate_command(&samples, &results, &["--jobs", "1", "--no-dedup"]));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(!finished.stderr.contains(['\r', '\x1b']), "no bar drawn into a pipe: {:?}", finished.stderr);
    let shown: Vec<usize> = finished
        .stderr
        .lines()
        .filter_map(|line| line.strip_prefix("judging: "))
        .map(|line| {
            let (count, rest) = line.split_once("/48 samples (").unwrap_or_else(|| panic!("{line}"));
            assert!(rest.contains("%), ") && rest.contains("/s"), "a share and a rate: {line}");
            count.parse().unwrap()
        })
        .collect();
    assert!((1..=10).contains(&shown.len()), "{}", finished.stderr);
    assert!(shown.windows(2).all(|pair| pair[1] >= pair[0] + 5), "{shown:?}");
}

/// Finds each "N/TOTAL samples" a progress bar drew in a terminal's output.
fn drawn_positions(total: usize) -> impl Fn(&str) -> Vec<usize> {
    let suffix = format!("/{total} samples");
    move |text: &str| {
        text.match_indices(&suffix)
            .filter_map(|(at, _)| {
                let digits: String = text[..at]
                    .chars()
                    .rev()
                    .take_while(char::is_ascii_digit)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                digits.parse().ok()
            })
            .collect()
    }
}

/// Guards the lock on the results file: two runs on one results file once both wrote
/// into it and one still reported success. A second run refuses at once and names the
/// first; once the first is killed with SIGKILL its lock is gone, and a run resumes.
#[test]
fn a_second_run_on_the_same_results_refuses_at_once_and_a_killed_runs_lock_never_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &slow_honest_samples(2, 0.3));
    let results = dir.path().join("results.jsonl");
    let mut first = spawn(evaluate_command(&samples, &results, &["--jobs", "1"]));
    wait_for_lines(&results, 1);

    let started = Instant::now();
    let second = finish(&mut evaluate_command(&samples, &results, &["--jobs", "1"]));
    assert_eq!(second.code, Some(2), "{}", second.stderr);
    let holder = format!("is being written by another passk run (pid {})", first.id());
    assert!(second.stderr.contains(&holder), "{}", second.stderr);
    assert!(started.elapsed() < Duration::from_secs(10), "it refuses before checking or running anything");
    assert!(first.try_wait().unwrap().is_none(), "the first run goes on");

    signal(&first, libc::SIGKILL);
    first.wait().unwrap();
    let resumed = finish(&mut evaluate_command(&samples, &results, &["--jobs", "1"]));
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    assert!(resumed.stderr.contains("resuming:"), "{}", resumed.stderr);
    assert_eq!(whole_lines(&results), read_jsonl(&samples).len());
    assert!(!PathBuf::from(format!("{}.lock", results.display())).exists(), "a finished run leaves no lock file");
}

#[test]
fn ctrl_c_stops_cleanly_a_resume_with_other_settings_is_refused_and_restart_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let mut records = slow_honest_samples(1, 0.01);
    // Candidates in flight when Ctrl-C comes would take a minute to finish.
    records.extend(slow_honest_samples(1, 60.0));
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let run = spawn(evaluate_command(&samples, &results, &["--timeout", "120"]));
    wait_for_lines(&results, 10);
    let interrupted = Instant::now();
    signal(&run, libc::SIGINT);
    let output = run.wait_with_output().unwrap();
    assert!(interrupted.elapsed() < Duration::from_secs(30), "stopped promptly, not after the candidates' minute");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted") && stderr.contains("run the same command again, without --restart, to resume"),
        "{stderr}"
    );
    let kept = whole_lines(&partial(&results));
    assert!(kept >= 10, "finished results are on disk");

    let refused = finish(&mut evaluate_command(&samples, &results, &["--timeout", "100"]));
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("timeout: was 120.0, now 100.0") && refused.stderr.contains("--restart"));
    assert_eq!(whole_lines(&partial(&results)), kept, "a refused resume touches nothing");
    // Verdicts from the judge and from the candidate's own interpreter never mix in one file.
    let refused = finish(&mut evaluate_command(&samples, &results, &["--timeout", "120", "--verdicts", "in-process"]));
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains(r#"verdicts: was "judge", now "in-process""#), "{}", refused.stderr);
    assert_eq!(whole_lines(&partial(&results)), kept, "a refused resume touches nothing");

    // Regression: samples changed since the run began were refused as
    // `samples_sha256: was "<64 hex digits>", now "<64 more>"`, to be run "with those
    // settings". The message says in words which file changed and that --restart starts
    // over, the digests shortened beside it.
    write_jsonl(&samples, &slow_honest_samples(1, 0.0));
    let refused = finish(&mut evaluate_command(&samples, &results, &["--timeout", "120"]));
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    let changed = format!("the samples file {} changed since the run began (SHA-256 ", samples.display());
    assert!(refused.stderr.contains(&changed), "{}", refused.stderr);
    assert!(refused.stderr.contains("add --restart to start over on the files as they are now"), "{}", refused.stderr);
    let longest_hex = refused.stderr.split(|c: char| !c.is_ascii_hexdigit()).map(str::len).max().unwrap_or(0);
    assert!(!refused.stderr.contains("samples_sha256") && longest_hex < 64, "{}", refused.stderr);
    // With other settings too, both are named.
    let refused = finish(&mut evaluate_command(&samples, &results, &["--timeout", "100"]));
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains(&changed), "{}", refused.stderr);
    assert!(refused.stderr.contains("its settings differ too (timeout: was 120.0, now 100.0)"), "{}", refused.stderr);

    let restarted = finish(&mut evaluate_command(&samples, &results, &["--timeout", "100", "--restart"]));
    assert_eq!(restarted.code, Some(0), "{}", restarted.stderr);
    assert_eq!(whole_lines(&results), 48);
}

/// A small file system of its own, filled up by the results.
#[test]
fn a_full_disk_is_a_fault_of_the_machine_and_the_run_resumes_once_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &slow_honest_samples(6, 0.0));
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let script = r#"
set -u
mount -t tmpfs -o size=48k tmpfs "$SMALL" || exit 90
"$PASSK" evaluate "$SAMPLES" --problems basic --k 1 --results "$SMALL/results.jsonl" >"$LOGS/first.out" 2>"$LOGS/first.err"
echo $? >"$LOGS/first.code"
cp "$SMALL/results.jsonl.partial" "$LOGS/partial-when-full.jsonl"
mount -o remount,size=4m "$SMALL"
"$PASSK" evaluate "$SAMPLES" --problems basic --k 1 --results "$SMALL/results.jsonl" >"$LOGS/second.out" 2>"$LOGS/second.err"
echo $? >"$LOGS/second.code"
cp "$SMALL/results.jsonl" "$LOGS/results.jsonl"
"#;
    // SAFETY: geteuid has no preconditions.
    let mut unshare = if unsafe { libc::geteuid() } == 0 {
        Command::new("unshare")
    } else {
        let mut command = Command::new("unshare");
        command.args(["--user", "--map-current-user"]);
        command
    };
    let status = unshare
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .env("SMALL", &small)
        .env("PASSK", passk_binary())
        .env("SAMPLES", &samples)
        .env("LOGS", &logs)
        .status()
        .unwrap();
    assert!(status.success(), "the scenario ran: {status}");
    let read = |name: &str| std::fs::read_to_string(logs.join(name)).unwrap();
    assert_eq!(read("first.code").trim(), "3", "{}", read("first.err"));
    assert!(read("first.err").contains("No space left on device"), "{}", read("first.err"));
    assert!(
        read("first.err").contains("run the same command again, without --restart, to resume"),
        "{}",
        read("first.err")
    );
    assert!(read("first.out").contains("not reported"), "no pass@k from an incomplete run: {}", read("first.out"));
    let kept = whole_lines(&logs.join("partial-when-full.jsonl"));
    assert!(kept > 0 && kept < 288, "{kept} lines fitted");
    assert_eq!(read("second.code").trim(), "0", "{}", read("second.err"));
    assert!(read("second.err").contains(&format!("resuming: {kept} of 288")), "{}", read("second.err"));
    assert_eq!(whole_lines(&logs.join("results.jsonl")), 288);
}

/// The drivers of this run: they run the interpreter at `interpreter`.
fn drivers_of(interpreter: &Path) -> Vec<libc::pid_t> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline);
        if cmdline.starts_with(&*interpreter.to_string_lossy()) && cmdline.contains("passk_driver") {
            found.push(pid);
        }
    }
    found
}

fn kill_drivers(interpreter: &Path) -> usize {
    let drivers = drivers_of(interpreter);
    for &pid in &drivers {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    drivers.len()
}

#[test]
fn a_crashed_worker_is_replaced_and_its_sample_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let interpreter = dir.path().join("bin").join("python3");
    std::fs::create_dir(interpreter.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/usr/bin/python3", &interpreter).unwrap();
    let samples = dir.path().join("samples.jsonl");
    let records = slow_honest_samples(1, 0.2);
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let mut command = evaluate_command(&samples, &results, &[]);
    command.arg("--python").arg(&interpreter);
    let run = spawn(command);
    wait_for_lines(&results, 4);
    assert!(kill_drivers(&interpreter) > 0, "found the run's workers");
    let output = run.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let results = read_jsonl(&results);
    assert_eq!(results.len(), records.len());
    for (result, record) in results.iter().zip(&records) {
        assert_eq!(result["passed"], record["kind"] == "correct", "a crash is not the candidate's: {result}");
    }
}

#[test]
fn a_missing_interpreter_stops_the_run_without_a_score_and_it_resumes_once_restored() {
    let dir = tempfile::tempdir().unwrap();
    let interpreter = dir.path().join("bin").join("python3");
    std::fs::create_dir(interpreter.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/usr/bin/python3", &interpreter).unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &slow_honest_samples(1, 0.2));
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let command = || {
        let mut command = evaluate_command(&samples, &results, &["--summary", summary.to_str().unwrap()]);
        command.arg("--python").arg(&interpreter);
        command
    };
    let run = spawn(command());
    wait_for_lines(&results, 4);
    std::fs::remove_file(&interpreter).unwrap();
    assert!(kill_drivers(&interpreter) > 0, "found the run's workers");
    let output = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("fault of this machine") && stderr.contains("cannot start worker"), "{stderr}");
    assert!(stderr.contains("No such file or directory"), "the cause is named: {stderr}");
    let summary_json: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(summary_json["complete"], false);
    assert!(summary_json.get("pass@1").is_none(), "no pass@k for an incomplete run");
    assert!(summary_json["counts"]["infrastructure"].as_u64().unwrap() >= 1, "{summary_json}");
    assert!(!results.exists(), "results stay partial");

    std::os::unix::fs::symlink("/usr/bin/python3", &interpreter).unwrap();
    let resumed = finish(&mut command());
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    assert!(resumed.stderr.contains("resuming:"), "{}", resumed.stderr);
    let results = read_jsonl(&results);
    assert_eq!(results.len(), 48);
    assert!(results.iter().all(|r| r["status"] != "infrastructure"), "infrastructure errors are run again");
}

/// Regression: a run whose canonical solution gave no expected outputs (it failed, or
/// the machine did) left that problem's samples `unjudgeable`, and the same command run
/// again said "nothing to run", though failed outputs are not cached: only `--restart`,
/// which runs every sample, tried them again. Now the same command runs exactly those
/// samples again, keeping every other line, and a run killed meanwhile leaves the results
/// whole. The canonical solution here fails while a file exists, as one that met a fault
/// of the machine would.
#[test]
fn the_same_command_runs_again_the_samples_left_unjudgeable_for_want_of_expected_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let fault = dir.path().join("fault");
    let flaky = format!(
        "    import os, time\n    if os.path.exists({:?}):\n        time.sleep(1.5)\n        raise OSError('a fault of the machine')\n    return n + 1\n",
        fault.display().to_string()
    );
    let problem = |task_id: &str, canonical: &str| {
        json!({"task_id": task_id, "prompt": "def bump(n: int):\n", "entry_point": "bump",
               "canonical_solution": canonical, "test": "", "contract": "", "atol": 0,
               "base_input": [[1], [41]], "plus_input": [[-7]]})
    };
    let problems = dir.path().join("problems.jsonl");
    write_jsonl(&problems, &[problem("Bump/0", &flaky), problem("Bump/1", "    return n + 1\n")]);
    let samples = dir.path().join("samples.jsonl");
    let right = "    return n + 1\n";
    let wrong = "    return n\n";
    write_jsonl(
        &samples,
        &[
            json!({"task_id": "Bump/0", "completion": right}),
            json!({"task_id": "Bump/1", "completion": right}),
            json!({"task_id": "Bump/0", "completion": wrong}),
            json!({"task_id": "Bump/1", "completion": wrong}),
        ],
    );
    let results = dir.path().join("results.jsonl");
    // Sandbox level none, so that the canonical solution sees the file.
    let command = || {
        let mut command = passk(["evaluate"]);
        command.arg(&samples).arg("--problems").arg(&problems).arg("--results").arg(&results);
        command.arg("--cache-dir").arg(dir.path().join("cache")).args(["--k", "1", "--sandbox", "none"]);
        command
    };
    std::fs::write(&fault, "").unwrap();
    let first = finish(&mut command());
    assert_eq!(first.code, Some(4), "{}", first.stderr);
    assert!(first.stderr.contains("the same command tries them again"), "{}", first.stderr);
    let statuses = |results: &[Value]| results.iter().map(|r| r["status"].clone()).collect::<Vec<_>>();
    let before = read_jsonl(&results);
    assert_eq!(statuses(&before), ["unjudgeable", "passed", "unjudgeable", "failed"], "{before:#?}");
    let kept = |results: &[Value]| vec![results[1].clone(), results[3].clone()];

    // Killed while it runs them again, the run leaves the results whole, and resumes.
    let mut killed = spawn(command());
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(partial(&results)).map_or(0, |journal| journal.len()) == 0 {
        assert!(Instant::now() < deadline, "the samples were never taken out of the results");
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&killed, libc::SIGKILL);
    killed.wait().unwrap();
    assert_eq!(read_jsonl(&results), before, "the results lost nothing");
    let resumed = finish(&mut command());
    assert_eq!(resumed.code, Some(4), "the canonical solution still fails: {}", resumed.stderr);
    assert!(resumed.stderr.contains("resuming: 2 of 4 samples already have results"), "{}", resumed.stderr);
    // Regression: the table's count was the last session's alone.
    assert!(resumed.stdout.contains("; 2 decided before the run was resumed\n"), "{}", resumed.stdout);
    let after = read_jsonl(&results);
    assert_eq!(statuses(&after), statuses(&before));
    assert_eq!(kept(&after), kept(&before), "the judged samples kept their lines");

    // The cause fixed, the same command runs those samples, and only those, again.
    std::fs::remove_file(&fault).unwrap();
    let fixed = finish(&mut command());
    assert_eq!(fixed.code, Some(0), "{}", fixed.stderr);
    let said: Vec<&str> = fixed.stderr.lines().filter(|line| line.contains("running again")).collect();
    assert_eq!(
        said,
        ["running again the 2 samples of 1 problem left unjudgeable for want of expected outputs (Bump/0); the \
          other 2 keep their results"],
        "{}",
        fixed.stderr
    );
    assert!(!fixed.stderr.contains("resuming"), "{}", fixed.stderr);
    assert!(fixed.stdout.contains(&format!("{:<14}{:>8.4}", "pass@1", 0.5)), "{}", fixed.stdout);
    let after = read_jsonl(&results);
    assert_eq!(statuses(&after), ["passed", "passed", "failed", "failed"], "{after:#?}");
    assert_eq!(kept(&after), kept(&before), "the judged samples kept their lines");
    let again = finish(&mut command());
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(again.stderr.contains("nothing to run"), "{}", again.stderr);
}

/// Samples that time out only because the machine is busy (eight workers per core, each
/// candidate a busy loop of about 0.4 s alone, so about 3 s when sharing a core with
/// seven others, against a 1 s limit) pass when run again alone.
#[test]
fn retry_timeouts_runs_them_again_alone_and_says_what_changed() {
    let _machine = machine_to_myself();
    // The loop's speed here, alone: the fastest of three measurements.
    let calibration = Command::new("python3")
        .args([
            "-c",
            "import time\nbest=9e9\nfor _ in range(3):\n    t=time.perf_counter()\n    x=0\n    for i in range(1000000): x+=i\n    best=min(best, time.perf_counter()-t)\nprint(best)",
        ])
        .output()
        .unwrap();
    let per_million: f64 = String::from_utf8_lossy(&calibration.stdout).trim().parse().unwrap();
    let iterations = (0.4 / per_million * 1e6) as u64;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let jobs = 8 * cores;
    let busy: Vec<Value> = (0..jobs)
        .map(|i| json!({"task_id": "basic/0", "completion": format!("{}x = 0\nfor i in range({iterations}):\n    x += i\n# {i}\n", canonical_body())}))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &busy);
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let jobs = jobs.to_string();
    let finished: Finished = finish(&mut evaluate_command(
        &samples,
        &results,
        &["--jobs", &jobs, "--timeout", "1", "--retry-timeouts", "--summary", summary.to_str().unwrap()],
    ));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let retried = &summary["run"]["retried_timeouts"];
    assert!(retried["samples"].as_u64().unwrap_or(0) >= 1, "the busy machine made some time out: {summary}");
    assert_eq!(retried["changed"], retried["samples"], "alone, every one passed: {summary}");
    let results = read_jsonl(&results);
    assert!(results.iter().all(|r| r["passed"] == true), "{results:?}");
    assert_eq!(results.iter().filter(|r| r["retried"] == true).count() as u64, retried["samples"].as_u64().unwrap());
}

/// Time-outs decided before a kill are not lost to `--retry-timeouts`: the resume runs
/// them again with its own, as an uninterrupted run would have.
#[test]
fn time_outs_decided_before_a_kill_are_retried_after_the_resume() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let mut records = vec![json!({"task_id": "basic/0", "completion": "    while True:\n        pass\n"})];
    records.extend(slow_honest_samples(1, 0.1));
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let extra = ["--jobs", "1", "--timeout", "2", "--retry-timeouts", "--summary", summary.to_str().unwrap()];
    let mut run = spawn(evaluate_command(&samples, &results, &extra));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !journal_verdicts(&results).get(&0).is_some_and(|result| result["status"] == "timeout") {
        assert!(Instant::now() < deadline, "the first sample never timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&run, libc::SIGKILL);
    run.wait().unwrap();
    assert!(journal_verdicts(&results).len() < records.len(), "killed before the end");

    let resumed = finish(&mut evaluate_command(&samples, &results, &extra));
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(summary["run"]["retried_timeouts"]["samples"], 1, "{summary}");
    let results = read_jsonl(&results);
    assert_eq!((&results[0]["status"], &results[0]["retried"]), (&json!("timeout"), &json!(true)), "{}", results[0]);
}

/// Regression: a sample whose retry ended in `infrastructure` (its worker killed twice
/// while it ran) vanished from pass@k, and the run exited 0 with pass@1 1.0.
#[test]
fn a_retry_that_ends_in_infrastructure_withholds_pass_at_k() {
    let dir = tempfile::tempdir().unwrap();
    let interpreter = dir.path().join("bin").join("python3");
    std::fs::create_dir(interpreter.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/usr/bin/python3", &interpreter).unwrap();
    let problems = std::fs::read_to_string(repo_root().join("problems/basic.jsonl")).unwrap();
    let mut records: Vec<Value> = problems
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|p| json!({"task_id": p["task_id"], "completion": p["canonical_solution"]}))
        .collect();
    records.push(json!({"task_id": "basic/0", "completion": "    while True:\n        pass\n"}));
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let summary_arg = summary.to_str().unwrap();
    let mut command =
        evaluate_command(&samples, &results, &["--timeout", "4", "--retry-timeouts", "--summary", summary_arg]);
    command.arg("--python").arg(&interpreter);
    let mut run = spawn(command);
    let stderr = run.stderr.take().unwrap();
    let (retrying_tx, retrying) = std::sync::mpsc::channel();
    let reading = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("timed out again") {
                let _ = retrying_tx.send(());
            }
            seen.push(line);
        }
        seen.join("\n")
    });
    // Nothing is killed until the retry begins; from then on, every worker it starts.
    let retry_began = retrying.recv_timeout(Duration::from_secs(120)).is_ok();
    let deadline = Instant::now() + Duration::from_secs(120);
    while retry_began && run.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the run did not end");
        kill_drivers(&interpreter);
        std::thread::sleep(Duration::from_millis(150));
    }
    let code = run.wait().unwrap().code();
    let stderr = reading.join().unwrap();
    assert!(stderr.contains("timed out again"), "the retry ran: {stderr}");
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("fault of this machine"), "{stderr}");
    let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert!(summary.get("pass@1").is_none(), "no pass@k: {summary}");
    assert_eq!(summary["complete"], false, "{summary}");
    assert!(!results.exists(), "the results stay partial, to resume");
    // The journal: each line a sample's index and its results line, the last one winning.
    let mut kept = std::collections::BTreeMap::new();
    for line in read_jsonl(&partial(&results)) {
        kept.insert(line["sample"].as_u64().unwrap(), line["result"].clone());
    }
    assert_eq!(kept.values().filter(|r| r["status"] == "passed").count(), 24, "nothing computed is lost");
    assert_eq!(kept[&24]["status"], "infrastructure", "{:?}", kept[&24]);
}

fn canonical_body() -> String {
    let problems = std::fs::read_to_string(repo_root().join("problems/basic.jsonl")).unwrap();
    let first: Value = serde_json::from_str(problems.lines().next().unwrap()).unwrap();
    first["canonical_solution"].as_str().unwrap().to_owned()
}

#[test]
fn the_summary_traces_the_number_to_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &slow_honest_samples(1, 0.0));
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let finished = finish(&mut evaluate_command(&samples, &results, &["--summary", summary.to_str().unwrap()]));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let sha256 = |path: &Path| {
        let output = Command::new("sha256sum").arg(path).output().unwrap();
        String::from_utf8_lossy(&output.stdout).split_whitespace().next().unwrap().to_owned()
    };
    let settings = &summary["settings"];
    assert_eq!(settings["samples_sha256"], sha256(&samples));
    assert_eq!(settings["problems_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(settings["passk_version"], env!("CARGO_PKG_VERSION"));
    assert!(settings["python_version"].as_str().unwrap().starts_with('3'));
    assert_eq!(settings["sandbox"], "full");
    assert_eq!(settings["timeout"], 3.0);
    let run = &summary["run"];
    assert!(run["cpus"].as_u64().unwrap() >= 1);
    for time in ["started_at", "finished_at"] {
        let stamp = run[time].as_str().unwrap();
        assert!(stamp.len() == 20 && stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T', "{time}: {stamp}");
    }
    assert!(run["started_at"].as_str() <= run["finished_at"].as_str());
}

fn problem(task_id: &str, canonical: Option<&str>) -> Value {
    let mut problem = json!({"task_id": task_id, "prompt": "def f():\n", "entry_point": "f",
                             "test": "def check(c):\n    assert c() == 1\n"});
    if let Some(canonical) = canonical {
        problem["canonical_solution"] = json!(canonical);
    }
    problem
}

#[test]
fn validate_reports_canonical_solutions_that_fail_or_run_close_to_the_limit() {
    let bundled = finish(&mut passk(["validate", "--problems", "basic"]));
    assert_eq!(bundled.code, Some(0), "{}", bundled.stderr);
    assert!(bundled.stdout.contains("24 pass, 0 fail, 0 close to the limit"), "{}", bundled.stdout);

    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    write_jsonl(
        &problems,
        &[
            problem("good/0", Some("    return 1\n")),
            problem("wrong/0", Some("    return 2\n")),
            problem("slow/0", Some("    import time\n    time.sleep(1.2)\n    return 1\n")),
            problem("bare/0", None),
        ],
    );
    let checked = finish(passk(["validate", "--timeout", "2", "--problems"]).arg(&problems));
    assert_eq!(checked.code, Some(4), "a failing canonical solution: {}", checked.stderr);
    let out = &checked.stdout;
    assert!(out.contains("3 canonical solutions") && out.contains("2 pass, 1 fail, 1 close to the limit"), "{out}");
    assert!(out.contains("fails     wrong/0  failed (line 2: assert c() == 1: candidate() returned 2)"), "{out}");
    assert!(out.contains("slow      slow/0"), "{out}");
    assert!(out.contains("1 problem has no canonical solution: bare/0"), "{out}");
    assert!(!out.contains("a time-out may only want more time"), "{out}");

    // Regression: a canonical solution slower than the limit (MBPP's task 123 takes
    // seconds) failed validate with no word that it may only want more time; and a set
    // whose canonical solutions are one placeholder program was not called one.
    write_jsonl(
        &problems,
        &[
            problem("slow/0", Some("    import time\n    time.sleep(3)\n    return 1\n")),
            problem("slow/1", Some("    import time\n    time.sleep(3)\n    return 1\n")),
        ],
    );
    let checked = finish(passk(["validate", "--timeout", "1", "--problems"]).arg(&problems));
    assert_eq!(checked.code, Some(4), "{}", checked.stderr);
    assert!(checked.stdout.contains("fails     slow/0  timeout"), "{}", checked.stdout);
    assert!(
        checked.stdout.contains("a time-out may only want more time: validate again with --timeout above 1 s"),
        "{}",
        checked.stdout
    );
    assert!(checked.stderr.contains("likely placeholders"), "{}", checked.stderr);
}

/// Regression: `validate` on a set with no canonical solution at all (SandboxFusion's
/// CodeContests sample) validated nothing and exited 0, where `canonical` refuses it.
#[test]
fn validate_refuses_a_set_without_canonical_solutions() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    write_jsonl(&problems, &[problem("bare/0", None), problem("bare/1", None)]);
    let checked = finish(passk(["validate", "--problems"]).arg(&problems));
    assert_eq!(checked.code, Some(4), "{}", checked.stderr);
    assert!(checked.stderr.contains("problems have no canonical solution"), "{}", checked.stderr);
    // Regression: it started every worker, then listed each task id before saying so
    // (159 lines on MultiPL-E's files): now the one line, before anything runs.
    assert_eq!(checked.stdout, "", "{}", checked.stdout);
    assert_eq!(checked.stderr.lines().count(), 1, "{}", checked.stderr);
}

/// Regression: `passk validate` held the time of every test of a problem together to
/// --timeout, so that a canonical solution of HumanEval+ or CodeContests whose tests each
/// ran well within their limits was listed as "4.27 s of the 3 s limit". A standard-input
/// test's limit is its own run's.
#[test]
fn validate_holds_each_standard_input_test_to_the_limit_not_all_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("apps.jsonl");
    let solution = "import time\ntime.sleep(0.3)\nprint(int(input()) * 2)\n";
    let tests = json!({"inputs": ["1\n", "2\n", "3\n", "4\n", "5\n"], "outputs": ["2\n", "4\n", "6\n", "8\n", "10\n"]});
    write_jsonl(
        &problems,
        &[json!({"problem_id": 1, "question": "Double it.", "solutions": json!([solution]).to_string(),
                 "input_output": tests.to_string(), "difficulty": "introductory", "url": "", "starter_code": ""})],
    );
    let checked = finish(passk(["validate", "--timeout", "1", "--problems"]).arg(&problems));
    assert_eq!(checked.code, Some(0), "{}", checked.stderr);
    // Regression too: one canonical solution was "1 canonical solutions".
    let expected = format!("1 canonical solution of {}: 1 pass, 0 fail, 0 close to the limit", problems.display());
    assert!(checked.stdout.contains(&expected), "{}", checked.stdout);
}

/// A problem whose canonical solution takes 0.8 s, and one that returns at once; and the
/// slow one's body.
fn slow_and_fast_problems(dir: &Path) -> (PathBuf, &'static str) {
    let problems = dir.join("problems.jsonl");
    let slow = "    import time\n    time.sleep(0.8)\n    return 1\n";
    write_jsonl(&problems, &[problem("slow/0", Some(slow)), problem("fast/0", Some("    return 1\n"))]);
    (problems, slow)
}

#[test]
fn calibrated_limits_spare_a_slow_problem() {
    let _machine = machine_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let (problems, slow) = slow_and_fast_problems(dir.path());
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(
        &samples,
        &[
            json!({"task_id": "slow/0", "completion": slow}),
            json!({"task_id": "fast/0", "completion": "    return 1\n"}),
        ],
    );
    let run = |extra: &[&str]| {
        let results = dir.path().join("results.jsonl");
        let summary = dir.path().join("summary.json");
        let finished = finish(
            passk(["evaluate"])
                .arg(&samples)
                .arg("--problems")
                .arg(&problems)
                .args(["--timeout", "0.5", "--k", "1", "--restart", "--results"])
                .arg(&results)
                .arg("--summary")
                .arg(&summary)
                .args(extra),
        );
        assert_eq!(finished.code, Some(0), "{}", finished.stderr);
        (read_jsonl(&results), serde_json::from_slice::<Value>(&std::fs::read(&summary).unwrap()).unwrap())
    };
    let (plain, _) = run(&[]);
    // 0.8 s does not fit in 0.5 s; the time-out is run again under the problem's floor.
    assert_eq!((&plain[0]["status"], &plain[0]["retried"]), (&json!("passed"), &json!(true)), "{}", plain[0]);
    let (calibrated, summary) = run(&["--calibrate"]);
    assert!(calibrated.iter().all(|r| r["passed"] == true && r.get("retried").is_none()), "{calibrated:?}");
    let limits = &summary["run"]["calibrated_timeouts"];
    let slow_limit = limits["slow/0"].as_f64().unwrap();
    assert!(slow_limit > 0.5 + 4.0 * 0.8 && slow_limit < 0.5 + 4.0 * 3.0, "{limits}");
    assert!(limits["fast/0"].as_f64().unwrap() < slow_limit);
}

/// Regression: MBPP's task 123, whose canonical solution takes 2.5 s of the 3 s limit
/// alone, timed out on a loaded machine for every sample, its own canonical solution too.
/// A time-out now stands only against a limit of at least 4 x the canonical solution's
/// time (EvalPlus's factor, --time-limit-factor), measured alone at the end of the run:
/// below that the sample runs again, alone, under it.
#[test]
fn a_time_out_stands_only_against_a_limit_of_four_times_the_canonical_solutions_time() {
    let _machine = machine_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let (problems, slow) = slow_and_fast_problems(dir.path());
    let samples = dir.path().join("samples.jsonl");
    let endless = "    while True:\n        pass\n";
    write_jsonl(
        &samples,
        &[
            json!({"task_id": "slow/0", "completion": slow}),
            json!({"task_id": "slow/0", "completion": "    import time\n    time.sleep(30)\n    return 1\n"}),
            json!({"task_id": "slow/0", "completion": endless}),
            json!({"task_id": "fast/0", "completion": endless}),
        ],
    );
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .arg("--problems")
            .arg(&problems)
            .args(["--timeout", "0.5", "--k", "1", "--results"])
            .arg(&results)
            .arg("--summary")
            .arg(&summary),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let said: Vec<&str> = finished.stderr.lines().filter(|line| line.starts_with("running the samples")).collect();
    assert_eq!(said.len(), 1, "{}", finished.stderr);
    assert!(
        said[0].starts_with(
            "running the samples that timed out again, one at a time: those of 1 problem under 4 x the canonical \
             solution's time (slow/0: "
        ),
        "{}",
        said[0]
    );
    let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let floors = summary["run"]["timeout_floors"].as_object().unwrap();
    assert_eq!(floors.keys().collect::<Vec<_>>(), ["slow/0"], "the fast problem's floor is below 0.5 s: {floors:?}");
    let floor = floors["slow/0"].as_f64().unwrap();
    assert!(floor > 4.0 * 0.8 && floor < 30.0, "{floor}");
    assert_eq!(summary["run"]["retried_timeouts"], json!({"samples": 3, "changed": 1}), "{summary}");
    let results = read_jsonl(&results);
    let outcome =
        |result: &Value| (result["status"].clone(), result["retried"].clone(), result["retried_limit"].clone());
    assert_eq!(outcome(&results[0]), (json!("passed"), json!(true), json!(floor)), "{}", results[0]);
    // Too slow, or endless, under the floor too.
    assert_eq!(outcome(&results[1]), (json!("timeout"), json!(true), json!(floor)), "{}", results[1]);
    assert_eq!(outcome(&results[2]), (json!("timeout"), json!(true), json!(floor)), "{}", results[2]);
    // A time-out of a problem whose canonical solution is quick stands as it was.
    assert_eq!(outcome(&results[3]), (json!("timeout"), Value::Null, Value::Null), "{}", results[3]);
    assert!(results[3]["duration"].as_f64().unwrap() < 2.0, "{}", results[3]);
}

/// Busy loops on every core, and more workers than cores: with calibrated limits, no
/// honest HumanEval solution times out.
#[test]
fn honest_code_does_not_time_out_on_a_loaded_machine() {
    let _machine = machine_to_myself();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut hogs: Vec<Child> =
        (0..2 * cores).map(|_| Command::new("python3").args(["-c", "while True: pass"]).spawn().unwrap()).collect();
    let problems = passk_tests::humaneval_dir().join("HumanEval.jsonl.gz");
    let records = passk_tests::humaneval_canonical_samples();
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let jobs = (2 * cores).to_string();
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .arg("--problems")
            .arg(&problems)
            .args(["--jobs", &jobs, "--calibrate", "--results"])
            .arg(&results),
    );
    for hog in &mut hogs {
        hog.kill().unwrap();
        hog.wait().unwrap();
    }
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let not_passed: Vec<Value> = read_jsonl(&results).into_iter().filter(|r| r["passed"] != true).collect();
    assert_eq!(not_passed, Vec::<Value>::new());
}

/// Where a passk run started by this process makes its memory groups: below this
/// process's own memory group (v1), or its own group of a unified-only host (v2).
fn run_group(pid: u32) -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let (mount, path) = match own.lines().find_map(|line| line.split_once(":memory:")) {
        Some((_, path)) => ("/sys/fs/cgroup/memory", path),
        None => ("/sys/fs/cgroup", own.lines().find_map(|line| line.strip_prefix("0::"))?),
    };
    Some(Path::new(mount).join(path.trim_start_matches('/')).join(format!("passk-{pid}-0")))
}

/// Every process still in a group or the groups below it.
fn processes_in(group: &Path) -> usize {
    let mut count = std::fs::read_to_string(group.join("cgroup.procs")).map_or(0, |procs| procs.lines().count());
    for entry in std::fs::read_dir(group).into_iter().flatten().flatten() {
        if entry.file_type().unwrap().is_dir() {
            count += processes_in(&entry.path());
        }
    }
    count
}

/// The reaper a passk run started, found as its child.
fn reaper_of(run: &Child) -> Option<libc::pid_t> {
    std::fs::read_dir("/proc").unwrap().flatten().find_map(|entry| {
        let pid: libc::pid_t = entry.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
        let parent: u32 = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        (parent == run.id() && String::from_utf8_lossy(&cmdline).contains("__reaper")).then_some(pid)
    })
}

/// Guards against control groups piling up on the host: a run killed outright together
/// with its reaper (by the kernel's out-of-memory killer, say) cannot remove its own,
/// and the next run removes them. The killed run's working directory is left too, in a
/// TMPDIR of the test's own, which the test removes (in /tmp, every run of the suite left
/// one there).
#[test]
fn the_control_groups_of_a_killed_run_are_removed_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &slow_honest_samples(4, 0.05));
    let results = dir.path().join("results.jsonl");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // The slots' own users must reach the working directories below it.
    for open in [dir.path(), tmp.as_path()] {
        std::fs::set_permissions(open, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let mut killed = evaluate_command(&samples, &results, &[]);
    killed.env("TMPDIR", &tmp);
    let mut run = spawn(killed);
    wait_for_lines(&results, 1);
    let group = run_group(run.id()).filter(|group| group.exists());
    let reaper = reaper_of(&run).expect("a run with workers has a reaper");
    // SAFETY: kill has no memory-safety preconditions; the reaper waits for passk, alive.
    unsafe { libc::kill(reaper, libc::SIGKILL) };
    signal(&run, libc::SIGKILL);
    run.wait().unwrap();
    // SAFETY: geteuid has no preconditions.
    let Some(group) = group else {
        assert_ne!(unsafe { libc::geteuid() }, 0, "root gets control groups on the hosts this suite runs on");
        return;
    };
    assert!(group.exists(), "a run killed outright leaves its groups: {}", group.display());
    // Its drivers see the harness gone and leave.
    let deadline = Instant::now() + Duration::from_secs(30);
    while processes_in(&group) > 0 {
        assert!(Instant::now() < deadline, "the killed run's drivers did not leave");
        std::thread::sleep(Duration::from_millis(20));
    }
    let finished = finish(&mut evaluate_command(&samples, &results, &[]));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(!group.exists(), "the next run removed {}", group.display());
}
