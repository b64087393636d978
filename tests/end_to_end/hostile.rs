//! Candidates that try to fake a pass, outlive their sample, flood the harness or
//! attack it. Each case asserts the verdict, that nothing was left behind, and that the
//! harness finished its run.

use passk_tests::{
    as_unprivileged_user, finish, finish_measuring_memory, humaneval_dir, humaneval_problems, machine_to_myself, passk,
    processes_marked, read_jsonl, repo_root, sleeper, unique_marker, write_jsonl, Finished, EVERY_ATTEMPT_FAILS,
};
use serde_json::{json, Value};

/// The body of basic/0 (`running_max`) that passes its tests.
pub(crate) fn correct_body() -> String {
    let problems = std::fs::read_to_string(repo_root().join("problems/basic.jsonl")).unwrap();
    let first: Value = serde_json::from_str(problems.lines().next().unwrap()).unwrap();
    assert_eq!(first["task_id"], "basic/0");
    first["canonical_solution"].as_str().unwrap().to_owned()
}

/// A body of basic/0 that fails its tests.
const WRONG_BODY: &str = "    return []\n";

struct Run {
    finished: Finished,
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
    // Readable and writable by whichever user passk runs as.
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let samples = dir.path().join("samples.jsonl");
    let records: Vec<Value> = completions.iter().map(|c| json!({"task_id": "basic/0", "completion": c})).collect();
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let mut command = passk(["evaluate"]);
    command.arg(&samples).args(["--problems", "basic", "--partial", "--k", "1", "--results"]).arg(&results);
    adjust(&mut command);
    let finished = finish(&mut command);
    assert_eq!(finished.code, Some(0), "the run completes: {}", finished.stderr);
    let results = read_jsonl(&results);
    assert_eq!(results.len(), completions.len(), "one result per sample");
    Run { finished, results, _dir: dir }
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
    // At level full a candidate is the init of a pid namespace of its own, which the
    // kernel spares the signals it sends itself: the SIGKILL does nothing, and abort()
    // ends in the fault it falls back on.
    let abort = exits[12]["detail"].as_str().unwrap();
    assert!(abort == "killed by SIGABRT" || abort == "killed by SIGSEGV", "{abort}");
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
    for mode in ["in-process", "judge"] {
        let run = run(&completions, &["--timeout", "20", "--verdicts", mode]);
        for result in &run.results[..3] {
            assert_eq!(result["passed"], false, "{mode}: {result}");
        }
        let forged_then_tested = &run.results[2];
        if mode == "in-process" {
            assert_eq!(status(forged_then_tested), "failed", "the tests ran and failed: {forged_then_tested}");
        } else {
            // The forgery reached the judge's channel as garbage, which fails the sample.
            assert!(forged_then_tested["detail"].as_str().unwrap().starts_with("sent the judge an unreadable answer"));
        }
        assert_eq!(run.results[3]["passed"], true, "{mode}: the honest control passes");
    }
}

