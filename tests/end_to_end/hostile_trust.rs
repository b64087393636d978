//! Candidates that go after the verdict itself, as a model trained on passk's verdicts
//! would: finding the tests in the memory they were forked from, answering what the
//! judge cannot show or hold, and claiming a limit they never reached. Each case asserts
//! the verdict the candidate deserves, and that the run finished with every verdict.

use std::path::Path;

use passk_tests::{evaluate_set, format_fixture, hostile_python, humaneval_dir, humaneval_problems, repo_root};
use serde_json::{json, Value};

/// Python that looks for a problem's test code wherever a candidate forked from the
/// driver might find it (`hostile_python/test_finder.py`), with the frames above its own
/// or in its memory alone.
fn test_finder(frames: bool) -> String {
    hostile_python("test_finder.py").replace("FRAMES", if frames { "True" } else { "False" })
}

fn passes(results: &[Value]) -> usize {
    results.iter().filter(|result| result["passed"] == true).count()
}

/// Runs `samples` on `problems` on one worker, so that every sample is forked from the
/// driver that ran the ones before it.
fn evaluate(dir: &Path, problems: &Path, samples: &[Value], extra: &[&str]) -> Vec<Value> {
    let one_worker = [&["--jobs", "1", "--no-dedup"], extra].concat();
    evaluate_set(dir, problems, samples, &one_worker).1
}

/// Guards against the test code of HumanEval-style problems reaching the driver that
/// candidates are forked from: one fixed completion that implements nothing found the
/// `check` there and passed 152 of the 164 problems. In process, where candidate and
/// tests are one program by design, the same completion passes: the finder works.
#[test]
fn a_completion_finds_no_test_code_to_answer_from_on_humaneval() {
    let problems = humaneval_dir().join("HumanEval.jsonl.gz");
    for frames in [true, false] {
        let completion = format!("    pass\n{}", test_finder(frames));
        let samples: Vec<Value> = humaneval_problems()
            .iter()
            .map(|problem| json!({"task_id": problem["task_id"], "completion": completion}))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let judged = evaluate(dir.path(), &problems, &samples, &[]);
        assert_eq!(judged.len(), 164);
        assert_eq!(
            passes(&judged),
            0,
            "frames {frames}: a forged pass: {:#?}",
            judged.iter().find(|r| r["passed"] == true)
        );
        if frames {
            let in_process = evaluate(dir.path(), &problems, &samples, &["--verdicts", "in-process"]);
            assert!(
                passes(&in_process) > 100,
                "the finder finds tests it shares a process with: {}",
                passes(&in_process)
            );
        }
    }
}

/// The same for MBPP, whose asserts call the solution by name.
#[test]
fn a_solution_finds_no_test_code_to_answer_from_on_mbpp() {
    let problems = format_fixture("mbpp.jsonl");
    let text = std::fs::read_to_string(&problems).unwrap();
    for frames in [true, false] {
        let samples: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .map(|problem| json!({"task_id": problem["task_id"], "completion": test_finder(frames)}))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let judged = evaluate(dir.path(), &problems, &samples, &[]);
        assert_eq!(passes(&judged), 0, "frames {frames}: a forged pass: {judged:#?}");
        if frames {
            let in_process = evaluate(dir.path(), &problems, &samples, &["--verdicts", "in-process"]);
            assert!(passes(&in_process) > 0, "the finder finds tests it shares a process with: {in_process:#?}");
        }
    }
}

/// Guards against a candidate copying another sample's code from the driver it was
/// forked from, which read every sample's program: after an honest sample of the same
/// problem on the same worker, a completion that implements nothing passed.
#[test]
fn a_candidate_finds_no_other_samples_code_to_copy() {
    let problems = repo_root().join("problems/basic.jsonl");
    let first: Value =
        serde_json::from_str(std::fs::read_to_string(&problems).unwrap().lines().next().unwrap()).unwrap();
    for mode in ["judge", "in-process"] {
        let samples = [
            json!({"task_id": "basic/0", "completion": first["canonical_solution"]}),
            json!({"task_id": "basic/0", "completion": format!("    pass\n{}", hostile_python("sibling_copier.py"))}),
        ];
        let dir = tempfile::tempdir().unwrap();
        let results = evaluate(dir.path(), &problems, &samples, &["--verdicts", mode]);
        assert_eq!(results[0]["passed"], true, "{mode}: {}", results[0]);
        assert_eq!(results[1]["passed"], false, "{mode}: copied: {}", results[1]);
    }
}

