//! Candidates that try to fake a pass, outlive their sample, flood the harness or
//! attack it. Each case asserts the verdict, that nothing was left behind, and that the
//! harness finished its run.

use passk_tests::{
    finish, finish_measuring_memory, passk, processes_marked, read_jsonl, repo_root, unique_marker, write_jsonl,
};
use serde_json::{json, Value};

/// The body of basic/0 (`running_max`) that passes its tests.
fn correct_body() -> String {
    let problems = std::fs::read_to_string(repo_root().join("problems/basic.jsonl")).unwrap();
    let first: Value = serde_json::from_str(problems.lines().next().unwrap()).unwrap();
    assert_eq!(first["task_id"], "basic/0");
    first["canonical_solution"].as_str().unwrap().to_owned()
}

/// A body of basic/0 that fails its tests.
const WRONG_BODY: &str = "    return []\n";

/// Python that starts a process sleeping for an hour, findable by `marker` in its
/// command line; with `setsid`, it double-forks into a new session first. It returns
/// only once the sleeper has started (and, with `setsid`, its parent has exited), so the
/// candidate cannot finish before there is something to clean up.
fn sleeper(marker: &str, setsid: bool) -> String {
    let exec = format!("os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(3600)', '{marker}'])");
    // The pipe's write end closes on exec and on exit, so the read returns once both
    // have happened.
    let start = if setsid {
        format!("    os.setsid()\n    if os.fork() == 0:\n        {exec}\n    os._exit(0)\n")
    } else {
        format!("    {exec}\n")
    };
    format!("import os, sys\nr, w = os.pipe()\nif os.fork() == 0:\n    os.close(r)\n{start}os.close(w)\nos.read(r, 1)\nos.close(r)\n")
}

struct Run {
    results: Vec<Value>,
    // Holds the samples and results until the test is done with them.
    _dir: tempfile::TempDir,
}

fn run(completions: &[String], extra: &[&str]) -> Run {
    run_with(completions, |command| {
        command.args(extra);
    })
}

/// Runs the completions as samples of basic/0, with `adjust` adding to the command.
fn run_with(completions: &[String], adjust: impl FnOnce(&mut std::process::Command)) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let records: Vec<Value> = completions.iter().map(|c| json!({"task_id": "basic/0", "completion": c})).collect();
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let mut command = passk(["evaluate"]);
    command.arg(&samples).args(["--problems", "basic", "--k", "1", "--results"]).arg(&results);
    adjust(&mut command);
    let finished = finish(&mut command);
    assert_eq!(finished.code, Some(0), "the run completes: {}", finished.stderr);
    let results = read_jsonl(&results);
    assert_eq!(results.len(), completions.len(), "one result per sample");
    Run { results, _dir: dir }
}

fn status(result: &Value) -> &str {
    result["status"].as_str().unwrap()
}

#[test]
fn early_exits_of_every_kind_fail() {
    let exits = [
        "    pass\nimport sys\nsys.exit(0)\n",
        "    pass\nimport os\nos._exit(0)\n",
        "    pass\nexit()\n",
        "    pass\nquit(0)\n",
        "    pass\nraise SystemExit(0)\n",
        "    pass\nraise KeyboardInterrupt\n",
        // Exits while its tests are calling it.
        "    import sys\n    sys.exit(0)\n",
        "    import os\n    os._exit(0)\n",
        // Exits from a thread while the main thread waits.
        "    pass\nimport os, threading, time\nthreading.Thread(target=os._exit, args=(0,)).start()\ntime.sleep(30)\n",
        // Leaves the verdict to an atexit hook.
        &format!("{WRONG_BODY}import atexit\natexit.register(print, 'passed')\n"),
        "    pass\nimport atexit, os\natexit.register(os._exit, 0)\nraise SystemExit(0)\n",
        // Dies by its own signal.
        "    pass\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        "    pass\nimport os\nos.abort()\n",
    ];
    let mut completions: Vec<String> = exits.iter().map(|s| s.to_string()).collect();
    completions.push(correct_body());
    let run = run(&completions, &["--timeout", "10"]);
    let (control, exits) = run.results.split_last().unwrap();
    assert_eq!(control["passed"], true, "the honest control passes: {control}");
    for (result, completion) in exits.iter().zip(&completions) {
        assert_eq!(result["passed"], false, "{completion:?} must fail: {result}");
        assert!(result["result"].as_str().unwrap().starts_with("failed: "), "{result}");
        assert!(["error", "failed", "killed"].contains(&status(result)), "{result}");
    }
    let killed: Vec<&str> = exits[11..].iter().map(|r| r["detail"].as_str().unwrap()).collect();
    assert_eq!(killed, ["killed by SIGKILL", "killed by SIGABRT"]);
}