/// Guards against a candidate writing lines of its own onto passk's standard error: at
/// `-vv` each verdict's detail was logged as the event's message, unescaped, so a
/// `SystemExit` whose message held newlines printed a forged `results:` line (or
/// terminal escapes) among passk's own. Whatever the candidate writes, on any
/// descriptor and in either mode, reaches passk's output escaped, if at all.
#[test]
fn a_candidate_cannot_write_lines_onto_passks_output() {
    const FORGED: &str = r"\nresults: forged.jsonl (0.1 s)\r\x1b[2Kpass@1 1.000\n";
    let completions = [
        format!("    raise SystemExit(\"{FORGED}\")\n"),
        format!("    raise ValueError(\"{FORGED}\")\n"),
        format!(
            "    import os, sys\n    os.write(1, b\"{FORGED}\")\n    os.write(2, b\"{FORGED}\")\n    \
             print(\"{FORGED}\", file=sys.__stderr__, flush=True)\n    return []\n"
        ),
        correct_body(),
    ];
    for mode in ["in-process", "judge"] {
        let run = run(&completions, &["-vv", "--timeout", "20", "--verdicts", mode]);
        let stderr = &run.finished.stderr;
        assert!(stderr.contains("forged.jsonl"), "{mode}: the details are logged at -vv: {stderr}");
        for line in stderr.lines().chain(run.finished.stdout.lines()) {
            assert!(!line.starts_with("results: forged"), "{mode}: a forged line: {line:?}\n{stderr}");
            assert!(!line.starts_with("pass@1 1.000"), "{mode}: a forged line: {line:?}\n{stderr}");
        }
        assert!(!stderr.contains('\x1b') && !stderr.contains('\r'), "{mode}: raw control characters: {stderr}");
        for result in &run.results[..3] {
            assert_eq!(result["passed"], false, "{mode}: {result}");
        }
        assert_eq!(run.results[3]["passed"], true, "{mode}: the honest control passes");
    }
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
    let _machine = machine_to_myself();
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
    let _machine = machine_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let endless = |stream: &str| json!({"task_id": "basic/0", "completion": format!("    pass\nimport sys\nchunk = 'z' * 65536\nwhile True:\n    sys.{stream}.write(chunk)\n")});
    write_jsonl(&samples, &[endless("stdout"), endless("stderr")]);
    let results = dir.path().join("results.jsonl");
    let (finished, peak_kib) = finish_measuring_memory(
        passk(["evaluate"])
            .arg(&samples)
            .args(["--problems", "basic", "--partial", "--timeout", "3", "--results"])
            .arg(&results),
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
const SIGNALLER: &str = r#"import fcntl, os, signal, subprocess
victim = VICTIM
# A descriptor whose I/O signals would go to the victim, as the signal of our choosing.
pipe, _ = os.pipe()
# Outside a pid namespace of its own, a candidate's parent is the driver; at level full
# the candidate is the init of one of its own, and its parent cannot be named.
parent = os.getppid()
attempts = [lambda: os.kill(parent, signal.SIGKILL)] if parent else []
attempts += [
    lambda: os.kill(victim, signal.SIGKILL),
    lambda: os.kill(victim, signal.SIGTERM),
    lambda: os.killpg(victim, signal.SIGKILL),
    lambda: fcntl.fcntl(pipe, fcntl.F_SETOWN, victim),
    lambda: fcntl.fcntl(pipe, 10, signal.SIGKILL),  # F_SETSIG
]
failed = 0
for attempt in attempts:
    try:
        attempt()
    except (PermissionError, ProcessLookupError):
        failed += 1
assert failed == len(attempts), failed
# kill(-1) is tried only with the filter proven in force: unfiltered and outside a pid
# namespace, it would reach every process of this user. The init of a namespace of its
# own reaches with it only what is below it.
try:
    if parent:
        os.kill(parent, 0)
    else:
        raise PermissionError
except PermissionError:
    try:
        os.kill(-1, signal.SIGKILL)
        # As the init of its namespace, alone there, there is no one else to reach.
        assert os.getpid() == 1 and len([p for p in os.listdir("/proc") if p.isdigit()]) == 1, "kill(-1) was allowed"
    except (PermissionError, ProcessLookupError):
        pass
else:
    raise AssertionError("the system-call filter is not in force")
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

/// Passes only if every attempt on the planted files, the samples and the results
/// failed. `DIR` is a host directory the test planted files in.
const TRESPASSER: &str = r#"import os
planted = DIR
targets = [os.path.join(planted, name) for name in
           ("canary.txt", "secret.txt", "problems.jsonl", "samples.jsonl", "results.jsonl", "results.jsonl.partial",
            "results.jsonl.run.json")]
attempts = []
for path in targets:
    attempts += [lambda p=path: open(p, "rb").read(), lambda p=path: open(p, "a").write("tampered"),
                 lambda p=path: os.unlink(p), lambda p=path: os.rename(p, p + ".moved"), lambda p=path: os.truncate(p, 0)]
attempts += [lambda: os.listdir(planted), lambda: open(os.path.join(planted, "new.txt"), "w").write("x"),
             lambda: os.rmdir(planted), lambda: open("/etc/passk-was-here", "w"), lambda: open("/usr/passk-was-here", "w")]
EVERY_ATTEMPT_FAILS
# Nothing of the harness's environment or command line is anywhere to be seen.
for pid in filter(str.isdigit, os.listdir("/proc")):
    for name, secret in (("environ", b"canary-value"), ("cmdline", b"samples.jsonl")):
        try:
            assert secret not in open("/proc/%s/%s" % (pid, name), "rb").read(), (pid, name)
        except OSError:
            pass
"#;

/// The trespasser aimed at the files planted in `planted`.
fn trespasser(planted: &std::path::Path) -> String {
    TRESPASSER
        .replace("DIR", &format!("{:?}", planted.display().to_string()))
        .replace("EVERY_ATTEMPT_FAILS", EVERY_ATTEMPT_FAILS)
}

#[test]
fn a_candidate_cannot_touch_files_outside_its_sandbox() {
    use std::os::unix::fs::PermissionsExt;
    let planted = tempfile::tempdir().unwrap();
    let canary = planted.path().join("canary.txt");
    let secret = planted.path().join("secret.txt");
    std::fs::write(&canary, "canary").unwrap();
    std::fs::write(&secret, "secret-value").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The tests, in a problems file of their own, are a target too.
    let problems = planted.path().join("problems.jsonl");
    std::fs::copy(repo_root().join("problems/basic.jsonl"), &problems).unwrap();
    let samples = planted.path().join("samples.jsonl");
    let results = planted.path().join("results.jsonl");
    let trespasser = trespasser(planted.path());
    let records = vec![json!({"task_id": "basic/0", "completion": format!("{}{trespasser}", correct_body())}); 2];
    write_jsonl(&samples, &records);
    let before = std::fs::read(&samples).unwrap();
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .arg("--problems")
            .arg(&problems)
            .arg("--partial")
            .arg("--results")
            .arg(&results)
            .env("PASSK_TEST_CANARY", "canary-value"),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    for result in read_jsonl(&results) {
        assert_eq!(result["passed"], true, "every attempt failed: {}", result["detail"]);
    }
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "canary");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "secret-value");
    assert_eq!(std::fs::read(&samples).unwrap(), before, "the samples are untouched");
    let mut names: Vec<String> =
        std::fs::read_dir(planted.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let expected = ["canary.txt", "problems.jsonl", "results.jsonl", "results.jsonl.run.json", "samples.jsonl"];
    assert_eq!(names, [&expected[..], &["secret.txt"]].concat());
}

/// Passes only if every attempt to reach `port` on the host's loopback failed.
fn connector(port: u16) -> String {
    format!(
        r#"import socket
failures = 0
for host in ("127.0.0.1", "localhost", "::1"):
    try:
        socket.create_connection((host, {port}), timeout=2).close()
    except OSError:
        failures += 1
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", {port}))
except OSError:
    pass
assert failures == 3, failures
"#
    )
}

/// Listeners on the host's loopback, TCP and UDP on one port, and a check that nothing
/// reached them. (A candidate's datagram to 127.0.0.1 is sent: to its own slot's loopback.)
struct Listener(std::net::TcpListener, std::net::UdpSocket);

impl Listener {
    fn open() -> Listener {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let datagrams = std::net::UdpSocket::bind(listener.local_addr().unwrap()).unwrap();
        datagrams.set_nonblocking(true).unwrap();
        Listener(listener, datagrams)
    }

    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }

    fn assert_untouched(&self) {
        match self.0.accept() {
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("the listener saw a connection: {other:?}"),
        }
        match self.1.recv(&mut [0; 16]) {
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("a datagram reached the host: {other:?}"),
        }
    }
}