/// A completion of basic/0 that leaves what a later sample could read: 60 processes
/// forked (which moved the pid counter of a namespace that outlived the sample), and
/// connections to a listener of its own, closed so that they linger in TIME_WAIT in a
/// network namespace that outlived it.
const LEAVES_TRACES: &str = r#"    pass
import os, socket
for _ in range(60):
    if os.fork() == 0:
        os._exit(0)
    os.wait()
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
for port in range(42420, 42430):
    out = socket.socket()
    out.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    out.bind(("127.0.0.1", port))
    out.connect(listener.getsockname())
    listener.accept()[0].close()
    out.close()
"#;

/// A completion of basic/0 that fails with what it can see of the samples before it:
/// its pid, the sockets of its network namespace, and every process its /proc lists.
const READS_TRACES: &str = r#"    pass
import os
sockets = [line.split()[1:4] for name in ("/proc/net/tcp", "/proc/net/tcp6") for line in open(name).read().splitlines()[1:]]
processes = sorted(int(entry) for entry in os.listdir("/proc") if entry.isdigit())
raise ValueError(f"pid {os.getpid()} sockets {sockets} processes {processes}")
"#;

/// Guards against a sample leaving a message for the next one on its worker, which the
/// red team turned into an answer oracle (a completion that learns from each call
/// whether its last answer was taken, and tells the next sample: 25 of 40 passed with
/// no solution): the pid counter of a pid namespace kept for the worker, TIME_WAIT
/// entries in its network namespace, and the driver's and judge's counters in /proc.
/// The next sample is the init of a pid namespace of its own, sees no socket and no
/// process but its own.
#[test]
fn a_sample_leaves_nothing_for_the_next_to_read() {
    let problems = repo_root().join("problems/basic.jsonl");
    for mode in ["judge", "in-process"] {
        let samples = [
            json!({"task_id": "basic/0", "completion": LEAVES_TRACES}),
            json!({"task_id": "basic/0", "completion": READS_TRACES}),
        ];
        let dir = tempfile::tempdir().unwrap();
        let (run, results) =
            evaluate_set(dir.path(), &problems, &samples, &["--jobs", "1", "--no-dedup", "--verdicts", mode]);
        if !run.stdout.contains("sandbox       full") {
            return;
        }
        let detail = results[1]["detail"].as_str().unwrap();
        assert!(detail.contains("pid 1 sockets [] processes [1]"), "{mode}: {detail}");
    }
}

/// A frame of ("return", [set(), set(), ...]) written by hand: 64 MiB that would take
/// gigabytes to build. The call never returns otherwise.
const HUGE_FRAME: &str = r#"    import os, struct, time
    count = (64 << 20) // 5 - 64
    items = b"E\0\0\0\0" * count
    payload = b"U" + struct.pack(">I", 2) + b"S" + struct.pack(">I", 6) + b"return" + b"L" + struct.pack(">I", count) + items
    os.write(4, struct.pack(">I", len(payload)) + payload)
    time.sleep(60)
"#;

/// Guards against answers the judge could not show or hold ending the judge, and so the
/// sample, as `infrastructure`: an int of 5,000 digits (which Python refuses to write as
/// text), and a hand-written frame that decodes to 13 million sets. Both fail the
/// sample, and the honest sample after each on the same worker passes.
#[test]
fn answers_the_judge_cannot_show_or_hold_fail_the_sample_not_the_run() {
    let problems = repo_root().join("problems/basic.jsonl");
    let first: Value =
        serde_json::from_str(std::fs::read_to_string(&problems).unwrap().lines().next().unwrap()).unwrap();
    let right = first["canonical_solution"].clone();
    let samples = [
        json!({"task_id": "basic/0", "completion": "    return 10 ** 5000\n"}),
        json!({"task_id": "basic/0", "completion": right}),
        json!({"task_id": "basic/0", "completion": HUGE_FRAME}),
        json!({"task_id": "basic/0", "completion": right}),
    ];
    let dir = tempfile::tempdir().unwrap();
    let results = evaluate(dir.path(), &problems, &samples, &["--memory-limit", "512", "--timeout", "30"]);
    assert_eq!(results[0]["status"], "failed", "{}", results[0]);
    assert!(results[0]["detail"].as_str().unwrap().contains("<an int of 16610 bits>"), "{}", results[0]);
    assert_eq!(results[2]["status"], "out-of-memory", "{}", results[2]);
    assert!(results[2]["detail"].as_str().unwrap().contains("more than 256 MiB"), "{}", results[2]);
    for honest in [&results[1], &results[3]] {
        assert_eq!(honest["passed"], true, "{honest}");
    }
}