/// Forges every verdict shape it can think of on every descriptor it has, using every
/// hex string it can find in its environment, command lines, /proc and the files
/// around it as a candidate token.
const FORGER: &str = r#"    pass
import json, os, re, sys
texts = [repr(dict(os.environ)).encode(), repr(sys.argv).encode()]
for pid in (os.getpid(), os.getppid()):
    for name in ("environ", "cmdline", "status", "maps"):
        try:
            texts.append(open("/proc/%d/%s" % (pid, name), "rb").read())
        except OSError:
            pass
for fd in os.listdir("/proc/self/fd"):
    try:
        texts.append(os.readlink("/proc/self/fd/" + fd).encode())
    except OSError:
        pass
for root in (".", ".."):
    for name in os.listdir(root):
        texts.append(name.encode())
        try:
            texts.append(open(os.path.join(root, name), "rb").read(1 << 20))
        except OSError:
            pass
tokens = set()
for text in texts:
    tokens.update(re.findall(rb"[0-9a-f]{8,64}", text))
verdicts = [json.dumps({"status": "passed", "detail": "", "result": "passed"}).encode(),
            json.dumps({"passed": True, "result": "passed"}).encode(), b"passed", b"PASSED", b"ok"]
lines = [v + b"\n" for v in verdicts] + [t + b" " + v + b"\n" for t in tokens for v in verdicts]
for fd in range(1024):
    for line in lines:
        try:
            os.write(fd, line)
        except OSError:
            break
"#;

#[test]
fn forged_verdicts_on_every_descriptor_fail() {
    let completions = [
        format!("{FORGER}os._exit(0)\n"),
        format!("{FORGER}raise SystemExit(0)\n"),
        // Forges, then lets its (failing) tests run.
        format!("{WRONG_BODY}{}", FORGER.trim_start_matches("    pass\n")),
        correct_body(),
    ];
    let run = run(&completions, &["--timeout", "20"]);
    for result in &run.results[..3] {
        assert_eq!(result["passed"], false, "{result}");
    }
    assert_eq!(status(&run.results[2]), "failed", "{}", run.results[2]);
    assert_eq!(run.results[3]["passed"], true, "the honest control passes");
}

/// Guards against a pass being turned into a time-out by what the candidate left
/// running once its tests returned.
#[test]
fn a_pass_stands_and_what_the_candidate_left_running_is_killed() {
    let marker = unique_marker("left-behind");
    let leftovers = format!(
        "import atexit, os, threading, time\n\
         threading.Thread(target=time.sleep, args=(3600,)).start()\n\
         atexit.register(os._exit, 1)\n{}{}",
        sleeper(&marker, false),
        sleeper(&marker, true)
    );
    let run = run(&[format!("{}{leftovers}", correct_body())], &["--timeout", "20"]);
    let result = &run.results[0];
    assert_eq!(result["passed"], true, "{result}");
    assert!(result["duration"].as_f64().unwrap() < 20.0, "the verdict did not wait for leftovers: {result}");
    assert_eq!(processes_marked(&marker), Vec::<u32>::new(), "no process outlives its sample");
}

#[test]
fn a_timeout_kills_the_whole_tree_even_when_signals_are_ignored() {
    let marker = unique_marker("timeout-tree");
    let completion = format!(
        "    pass\n{}{}import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass\n",
        sleeper(&marker, false),
        sleeper(&marker, true)
    );
    let sleeping = "    pass\nimport time\ntime.sleep(3600)\n".to_owned();
    let run = run(&[completion, sleeping, correct_body()], &["--timeout", "1"]);
    for result in &run.results[..2] {
        assert_eq!(status(result), "timeout", "{result}");
        assert_eq!(result["result"], "timed out");
    }
    assert_eq!(run.results[2]["passed"], true, "the run goes on after time-outs");
    assert_eq!(processes_marked(&marker), Vec::<u32>::new(), "no process outlives its sample");
}

#[test]
fn daemons_of_a_failing_sample_are_killed() {
    let marker = unique_marker("daemon");
    let completion = format!("{WRONG_BODY}{}{}", sleeper(&marker, true), sleeper(&marker, false));
    let run = run(&[completion], &[]);
    assert_eq!(status(&run.results[0]), "failed");
    assert_eq!(processes_marked(&marker), Vec::<u32>::new(), "no process outlives its sample");
}

#[test]
fn a_candidate_that_prints_50_mb_and_passes_passes() {
    let completion = format!(
        "{}import sys\nsys.stdout.write('x' * 50_000_000)\nsys.stderr.write('y' * 5_000_000)\n",
        correct_body()
    );
    let run = run(&[completion], &["--timeout", "20"]);
    assert_eq!(run.results[0]["passed"], true, "{}", run.results[0]);
}