#[test]
fn a_candidate_cannot_reach_the_network_not_even_the_hosts_loopback() {
    let listener = Listener::open();
    let run = run(&[format!("{}{}", correct_body(), connector(listener.port()))], &["--timeout", "20"]);
    assert_eq!(run.results[0]["passed"], true, "every connection failed: {}", run.results[0]["detail"]);
    listener.assert_untouched();
}

#[test]
fn memory_bombs_end_as_out_of_memory() {
    let _machine = machine_to_myself();
    let bombs = [
        "    pass\nhuge = bytearray(8 << 30)\n".to_owned(),
        "    pass\nheld = []\nwhile True:\n    held.append(bytearray(16 << 20))\n".to_owned(),
        correct_body(),
    ];
    let run = run(&bombs, &["--memory-limit", "512", "--timeout", "20"]);
    for result in &run.results[..2] {
        assert_eq!(status(result), "out-of-memory", "{result}");
    }
    assert_eq!(run.results[2]["passed"], true, "the run goes on");
}

#[test]
fn fork_bombs_are_contained() {
    let _machine = machine_to_myself();
    let marker = unique_marker("fork-bomb");
    let naive = "    pass\nimport os\nwhile True:\n    os.fork()\n".to_owned();
    // Keeps forking through every refusal; each child becomes a spinning process that
    // carries the marker, so that any survivor would be found.
    let stubborn = format!(
        "    pass\nimport os, sys\nwhile True:\n    try:\n        if os.fork() == 0:\n            os.execv(sys.executable, [sys.executable, '-c', 'while True: pass', '{marker}'])\n    except OSError:\n        pass\n"
    );
    let mut completions = vec![naive, stubborn];
    completions.extend(std::iter::repeat_n(correct_body(), 6));
    let run = run(&completions, &["--jobs", "2", "--max-processes", "16", "--timeout", "3"]);
    assert_eq!(status(&run.results[0]), "limit", "{}", run.results[0]);
    assert!(["limit", "timeout"].contains(&status(&run.results[1])), "{}", run.results[1]);
    for result in &run.results[2..] {
        assert_eq!(result["passed"], true, "honest samples beside a fork bomb pass: {result}");
    }
    assert_eq!(processes_marked(&marker), Vec::<u32>::new(), "no process outlives its sample");
}

/// The attacks above, at once, by candidates of passk run as an unprivileged user.
#[test]
fn the_sandbox_holds_as_an_unprivileged_user() {
    let _machine = machine_to_myself();
    let marker = unique_marker("unprivileged");
    let listener = Listener::open();
    let mut victim = std::process::Command::new("sleep").arg("3600").spawn().unwrap();
    let planted = tempfile::tempdir().unwrap();
    std::fs::write(planted.path().join("canary.txt"), "canary").unwrap();
    let trespasser = trespasser(planted.path());
    let signaller = SIGNALLER.replace("VICTIM", &victim.id().to_string());
    let completions = [
        format!("{}{trespasser}", correct_body()),
        format!("{}{signaller}", correct_body()),
        format!("{FORGER}os._exit(0)\n"),
        format!("{}{}", correct_body(), sleeper(&marker, true)),
        "    pass\nimport os\nwhile True:\n    os.fork()\n".to_owned(),
        correct_body(),
        format!("{}{}", correct_body(), connector(listener.port())),
        "    pass\nheld = []\nwhile True:\n    held.append(bytearray(16 << 20))\n".to_owned(),
    ];
    let run = run_with(&completions, |command| {
        command.args(["--timeout", "10", "--max-processes", "16", "--memory-limit", "512"]);
        as_unprivileged_user(command);
    });
    let victim_alive = victim.try_wait().unwrap().is_none();
    victim.kill().unwrap();
    victim.wait().unwrap();
    assert!(run.finished.stdout.contains("sandbox       full"), "{}", run.finished.stdout);
    let passed: Vec<&Value> = run.results.iter().map(|r| &r["passed"]).collect();
    assert_eq!(passed, [true, true, false, true, false, true, true, false], "{:#?}", run.results);
    // That a sample ran into a limit is told from what the kernel counted in its group;
    // without one, the fork bomb's BlockingIOError and the memory bomb's MemoryError are
    // only what the candidates raised, which they could have raised by hand.
    let groups =
        run.finished.stdout.lines().any(|line| line.starts_with("  cgroups") && line.contains("a group per sample"));
    let (forks, memory) = if groups { ("limit", "out-of-memory") } else { ("failed", "failed") };
    assert_eq!(status(&run.results[4]), forks, "{}", run.results[4]);
    assert_eq!(status(&run.results[7]), memory, "{}", run.results[7]);
    listener.assert_untouched();
    assert!(victim_alive, "the host process survived");
    assert_eq!(std::fs::read_to_string(planted.path().join("canary.txt")).unwrap(), "canary");
    assert_eq!(processes_marked(&marker), Vec::<u32>::new(), "no process outlives its sample");
}