/// A frame of ("return", [0.5, 0.5, ...]) written by hand a mebibyte at a time, so that
/// the candidate itself holds little: 6.5 million floats, about 200 MiB to build.
const FLOATS_FRAME: &str = r#"    import os, struct, time
    count = 6_500_000
    head = b"U" + struct.pack(">I", 2) + b"S" + struct.pack(">I", 6) + b"return" + b"L" + struct.pack(">I", count)
    item = b"D" + struct.pack(">d", 0.5)
    os.write(4, struct.pack(">I", len(head) + count * len(item)) + head)
    chunk = item * (1 << 17)
    left = count
    while left:
        piece = chunk[: min(left, 1 << 17) * len(item)]
        view = memoryview(piece)
        while view:
            view = view[os.write(4, view):]
        left -= len(piece) // len(item)
    time.sleep(60)
"#;

/// Guards against the judge's memory lying outside the sample's group: an answer frame
/// written by hand, small in the candidate's process, took the judge past 1.3 GiB while
/// the sample's group peaked at 203 MB. What the judge builds from a sample's answers
/// now counts as the sample's.
#[test]
fn what_the_judge_holds_for_a_sample_counts_against_its_memory() {
    let problems = repo_root().join("problems/basic.jsonl");
    let samples = [json!({"task_id": "basic/0", "completion": FLOATS_FRAME})];
    let dir = tempfile::tempdir().unwrap();
    let (run, results) =
        evaluate_set(dir.path(), &problems, &samples, &["--jobs", "1", "--memory-limit", "512", "--timeout", "60"]);
    let result = &results[0];
    assert_eq!(result["status"], "failed", "{result}");
    let Some(peak) = result["memory_peak_bytes"].as_u64() else {
        assert!(!run.stdout.contains("a group per sample"), "a peak where groups are in force: {result}");
        return;
    };
    assert!(peak > 150 << 20, "the judge's 200 MiB counted: peak {} MiB", peak >> 20);
    assert!(peak <= 512 << 20, "within the limit: {result}");
}

/// Guards against what a candidate writes in an exception reaching the results unclean
/// or uncapped: a lone surrogate in a failure's `outcome` made the driver's line one no
/// JSON reader takes, and 4 MB of message a record too long to read, which left the
/// judge blocked and the next sample hung. Both fail; the results hold clean, short text.
#[test]
fn exception_messages_of_any_content_and_length_fail_cleanly_on_suites_of_calls() {
    let problems = format_fixture("evalplus-humaneval.jsonl");
    let samples = [
        json!({"task_id": "HumanEval/901", "completion": "    raise ValueError('\\udc80 lone')\n"}),
        json!({"task_id": "HumanEval/901", "completion": "    raise ValueError('x' * (4 << 20))\n"}),
        json!({"task_id": "HumanEval/901", "completion": "    class E(Exception): pass\n    E.__name__ = 'N' * (4 << 20)\n    raise E('y' * (4 << 20))\n"}),
        json!({"task_id": "HumanEval/901", "completion": "    return n + 1\n"}),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (run, results) =
        evaluate_set(dir.path(), &problems, &samples, &["--jobs", "1", "--no-dedup", "--timeout", "20"]);
    assert!(!run.stderr.contains("WARN"), "no driver fault: {}", run.stderr);
    for result in &results[..3] {
        assert_eq!(result["status"], "failed", "{result}");
        let line = result.to_string();
        assert!(line.len() < 150_000, "capped: {} bytes", line.len());
        assert!(result["duration"].as_f64().unwrap() < 10.0, "{result}");
    }
    let outcome = results[0]["phases"][0]["failure"]["outcome"].as_str().unwrap();
    assert_eq!(outcome, "raised ValueError: \u{fffd} lone", "{}", results[0]);
    assert_eq!(results[3]["passed"], true, "{}", results[3]);
}

/// Guards against a judge's record too long for the driver to read being left half-read
/// in the judge's socket: the judge blocked writing the rest, the next sample on the
/// worker read it as its own, its candidate was never killed, and the driver hung until
/// the harness stopped it. A canonical solution whose output is 2 MiB makes such a record
/// while expected outputs are recorded; the problem after it, on the same worker, is
/// recorded and judged as ever, and the run ends promptly with a verdict for each.
#[test]
fn a_record_too_long_to_read_leaves_nothing_for_the_next_sample() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    let big = json!({"task_id": "HumanEval/950", "prompt": "def big(n: int):\n    \"\"\"A long text.\"\"\"\n",
        "entry_point": "big", "canonical_solution": "    return 'x' * (2 << 20)\n", "test": "", "contract": "", "atol": 0,
        "base_input": [[1]], "plus_input": []});
    let bump = json!({"task_id": "HumanEval/951", "prompt": "def bump(n: int):\n    \"\"\"Return n + 1.\"\"\"\n",
        "entry_point": "bump", "canonical_solution": "    return n + 1\n", "test": "", "contract": "", "atol": 0,
        "base_input": [[1], [41]], "plus_input": [[0]]});
    passk_tests::write_jsonl(&problems, &[big, bump]);
    let samples = dir.path().join("samples.jsonl");
    passk_tests::write_jsonl(
        &samples,
        &[
            json!({"task_id": "HumanEval/950", "completion": "    return 'x' * (2 << 20)\n"}),
            json!({"task_id": "HumanEval/951", "completion": "    return n + 1\n"}),
        ],
    );
    let results = dir.path().join("results.jsonl");
    let started = std::time::Instant::now();
    let run = passk_tests::finish(
        passk_tests::passk(["evaluate"])
            .arg(&samples)
            .arg("--problems")
            .arg(&problems)
            .arg("--results")
            .arg(&results)
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .args(["--k", "1", "--jobs", "1", "--timeout", "20"]),
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "no hang: {:?}", started.elapsed());
    assert_ne!(run.code, Some(3), "no infrastructure fault: {}", run.stderr);
    let results = passk_tests::read_jsonl(&results);
    assert_eq!(results[1]["passed"], true, "{}", results[1]);
}