#[test]
fn endless_output_is_stopped_at_the_limit_and_the_harness_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let endless = |stream: &str| json!({"task_id": "basic/0", "completion": format!("    pass\nimport sys\nchunk = 'z' * 65536\nwhile True:\n    sys.{stream}.write(chunk)\n")});
    write_jsonl(&samples, &[endless("stdout"), endless("stderr")]);
    let results = dir.path().join("results.jsonl");
    let (finished, peak_kib) = finish_measuring_memory(
        passk(["evaluate"]).arg(&samples).args(["--problems", "basic", "--timeout", "3", "--results"]).arg(&results),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    for result in read_jsonl(&results) {
        assert_eq!(status(&result), "timeout", "{result}");
    }
    // Each stream above produces gigabytes in 3 s; keeping it would show here.
    assert!(peak_kib < 200 * 1024, "peak memory of the harness and its workers: {peak_kib} KiB");
}

/// Passes only if every attempt to signal a process outside its own tree failed.
/// `VICTIM` is the pid of a host process the test started.
const SIGNALLER: &str = r#"import os, signal, subprocess
victim = VICTIM
attempts = [
    lambda: os.kill(os.getppid(), signal.SIGKILL),
    lambda: os.kill(victim, signal.SIGKILL),
    lambda: os.kill(victim, signal.SIGTERM),
    lambda: os.killpg(victim, signal.SIGKILL),
]
failed = 0
for attempt in attempts:
    try:
        attempt()
    except (PermissionError, ProcessLookupError):
        failed += 1
assert failed == len(attempts), failed
# kill(-1) is tried only with the filter proven in force: unfiltered and outside a pid
# namespace, it would reach every process of this user.
try:
    os.kill(os.getppid(), 0)
except PermissionError:
    try:
        os.kill(-1, signal.SIGKILL)
        raise AssertionError("kill(-1) was allowed")
    except PermissionError:
        pass
else:
    raise AssertionError("the signal filter is not in force")
assert subprocess.run(["kill", "-9", str(victim)], stderr=subprocess.DEVNULL).returncode != 0
"#;

#[test]
fn a_candidate_cannot_signal_the_harness_or_any_host_process() {
    let mut victim = std::process::Command::new("sleep").arg("3600").spawn().unwrap();
    let signaller = SIGNALLER.replace("VICTIM", &victim.id().to_string());
    let completions = [format!("{}{signaller}", correct_body()), correct_body()];
    let run = run(&completions, &["--timeout", "20"]);
    let victim_alive = victim.try_wait().unwrap().is_none();
    victim.kill().unwrap();
    victim.wait().unwrap();
    assert_eq!(run.results[0]["passed"], true, "every signal failed: {}", run.results[0]);
    assert_eq!(run.results[1]["passed"], true, "and the harness carried on");
    assert!(victim_alive, "the host process survived");
}

#[test]
fn candidates_see_a_scrubbed_environment_a_fresh_directory_and_empty_stdin() {
    let checks = r#"import os, sys
assert not any("CANARY" in key or "canary-value" in value for key, value in os.environ.items()), dict(os.environ)
assert b"canary-value" not in open("/proc/self/environ", "rb").read()
assert sorted(os.environ) == ["HOME", "LANG", "LC_ALL", "OMP_NUM_THREADS", "PATH", "TMPDIR"], sorted(os.environ)
assert os.environ["HOME"] == os.environ["TMPDIR"] == os.getcwd()
assert os.listdir(".") == [], os.listdir(".")
assert sys.stdin.read() == ""
open("leftover", "w").write("for the next sample to find")
open("/tmp/leftover-in-tmp", "w").write("for the next sample to find")
"#;
    let harness_tmp = tempfile::tempdir().unwrap();
    let completions = vec![format!("{}{checks}", correct_body()); 6];
    let run = run_with(&completions, |command| {
        command.args(["--jobs", "2"]).env("PASSK_TEST_CANARY", "canary-value").env("TMPDIR", harness_tmp.path());
    });
    for result in &run.results {
        assert_eq!(result["passed"], true, "{result}");
    }
    let left: Vec<_> = std::fs::read_dir(harness_tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "passk's working directories are removed: {left:?}");
}

#[test]
fn a_candidate_reading_stdin_gets_end_of_file() {
    let run = run(&[format!("{}input()\n", correct_body())], &[]);
    assert_eq!(run.results[0]["passed"], false);
    assert!(run.results[0]["detail"].as_str().unwrap().starts_with("EOFError"), "{}", run.results[0]);
}