#[test]
fn each_limit_ends_with_a_clear_status() {
    let _machine = machine_to_myself();
    let completions = [
        "    pass\nwhile True:\n    pass\n".to_owned(),
        // Ignores the warning signal, so is killed at the hard limit a second later.
        "    pass\nimport signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n".to_owned(),
        "    pass\nwith open('big', 'wb') as f:\n    f.write(b'x' * (3 << 20))\n".to_owned(),
        "    pass\nheld = [open('f%d' % i, 'w') for i in range(100)]\n".to_owned(),
        // Honest code sees no core dumps and no way to regain privilege.
        format!(
            "{}import resource\nassert resource.getrlimit(resource.RLIMIT_CORE) == (0, 0)\nassert 'NoNewPrivs:\\t1' in open('/proc/self/status').read()\n",
            correct_body()
        ),
    ];
    let run =
        run(&completions, &["--cpu-limit", "1", "--timeout", "30", "--file-size-limit", "2", "--open-files", "32"]);
    let details: Vec<(&str, &str)> = run.results.iter().map(|r| (status(r), r["detail"].as_str().unwrap())).collect();
    for (i, limit) in ["CPU time limit", "CPU time limit"].iter().enumerate() {
        assert_eq!(details[i].0, "limit", "{details:?}");
        assert!(details[i].1.starts_with(limit), "{details:?}");
    }
    // The init of a pid namespace (a candidate at level full) is spared SIGXFSZ, so it
    // writes past the file size limit only to be told EFBIG, which it could have raised
    // by hand: a failure. Elsewhere the kernel's signal kills it, which the driver saw.
    let file_size = details[2];
    assert!(
        file_size.0 == "limit" && file_size.1.starts_with("file size limit")
            || file_size.0 == "failed" && file_size.1.contains("File too large"),
        "{details:?}"
    );
    // No signal tells of the open-files limit, and the candidate could raise EMFILE by
    // hand: a failure, whose detail says what it raised.
    assert_eq!(details[3].0, "failed", "{details:?}");
    assert!(details[3].1.contains("Too many open files"), "{details:?}");
    assert!(run.results[1]["duration"].as_f64().unwrap() < 30.0, "ended by the limit, not the timeout");
    assert_eq!(run.results[4]["passed"], true, "{}", run.results[4]);
}

/// Python that passes only if the process holds no capability of any kind.
const NO_CAPABILITIES: &str = r#"import os
sets = {line.split(":")[0]: int(line.split()[1], 16) for line in open("/proc/self/status") if line[:3] == "Cap"}
held = {name: hex(value) for name, value in sets.items() if name != "CapBnd" and value}
assert not held, held
"#;

/// Guards the candidate's capability sets, in both modes and for both ways of becoming
/// a candidate: root changing to the candidate's user (which leaves the inheritable set
/// to the driver to clear), and an unprivileged user's namespace (an explicit capset).
#[test]
fn candidates_hold_no_capabilities() {
    let completions = vec![format!("{}{NO_CAPABILITIES}", correct_body())];
    for verdicts in ["judge", "in-process"] {
        for unprivileged in [false, true] {
            let run = run_with(&completions, |command| {
                command.args(["--verdicts", verdicts]);
                if unprivileged {
                    as_unprivileged_user(command);
                }
            });
            assert_eq!(run.results[0]["passed"], true, "{verdicts}, unprivileged {unprivileged}: {}", run.results[0]);
        }
    }
}

/// Guards the fork that skips the interpreter's at-fork hooks (forking.py): every sample
/// still draws its own random numbers, and threads and forks of its own work. The draw
/// comes back in the failure's detail, the one thing of a candidate's a result keeps.
#[test]
fn every_sample_draws_its_own_random_numbers_and_may_use_threads() {
    let checks = r#"import os, random, threading
seen = []
worker = threading.Thread(target=lambda: seen.append(threading.current_thread() is not threading.main_thread()))
worker.start()
worker.join()
assert seen == [True] and threading.current_thread() is threading.main_thread(), seen
child = os.fork()
if child == 0:
    os._exit(7)
assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 7
raise ValueError(f"draw {random.getrandbits(64)}")
"#;
    let completions = vec![format!("{}{checks}", correct_body()); 6];
    for verdicts in ["judge", "in-process"] {
        let run = run(&completions, &["--verdicts", verdicts, "--jobs", "2", "--no-dedup"]);
        let mut draws = std::collections::BTreeSet::new();
        for result in &run.results {
            let detail = result["detail"].as_str().unwrap();
            let draw = detail.split_once("draw ").unwrap_or_else(|| panic!("{verdicts}: the checks hold: {result}")).1;
            draws.insert(draw.to_owned());
        }
        assert_eq!(draws.len(), completions.len(), "{verdicts}: each sample draws its own numbers: {draws:?}");
    }
}