/// Guards against the last line of a program's standard error reaching a standard-input
/// failure's detail and `why` whole: 4 MB of it, with a lone surrogate.
#[test]
fn a_runtime_errors_words_are_cut_short_and_clean() {
    let program = "import os\nos.write(2, b'\\xed\\xb2\\x80' + b'z' * (4 << 20) + b'\\n')\nraise SystemExit(3)\n";
    let samples = [json!({"task_id": "passk_double", "solution": program})];
    let dir = tempfile::tempdir().unwrap();
    let results = evaluate(dir.path(), &format_fixture("code-contests.jsonl"), &samples, &[]);
    let result = &results[0];
    assert_eq!(result["status"], "failed", "{result}");
    assert!(result["detail"].as_str().unwrap().chars().count() <= 1000, "{result}");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(why.starts_with("runtime error (exit status 3): \u{fffd}") && why.chars().count() <= 1000, "{result}");
}

/// Guards against a candidate ending a test's loop early: a StopIteration it raised was
/// raised in the judge as one, and `for value in map(candidate, inputs)` ended at once,
/// with no assert run.
#[test]
fn a_candidates_stop_iteration_ends_no_loop_of_the_tests() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    let test =
        "def check(candidate):\n    for value in map(candidate, [1, 2, 3]):\n        assert value == 2 * value\n";
    let problem = json!({"task_id": "loop/0", "prompt": "def double(x):\n", "entry_point": "double", "test": test,
        "canonical_solution": "    return 2 * x\n"});
    passk_tests::write_jsonl(&problems, &[problem]);
    let samples = [
        json!({"task_id": "loop/0", "completion": "    raise StopIteration\n"}),
        json!({"task_id": "loop/0", "completion": "    raise StopAsyncIteration\n"}),
    ];
    let results = evaluate(dir.path(), &problems, &samples, &[]);
    for result in &results {
        assert_eq!(result["passed"], false, "{result}");
    }
}

/// Guards against a candidate choosing its failure's status: a MemoryError or an
/// OSError of the open-files limit raised by hand was reported as `out-of-memory` and
/// `limit`. Raised by hand they fail, in both verdict modes; the limits really reached
/// are told from what the kernel saw.
#[test]
fn a_limit_claimed_by_hand_is_a_failure() {
    let problems = repo_root().join("problems/basic.jsonl");
    let claims = [
        "    raise MemoryError()\n",
        "    import errno, os\n    raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))\n",
        "    import errno, os\n    raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))\n",
        "    import errno, os\n    raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))\n",
        "    pass\nraise MemoryError()\n",
    ];
    let samples: Vec<Value> = claims.iter().map(|claim| json!({"task_id": "basic/0", "completion": claim})).collect();
    for mode in ["judge", "in-process"] {
        let dir = tempfile::tempdir().unwrap();
        let results = evaluate(dir.path(), &problems, &samples, &["--verdicts", mode]);
        for result in &results {
            assert_eq!(result["status"], "failed", "{mode}: {result}");
        }
    }
}
