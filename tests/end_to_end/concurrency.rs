//! Honest concurrent candidates: multiprocessing (Pool, Process, Queue, Lock),
//! concurrent.futures (thread and process pools) and subprocesses of the interpreter
//! itself pass every time, at level full, wherever the interpreter is installed.

use std::path::Path;
use std::process::Command;

use passk_tests::{evaluate_samples, passk, venv_with, write_jsonl, Finished, NOBODY};
use serde_json::{json, Value};

/// A function whose body uses every kind of concurrency an honest solution reaches for,
/// each checked, then returns `x + 1`. Only builtins cross between processes: functions
/// a HumanEval program defines live in no module a worker could import them from.
const CONCURRENT_BODY: &str = r#"    import concurrent.futures, multiprocessing, subprocess, sys
    with multiprocessing.Pool(2) as pool:
        assert pool.map(abs, [-1, -2, 3]) == [1, 2, 3]
    queue = multiprocessing.Queue()
    worker = multiprocessing.Process(target=queue.put, args=(x,))
    worker.start()
    got = queue.get(timeout=20)
    worker.join()
    assert worker.exitcode == 0 and got == x, (worker.exitcode, got)
    with multiprocessing.Lock():
        pass
    with concurrent.futures.ThreadPoolExecutor(2) as threads:
        assert list(threads.map(abs, [-4, 5])) == [4, 5]
    with concurrent.futures.ProcessPoolExecutor(2) as processes:
        assert list(processes.map(abs, [-6, 7])) == [6, 7]
    printed = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True, check=True)
    assert printed.stdout == "42\n", printed
    return x + 1
"#;

/// A problem set of one function, `f(x) -> x + 1`, in `dir`.
fn plus_one_problem(dir: &Path) -> std::path::PathBuf {
    let problems = dir.join("problems.jsonl");
    write_jsonl(
        &problems,
        &[json!({"task_id": "concurrent/0", "prompt": "def f(x):\n", "entry_point": "f",
                 "test": "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(41) == 42\n"})],
    );
    problems
}

/// Evaluates `samples` of `concurrent/0` by `evaluate` (a `passk evaluate` command),
/// with `extra` arguments; passk must finish its run.
fn evaluate(dir: &Path, samples: &[Value], mut evaluate: Command, extra: &[&str]) -> (Finished, Vec<Value>) {
    evaluate.args(["--k", "1", "--timeout", "60", "--no-dedup"]).args(extra);
    let (finished, results) = evaluate_samples(evaluate, dir, &plus_one_problem(dir), samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    (finished, results)
}

fn assert_all_passed(results: &[Value], what: &str) {
    let failed: Vec<&Value> = results.iter().filter(|result| result["status"] != "passed").collect();
    assert!(failed.is_empty(), "{what}: {} of {} did not pass, the first: {}", failed.len(), results.len(), failed[0]);
}

/// Guards the kill rule: a multiprocessing.Pool used as a context manager failed 3 to 11
/// times in 40 runs with PermissionError, its terminate() killing its own workers by pid
/// where the filter allowed a candidate only its own pid and group. Every kind of honest
/// concurrency must pass 100 runs out of 100, in both verdict modes.
#[test]
fn honest_concurrency_passes_every_time() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let samples: Vec<Value> =
        (0..100).map(|_| json!({"task_id": "concurrent/0", "completion": CONCURRENT_BODY})).collect();
    for verdicts in ["judge", "in-process"] {
        let (finished, results) =
            evaluate(dir.path(), &samples, passk(["evaluate"]), &["--jobs", "2", "--verdicts", verdicts]);
        assert!(finished.stdout.contains("sandbox       full\n"), "{}", finished.stdout);
        assert_eq!(results.len(), 100);
        assert_all_passed(&results, verdicts);
    }
}