/// Leaves SysV shared memory, a SysV message queue and a POSIX message queue behind, and
/// checks that no kernel keyring can be reached.
const IPC_WRITER: &str = r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000
assert libc.shmget(0x5053, 1 << 20, IPC_CREAT | 0o666) >= 0, os.strerror(ctypes.get_errno())
queue = libc.msgget(0x5054, IPC_CREAT | 0o666)
assert queue >= 0, os.strerror(ctypes.get_errno())
class Message(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("text", ctypes.c_char * 16)]
assert libc.msgsnd(queue, ctypes.byref(Message(1, b"left behind")), 16, 0) == 0
assert libc.mq_open(b"/passk-probe", os.O_CREAT | os.O_RDWR, 0o666, None) >= 0, os.strerror(ctypes.get_errno())
KEY_SPEC_USER_KEYRING = -4
added = libc.syscall(248, b"user", b"passk-probe", b"secret", 6, KEY_SPEC_USER_KEYRING)
assert added == -1 and ctypes.get_errno() == 1, "a key was added"
"#;

/// Passes only if nothing `IPC_WRITER` left is there.
const IPC_READER: &str = r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
found = []
if libc.shmget(0x5053, 0, 0) >= 0:
    found.append("shared memory")
if libc.msgget(0x5054, 0) >= 0:
    found.append("message queue")
if libc.mq_open(b"/passk-probe", os.O_RDONLY) >= 0:
    found.append("POSIX message queue")
assert not found, found
"#;

/// Guards the IPC namespace each sample gets, and the keyring calls the filter denies:
/// what one sample leaves in SysV or POSIX IPC no later sample of the same worker finds.
#[test]
fn what_a_sample_leaves_in_ipc_no_later_sample_finds() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let mut completions = vec![format!("{}{IPC_WRITER}", correct_body())];
    completions.extend(std::iter::repeat_n(format!("{}{IPC_READER}", correct_body()), 2));
    for verdicts in ["judge", "in-process"] {
        let run = run(&completions, &["--verdicts", verdicts, "--jobs", "1", "--no-dedup"]);
        for result in &run.results {
            assert_eq!(result["passed"], true, "{verdicts}: {result}");
        }
        assert!(run.finished.stdout.contains("ipc           a namespace per sample"), "{}", run.finished.stdout);
    }
}

/// Makes, through raw system calls, each call the filter of `sandbox/syscalls.toml`
/// denies for reaching beyond the sample or into the kernel's riskier corners, and then
/// execs the interpreter to make some of them again: each must fail with EPERM, before
/// and after exec. `{numbers}` is this machine's table of call numbers.
const RISKY_CALLS: &str = r#"import ctypes, os, subprocess, sys
NUMBERS = {numbers}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x20000, 0x40000000, 17
calls = {
    "unshare": (CLONE_NEWUSER | CLONE_NEWNS,), "setns": (0, 0), "mount": (b"none", b"/tmp", b"tmpfs", 0, None),
    "umount2": (b"/tmp", 0), "pivot_root": (b"/tmp", b"/tmp"), "chroot": (b"/tmp",), "keyctl": (0, -4),
    "add_key": (b"user", b"k", b"v", 1, -4), "bpf": (0, None, 0), "perf_event_open": (None, 0, -1, -1, 0),
    "userfaultfd": (0,), "io_uring_setup": (8, None), "ptrace": (16, 1, 0, 0), "process_vm_readv": (1, None, 0, None, 0, 0),
    "kexec_load": (0, 0, None, 0), "init_module": (None, 0, b""), "open_by_handle_at": (3, None, 0),
    "fsopen": (b"tmpfs", 0), "pidfd_getfd": (3, 0, 0), "sync": (), "clone": (CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0),
    "mincore": (None, 4096, None), "fadvise64": (0, 0, 0, 4), "readahead": (0, 0, 4096),
}
allowed = []
for name, args in calls.items():
    result = libc.syscall(NUMBERS[name], *args)
    if result == 0 and name == "clone":
        os._exit(0)
    if result != -1 or ctypes.get_errno() != 1:
        allowed.append(f"{name}: {result} ({os.strerror(ctypes.get_errno())})")
assert not allowed, allowed
after_exec = f"import ctypes; libc = ctypes.CDLL(None, use_errno=True); assert libc.syscall({NUMBERS['unshare']}, {CLONE_NEWUSER}) == -1 and ctypes.get_errno() == 1"
subprocess.run([sys.executable, "-c", after_exec], check=True)
"#;

/// This machine's numbers for the calls `RISKY_CALLS` makes.
fn risky_call_numbers() -> Option<&'static str> {
    if cfg!(target_arch = "x86_64") {
        Some(
            r#"{"unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "keyctl": 250,
    "add_key": 248, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425, "ptrace": 101,
    "process_vm_readv": 310, "kexec_load": 246, "init_module": 175, "open_by_handle_at": 304, "fsopen": 430,
    "pidfd_getfd": 438, "sync": 162, "clone": 56, "mincore": 27, "fadvise64": 221, "readahead": 187}"#,
        )
    } else if cfg!(target_arch = "aarch64") {
        Some(
            r#"{"unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "keyctl": 219,
    "add_key": 217, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425, "ptrace": 117,
    "process_vm_readv": 270, "kexec_load": 104, "init_module": 105, "open_by_handle_at": 265, "fsopen": 430,
    "pidfd_getfd": 438, "sync": 81, "clone": 220, "mincore": 232, "fadvise64": 223, "readahead": 213}"#,
        )
    } else {
        None
    }
}

/// Guards the system-call filter's policy file: what Docker's default profile denies
/// (namespaces, mounts, keyrings, bpf, perf_event_open, userfaultfd, ...) and what passk
/// denies beyond it (io_uring, another process's descriptors, sync, and the page cache's
/// residency and eviction, through which one sample could set bits for a later one to
/// read: a red team's find) fails with EPERM, in
/// the candidate and in what it execs, at every level that has the filter. The table
/// says the filter is in force.
#[test]
fn the_kernels_riskier_calls_fail_with_eperm_even_after_exec() {
    let Some(numbers) = risky_call_numbers() else { return };
    let completions = vec![format!("{}{}", correct_body(), RISKY_CALLS.replace("{numbers}", numbers))];
    for unprivileged in [false, true] {
        let run = run_with(&completions, |command| {
            command.args(["--timeout", "20"]);
            if unprivileged {
                as_unprivileged_user(command);
            }
        });
        assert_eq!(run.results[0]["passed"], true, "unprivileged {unprivileged}: {}", run.results[0]);
        let syscalls = run.finished.stdout.lines().find(|line| line.starts_with("  syscalls")).unwrap_or_default();
        assert!(syscalls.contains("filtered: what sandbox/syscalls.toml"), "{}", run.finished.stdout);
    }
}

/// Serves one line on 127.0.0.1 to a client in the same candidate.
const LOOPBACK_SERVER: &str = r#"import socket, threading
server = socket.create_server(("127.0.0.1", 0))
def answer():
    connection, _ = server.accept()
    connection.sendall(b"served\n")
    connection.close()
threading.Thread(target=answer).start()
with socket.create_connection(server.getsockname(), timeout=5) as client:
    assert client.makefile().readline() == "served\n"
"#;

/// Guards the loopback the set-up brings up in each slot's network namespace: honest
/// code that serves on 127.0.0.1 works, while the host's loopback stays out of reach
/// (`a_candidate_cannot_reach_the_network_not_even_the_hosts_loopback`).
#[test]
fn honest_code_may_serve_on_the_loopback() {
    let run = run(&[format!("{}{LOOPBACK_SERVER}", correct_body())], &["--timeout", "20"]);
    assert_eq!(run.results[0]["passed"], true, "{}", run.results[0]);
}

/// Whether passk's table says each sample has control groups of its own; as root they
/// must be, since the hosts this suite runs on mount the memory and pids controllers.
fn sample_groups_in_force(run: &Run) -> bool {
    let line = run.finished.stdout.lines().find(|line| line.starts_with("  cgroups")).unwrap_or_default();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let in_force = line.contains("a group per sample");
    assert!(in_force || !root, "root gets a control group per sample: {line:?}");
    in_force
}

/// Memory a sample holds outside any one process's address space: a memfd, six
/// children, detached SysV shared memory, files in /tmp, a tmpfs of its own.
const MEMORY_OUTSIDE_THE_PROCESS: [&str; 5] = [
    "import os\nfd = os.memfd_create('held')\nchunk = b'x' * (1 << 20)\nfor _ in range(2560):\n    os.write(fd, chunk)\n",
    "import os, time\nfor _ in range(6):\n    if os.fork() == 0:\n        held = bytearray(400 << 20)\n        for i in range(0, len(held), 4096):\n            held[i] = 1\n        time.sleep(60)\ntime.sleep(60)\n",
    "import ctypes\nlibc = ctypes.CDLL(None)\nlibc.shmat.restype = ctypes.c_void_p\nfor _ in range(24):\n    segment = libc.shmget(0, 100 << 20, 0o1600)\n    address = libc.shmat(segment, None, 0)\n    ctypes.memset(address, 1, 100 << 20)\n    libc.shmdt(ctypes.c_void_p(address))\n",
    "import tempfile\nfor n in range(12):\n    with open(f'{tempfile.gettempdir()}/held-{n}', 'wb') as f:\n        for _ in range(60):\n            f.write(b'x' * (1 << 20))\n",
    r"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.getuid(), os.getgid()
assert libc.unshare(0x10000000 | 0x00020000) == 0, os.strerror(ctypes.get_errno())
open('/proc/self/setgroups', 'w').write('deny')
open('/proc/self/uid_map', 'w').write(f'0 {uid} 1')
open('/proc/self/gid_map', 'w').write(f'0 {gid} 1')
os.makedirs('/tmp/own', exist_ok=True)
assert libc.mount(b'none', b'/tmp/own', b'tmpfs', 0, b'size=4g') == 0, os.strerror(ctypes.get_errno())
for n in range(40):
    with open(f'/tmp/own/held-{n}', 'wb') as f:
        for _ in range(60):
            f.write(b'x' * (1 << 20))
",
];