/// Guards two bugs of an interpreter installed below /tmp (a CI clone at /tmp/x): the
/// clean-up chmodded the parents of its mount in the sandbox's /tmp to 0700, so that a
/// candidate running as the sandbox's second user could not reach the interpreter (nor
/// its packages) any more; and /dev/shm lay on the read-only root, so that
/// multiprocessing.Lock() failed with EROFS. Each sample gets its own /dev/shm.
#[test]
fn an_interpreter_below_tmp_stays_reachable_and_every_sample_has_a_writable_dev_shm() {
    let dir = tempfile::Builder::new().prefix("passk-venv-").tempdir_in("/tmp").unwrap();
    let python = venv_with(dir.path(), &[]);
    let leaves_shm = "    import os\n    open('/dev/shm/left-behind', 'w').close()\n    return x + 1\n";
    let finds_shm_empty =
        "    import os\n    assert not os.listdir('/dev/shm'), os.listdir('/dev/shm')\n    return x + 1\n";
    let samples = [
        json!({"task_id": "concurrent/0", "completion": CONCURRENT_BODY}),
        json!({"task_id": "concurrent/0", "completion": leaves_shm}),
        json!({"task_id": "concurrent/0", "completion": finds_shm_empty}),
        json!({"task_id": "concurrent/0", "completion": CONCURRENT_BODY}),
    ];
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for unprivileged in [false, true] {
        if unprivileged && !root {
            continue;
        }
        let work = tempfile::tempdir().unwrap();
        std::fs::set_permissions(work.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        let mut command = passk(["evaluate"]);
        if unprivileged {
            std::os::unix::process::CommandExt::uid(&mut command, NOBODY);
            std::os::unix::process::CommandExt::gid(&mut command, NOBODY);
        }
        // One worker, so that the samples run in order, each after the one before.
        let python = python.to_str().unwrap();
        let (finished, results) = evaluate(work.path(), &samples, command, &["--jobs", "1", "--python", python]);
        assert!(finished.stdout.contains("sandbox       full\n"), "{}", finished.stdout);
        assert!(finished.stdout.contains("MiB /dev/shm new for each sample"), "{}", finished.stdout);
        assert_all_passed(&results, if unprivileged { "unprivileged" } else { "root" });
    }
}

/// A standard-input program that relies on being run as `python3 program.py`: its own
/// module is `__main__`, with `__file__` and `sys.argv[0]` the program's path; its
/// classes pickle; its own functions run in ProcessPoolExecutor's and multiprocessing's
/// workers, forked and spawned (a spawned worker runs the file again, as `__mp_main__`);
/// a thread it leaves running is joined and its exit handlers run when it ends.
const RUN_AS_MAIN: &str = r#"import atexit, concurrent.futures, multiprocessing, os, pickle, sys, threading, time


class Point:
    def __init__(self, x):
        self.x = x


def square(n):
    return n * n


def late():
    time.sleep(0.2)
    print("thread done", flush=True)


def main():
    n = int(sys.stdin.readline())
    assert sys.modules["__main__"].square is square
    assert os.path.isfile(__file__), __file__
    assert os.path.samefile(sys.argv[0], __file__), (sys.argv, __file__)
    assert sys.path[0] == os.path.dirname(os.path.abspath(__file__)), sys.path
    print(pickle.loads(pickle.dumps(Point(n))).x)
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        print(list(pool.map(square, range(n))))
    with multiprocessing.Pool(2) as pool:
        print(pool.map(square, range(n)))
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print(pool.map(square, range(n)))
    atexit.register(print, "at exit")
    threading.Thread(target=late).start()


if __name__ == "__main__":
    main()
"#;

/// Guards against standard-input programs run as a string in the driver's `__main__`:
/// `__file__` was undefined and pickle found the driver's module where it looked for the
/// program's classes and functions, so honest programs that use process pools failed.
/// What the program prints under passk must be what `python3 program.py` prints, every
/// time.
#[test]
fn a_standard_input_program_runs_as_python_runs_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("program.py");
    std::fs::write(&program, RUN_AS_MAIN).unwrap();
    let input = "4\n";
    let mut plain = Command::new("python3")
        .arg(&program)
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut plain.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let printed = plain.wait_with_output().unwrap();
    assert!(printed.status.success(), "python3 program.py");
    let expected = String::from_utf8(printed.stdout).unwrap();
    assert_eq!(expected, "4\n[0, 1, 4, 9]\n[0, 1, 4, 9]\n[0, 1, 4, 9]\nthread done\nat exit\n");
    let problems = dir.path().join("problems.jsonl");
    write_jsonl(
        &problems,
        &[
            json!({"name": "main/0", "public_tests": {"input": [input], "output": [expected]}, "private_tests": {"input": [], "output": []}}),
        ],
    );
    let samples: Vec<Value> = (0..20).map(|_| json!({"task_id": "main/0", "solution": RUN_AS_MAIN})).collect();
    let evaluate = passk(["evaluate", "--k", "1", "--jobs", "2", "--timeout", "60", "--no-dedup"]);
    let (finished, results) = evaluate_samples(evaluate, dir.path(), &problems, &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(results.len(), samples.len());
    assert_all_passed(&results, "standard input");
}