/// Guards the sample's control group: memory held through a memfd, children, SysV
/// shared memory or files counts against one limit for the whole sample, ends as
/// `out-of-memory`, and leaves nothing charged for the next sample, which passes. A tmpfs
/// mounted in a namespace of its own is refused earlier, by the system-call filter.
#[test]
fn memory_held_outside_the_candidates_process_counts_against_the_sample() {
    let _machine = machine_to_myself();
    let mut completions: Vec<String> =
        MEMORY_OUTSIDE_THE_PROCESS.iter().map(|hog| format!("{}{hog}", correct_body())).collect();
    // 240 MiB of files, under the limit, and the honest sample after every hog.
    completions.push(format!("{}{}", correct_body(), MEMORY_OUTSIDE_THE_PROCESS[3].replace("range(12)", "range(4)")));
    completions.push(correct_body());
    let limits = ["--memory-limit", "512", "--file-size-limit", "4096", "--tmp-size", "1024", "--timeout", "10"];
    let run = run(&completions, &[&limits[..], &["--jobs", "1"]].concat());
    if !sample_groups_in_force(&run) {
        return;
    }
    let hows = ["memfd", "children", "SysV shared memory", "files in /tmp"];
    for (result, how) in run.results.iter().zip(hows) {
        assert_eq!(status(result), "out-of-memory", "{how}: {result}");
        let peak = result["memory_peak_bytes"].as_u64().unwrap();
        assert!(peak <= 512 << 20, "{how}: the limit held: {result}");
    }
    let own_tmpfs = &run.results[4];
    assert!(own_tmpfs["detail"].as_str().unwrap().contains("Operation not permitted"), "{own_tmpfs}");
    for result in &run.results[5..] {
        assert_eq!(result["passed"], true, "nothing is left charged to later samples: {result}");
    }
    let files = run.results[5]["memory_peak_bytes"].as_u64().unwrap();
    assert!((240 << 20..300 << 20).contains(&files), "the files count: {}", run.results[5]);
    let honest = run.results[6]["memory_peak_bytes"].as_u64().unwrap();
    assert!(honest < 32 << 20, "the honest sample's peak is its own: {}", run.results[6]);
}

/// Holds 200 MiB and spins for 0.3 s of CPU, half of it in a child.
const MEASURED: &str = "import os, time\nheld = bytearray(200 << 20)\nfor i in range(0, len(held), 4096):\n    held[i] = 1\ndef spin(seconds):\n    end = time.process_time() + seconds\n    while time.process_time() < end:\n        pass\nchild = os.fork()\nspin(0.15)\nif child == 0:\n    os._exit(0)\nos.waitpid(child, 0)\n";

#[test]
fn each_results_line_carries_the_samples_peak_memory_and_cpu_time() {
    let _machine = machine_to_myself();
    let completions = [format!("{}{MEASURED}", correct_body()), correct_body()];
    for verdicts in ["judge", "in-process"] {
        let run = run(&completions, &["--verdicts", verdicts, "--jobs", "1", "--no-dedup"]);
        if !sample_groups_in_force(&run) {
            return;
        }
        let (measured, honest) = (&run.results[0], &run.results[1]);
        assert_eq!(measured["passed"], true, "{verdicts}: {measured}");
        let peak = measured["memory_peak_bytes"].as_u64().unwrap();
        assert!((200 << 20..320 << 20).contains(&peak), "{verdicts}: peak memory: {measured}");
        let cpu = measured["cpu_seconds"].as_f64().unwrap();
        assert!((0.3..2.0).contains(&cpu), "{verdicts}: the child's CPU time counts too: {measured}");
        assert!(honest["memory_peak_bytes"].as_u64().unwrap() < 32 << 20, "{verdicts}: {honest}");
        assert!(honest["cpu_seconds"].as_f64().unwrap() < 0.2, "{verdicts}: {honest}");
    }
}

/// Python that nests directories 1,500 deep below a new directory `top`, each name 100
/// characters long, so that the deepest path is far longer than PATH_MAX; `fd` is left
/// open on the deepest.
fn nested_below(top: &str) -> String {
    format!(
        "import os\nos.mkdir('{top}')\nfd = os.open('{top}', os.O_RDONLY)\nfor _ in range(1500):\n    \
         os.mkdir('d' * 100, dir_fd=fd)\n    inner = os.open('d' * 100, os.O_RDONLY, dir_fd=fd)\n    \
         os.close(fd)\n    fd = inner\n"
    )
}

/// Leaves /tmp as hard to clean up as it can: directories nested too deep to name, a
/// file filling most of /tmp, a marker at a fixed path, and a file in /dev/shm.
const TMP_LITTERER: &str = r#"with open('/tmp/fill', 'wb') as f:
    for _ in range(60):
        f.write(b'x' * (3 << 20))
open('/tmp/left-behind', 'w').close()
open('/dev/shm/left-behind', 'w').close()
"#;

/// Passes only in a clean /tmp with room, and with a /dev/shm that multiprocessing's
/// locks and queues can use.
const TMP_USER: &str = r#"import os, tempfile, multiprocessing
assert not os.path.exists('/tmp/left-behind') and not os.path.exists('/tmp/deep'), os.listdir('/tmp')
assert not os.path.exists('/dev/shm/left-behind')
with tempfile.TemporaryFile() as f:
    f.write(b'x' * (150 << 20))
queue, lock = multiprocessing.Queue(), multiprocessing.Lock()
with lock:
    queue.put(1)
assert queue.get(timeout=10) == 1
"#;

/// Guards each sample's own /tmp and /dev/shm (level full): what a sample leaves there,
/// however hard to walk, neither stalls the next sample nor fills its /tmp, and
/// multiprocessing works.
#[test]
fn what_a_sample_leaves_in_tmp_neither_stalls_nor_fills_the_next() {
    let completions = [
        format!("{}{}{TMP_LITTERER}", correct_body(), nested_below("/tmp/deep")),
        format!("{}{TMP_USER}", correct_body()),
    ];
    let run = run(
        &[completions[0].clone(), completions[1].clone(), completions[1].clone()],
        &["--jobs", "1", "--no-dedup", "--file-size-limit", "512", "--timeout", "20"],
    );
    assert!(run.finished.stdout.contains("/tmp and /dev/shm, new for each sample"), "{}", run.finished.stdout);
    for result in &run.results {
        assert_eq!(result["passed"], true, "{result}");
    }
    for result in &run.results[1..] {
        assert!(result["duration"].as_f64().unwrap() < 5.0, "not held up by the cleanup: {result}");
    }
}

/// Forks eight processes that each start a session of their own and spin, and spins
/// itself: a hog that escapes any share given per session.
const SETSID_HOG: &str =
    "import os\nfor _ in range(8):\n    if os.fork() == 0:\n        os.setsid()\n        while True:\n            pass\nwhile True:\n    pass\n";

/// Guards the equal CPU weight of every worker: beside two hogs that spread over new
/// sessions, on a machine busy with other work, honest samples in the other worker keep
/// their share and none times out. (Given a share per session instead, such hogs took
/// most of the machine, and honest samples beside them ran past this limit.)
#[test]
fn hogs_that_start_sessions_take_no_more_than_their_workers_share() {
    let _machine = machine_to_myself();
    let problem = humaneval_problems().into_iter().find(|p| p["task_id"] == "HumanEval/75").unwrap();
    let canonical = problem["canonical_solution"].as_str().unwrap();
    let hog = json!({"task_id": "HumanEval/75", "completion": format!("{canonical}{SETSID_HOG}")});
    let honest = |n: usize| json!({"task_id": "HumanEval/75", "completion": format!("{canonical}# {n}\n")});
    let mut samples = vec![hog.clone()];
    samples.extend((0..20).map(honest));
    samples.push(hog);
    samples.extend((20..40).map(honest));
    let dir = tempfile::tempdir().unwrap();
    write_jsonl(&dir.path().join("samples.jsonl"), &samples);
    let mut load: Vec<std::process::Child> = (0..2)
        .map(|_| std::process::Command::new("python3").args(["-c", "while True: pass"]).spawn().unwrap())
        .collect();
    let mut command = passk(["evaluate"]);
    command
        .arg(dir.path().join("samples.jsonl"))
        .arg("--problems")
        .arg(humaneval_dir().join("HumanEval.jsonl.gz"))
        .args(["--partial", "--jobs", "2", "--no-dedup", "--k", "1", "--timeout", "1.5", "--results"])
        .arg(dir.path().join("results.jsonl"));
    let finished = finish(&mut command);
    for process in &mut load {
        process.kill().unwrap();
        process.wait().unwrap();
    }
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    if !finished.stdout.contains("an equal CPU share per worker") {
        // SAFETY: geteuid has no preconditions.
        assert_ne!(unsafe { libc::geteuid() }, 0, "root gets a CPU weight per worker: {}", finished.stdout);
        return;
    }
    let results = read_jsonl(&dir.path().join("results.jsonl"));
    let (hogs, honest): (Vec<&Value>, Vec<&Value>) =
        results.iter().partition(|r| r["completion"].as_str().unwrap().contains("setsid"));
    assert!(hogs.iter().all(|r| status(r) == "timeout"), "{hogs:?}");
    let flipped: Vec<&&Value> = honest.iter().filter(|r| r["passed"] != true).collect();
    assert!(flipped.is_empty(), "honest samples beside the hogs: {flipped:#?}");
}

/// After `nested_below("deep")` in the sample's own working directory, which is all of
/// its scratch space below level full: a file at the bottom, and the top made unreadable.
const SCRATCH_LITTERER: &str = r#"os.close(os.open('file', os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
os.chmod('deep', 0)
"#;

/// Guards the emptying of the scratch directory where no mount of its own can be made
/// (below level full): directories nested 1,500 deep, a path far beyond PATH_MAX, one
/// made unreadable, are removed at once, and the next sample starts clean.
#[test]
fn a_scratch_directory_too_deep_to_name_is_emptied_below_level_full() {
    let completions = [
        format!("{}{}{SCRATCH_LITTERER}", correct_body(), nested_below("deep")),
        format!("{}assert not __import__('os').listdir()\n", correct_body()),
    ];
    let run = run_with(&[completions[0].clone(), completions[1].clone(), completions[1].clone()], |command| {
        command.args(["--jobs", "1", "--no-dedup", "--timeout", "20"]);
        let passk_command =
            std::mem::replace(command, std::process::Command::new(repo_root().join("tests/support/refuse-namespaces")));
        command.arg(passk_command.get_program()).args(passk_command.get_args());
        as_unprivileged_user(command);
    });
    assert!(run.finished.stdout.contains("sandbox       minimal"), "{}", run.finished.stdout);
    for result in &run.results {
        assert_eq!(result["passed"], true, "{result}");
        assert!(result["duration"].as_f64().unwrap() < 5.0, "not held up by the cleanup: {result}");
    }
}
