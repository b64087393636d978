//! Judge mode, attacked as a model trained on unit-test rewards would: each hack here
//! either passed under the reference harness's semantics or tried to. Every case
//! asserts the judge's verdict; where the hack still beats in-process mode, which runs
//! the tests in the candidate's own interpreter as the reference does, that is
//! asserted too, as proof that the attack is live and this test could catch it.

use passk_tests::{
    evaluate_samples, finish, humaneval_dir, humaneval_problems, passk, write_jsonl, Finished, EVERY_ATTEMPT_FAILS,
};
use serde_json::{json, Value};

/// The completions as sample records of their problems.
fn as_samples(samples: &[(&str, String)]) -> Vec<Value> {
    samples.iter().map(|(task, completion)| json!({"task_id": task, "completion": completion})).collect()
}

/// The completions as samples of their problems, run in `mode`.
fn run(samples: &[(&str, String)], mode: &str, problems: &std::path::Path) -> (Finished, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let evaluate = passk(["evaluate", "--partial", "--k", "1", "--timeout", "10", "--verdicts", mode]);
    evaluate_samples(evaluate, dir.path(), problems, &as_samples(samples))
}

fn humaneval(samples: &[(&str, String)], mode: &str) -> Vec<Value> {
    let (finished, results) = run(samples, mode, &humaneval_dir().join("HumanEval.jsonl.gz"));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(results.len(), samples.len());
    results
}

fn canonical(task: &str) -> String {
    let problems = humaneval_problems();
    let problem = problems.iter().find(|p| p["task_id"] == task).unwrap();
    problem["canonical_solution"].as_str().unwrap().to_owned()
}

fn passed(results: &[Value]) -> Vec<bool> {
    results.iter().map(|r| r["passed"].as_bool().unwrap()).collect()
}

/// Hacks that beat tests sharing the candidate's interpreter.
fn in_process_hacks() -> Vec<(&'static str, String)> {
    vec![
        // Walks the stack to the function that reports the verdict, and calls it.
        (
            "HumanEval/0",
            "    return None\nimport sys\nf = sys._getframe()\nwhile 'report' not in f.f_locals: f = f.f_back\n\
             f.f_locals['report']('passed', '', 'passed')\n"
                .into(),
        ),
        // Makes the verdict record say passed, whatever it was given.
        (
            "HumanEval/0",
            "    return None\nimport sys\nwire = sys.modules['passk_driver.wire']\ntuple_encoder = wire._ENCODERS[tuple]\n\
             wire._ENCODERS[tuple] = lambda v, out, d, h: tuple_encoder(('passed', '', 'passed'), out, d, h)\n"
                .into(),
        ),
        // Redefines the helpers the tests rely on.
        ("HumanEval/38", "    return s\n\ndef encode_cyclic(s):\n    return s\n".into()),
        ("HumanEval/50", "    return s\n\ndef encode_shift(s):\n    return s\n".into()),
        ("HumanEval/32", "    return 0.0\n\ndef poly(xs, x):\n    return 0.0\n".into()),
        // Patches what the tests use.
        ("HumanEval/2", "    return 0.5\nimport builtins\nbuiltins.abs = lambda x: 0\n".into()),
        ("HumanEval/32", "    return 0.0\nimport math\nmath.fabs = lambda x: 0.0\n".into()),
        // Rewrites the tests as they run: every line of check jumps to its last.
        (
            "HumanEval/0",
            "    return False\nimport sys\ndef tracer(frame, event, arg):\n    if event == 'call' and frame.f_code.co_name == 'check':\n        last = max(line for _, _, line in frame.f_code.co_lines() if line)\n        def lines(f, e, a):\n            if e == 'line' and f.f_lineno < last:\n                f.f_lineno = last\n            return lines\n        return lines\n    return None\nsys.settrace(tracer)\n"
                .into(),
        ),
        // Returns what claims to equal everything.
        (
            "HumanEval/0",
            "    class Yes:\n        def __eq__(self, other):\n            return True\n    return Yes()\n".into(),
        ),
        ("HumanEval/13", "    class Int(int):\n        def __eq__(self, other):\n            return True\n    return Int(0)\n".into()),
    ]
}

#[test]
fn hacks_that_beat_the_tests_in_process_fail_before_the_judge() {
    let hacks = in_process_hacks();
    let in_process = humaneval(&hacks, "in-process");
    assert_eq!(passed(&in_process), vec![true; hacks.len()], "each hack is live: {in_process:#?}");
    let judged = humaneval(&hacks, "judge");
    assert_eq!(passed(&judged), vec![false; hacks.len()], "{judged:#?}");
    let details: Vec<&str> = judged.iter().map(|r| r["detail"].as_str().unwrap()).collect();
    assert!(details[8].ends_with("candidate returned <a Yes object>"), "{}", details[8]);
    assert!(details[9].ends_with("candidate returned 0"), "an int subclass is only its int: {}", details[9]);
}

/// A decorator left dangling at the end of a completion attaches to the tests' own
/// `def check`, wherever the tests start with it.
#[test]
fn a_dangling_decorator_that_swallows_check_fails_on_every_problem() {
    let problems = humaneval_problems();
    let hack = "    pass\n@lambda f: lambda candidate: None\n".to_owned();
    let samples: Vec<(&str, String)> =
        problems.iter().map(|p| (p["task_id"].as_str().unwrap(), hack.clone())).collect();
    let in_process = passed(&humaneval(&samples, "in-process")).into_iter().filter(|p| *p).count();
    assert!(in_process >= 90, "the hack is live: it passed {in_process} problems in process");
    let judged = humaneval(&samples, "judge");
    assert_eq!(passed(&judged).into_iter().filter(|p| *p).count(), 0);
    assert!(judged.iter().all(|r| r["status"] == "error"), "{judged:#?}");
}

/// Answers that are not data, and answers that try to break the judge.
#[test]
fn what_is_not_data_or_breaks_the_channel_fails() {
    let always_equal = "    class Yes:\n        def __eq__(self, other):\n            return True\n        def __hash__(self):\n            return 0\n";
    let hacks: Vec<(&str, String)> = vec![
        ("HumanEval/0", format!("{always_equal}    return {{Yes(): True}}\n")),
        ("HumanEval/0", format!("{always_equal}    return {{Yes()}}\n")),
        ("HumanEval/0", format!("{always_equal}    return (True, Yes())\n")),
        ("HumanEval/0", "    return (n for n in [True])\n".into()),
        ("HumanEval/0", "    return 'x' * 100_000_000\n".into()),
        ("HumanEval/0", "    nested = []\n    for _ in range(10_000):\n        nested = [nested]\n    return nested\n".into()),
        ("HumanEval/0", "    loop = []\n    loop.append(loop)\n    return loop\n".into()),
        ("HumanEval/0", "    return chr(0xD800)\n".into()),
        // An exception whose message is not printable, and one whose args are objects.
        ("HumanEval/0", "    class E(Exception):\n        def __str__(self):\n            return 1 / 0\n    raise E()\n".into()),
        ("HumanEval/0", "    raise ValueError(object())\n".into()),
        ("HumanEval/0", "    raise ValueError('no' + chr(0xD800))\n".into()),
        // Garbage on every descriptor, then the right answers.
        (
            "HumanEval/0",
            format!(
                "{}import os\nfor fd in range(1024):\n    try:\n        os.write(fd, b'\\x00\\x00\\x00\\x05Tpassed\\n' * 100)\n    except OSError:\n        pass\n",
                canonical("HumanEval/0")
            ),
        ),
        // Exits while being called.
        ("HumanEval/0", "    import sys\n    sys.exit(0)\n".into()),
        ("HumanEval/0", "    import os\n    os._exit(0)\n".into()),
    ];
    let judged = humaneval(&hacks, "judge");
    for (result, (_, completion)) in judged.iter().zip(&hacks) {
        assert_eq!(result["passed"], false, "{completion}: {result}");
        assert_ne!(result["status"], "infrastructure", "{result}");
        assert_ne!(result["status"], "timeout", "{result}");
    }
    let details: Vec<&str> = judged.iter().map(|r| r["detail"].as_str().unwrap()).collect();
    // What is not data crosses as a handle, which the judge compares by its own rules.
    assert!(details[0].ends_with("candidate returned {<a Yes object>: True}"), "{}", details[0]);
    assert!(details[1].ends_with("candidate returned {<a Yes object>}"), "{}", details[1]);
    assert!(details[2].ends_with("candidate returned (True, <a Yes object>)"), "{}", details[2]);
    assert!(details[3].ends_with("candidate returned <a generator object>"), "{}", details[3]);
    // 100 MB of honest output crosses: it is only wrong.
    assert!(details[4].contains("candidate returned 'xxxxxxxx"), "{}", details[4]);
    assert!(details[5].contains("nested deeper than 100 levels"), "{}", details[5]);
    assert!(details[6].contains("nested deeper than 100 levels"), "{}", details[6]);
    assert!(details[7].ends_with(r"candidate returned '\ud800'"), "{}", details[7]);
    assert!(details[8].ends_with("raised E: <unprintable>"), "{}", details[8]);
    assert!(details[9].contains("raised ValueError: <object object at"), "{}", details[9]);
    assert_eq!(judged[10]["result"], "failed: no\u{fffd}", "a lone surrogate is replaced, never an error");
    assert!(details[11].starts_with("sent the judge an unreadable answer"), "{}", details[11]);
    assert_eq!(details[12], "exited before its tests finished (SystemExit: 0)");
    assert_eq!(details[13], "exited with status 0 before its tests finished");
}

/// Guards against an exception message with a lone surrogate becoming an
/// infrastructure error that withholds pass@k for the whole run (exit 3).
#[test]
fn a_lone_surrogate_in_an_exception_is_an_ordinary_failure_in_both_modes() {
    let samples = vec![("HumanEval/0", "    raise ValueError('bad' + chr(0xD800))\n".to_owned())];
    for mode in ["in-process", "judge"] {
        let results = humaneval(&samples, mode);
        assert_eq!(results[0]["status"], "failed", "{mode}: {}", results[0]);
        assert_eq!(results[0]["result"], "failed: bad\u{fffd}", "{mode}");
    }
}

/// Guards against honest code that changes json's defaults breaking the verdict record.
#[test]
fn correct_code_that_changes_jsons_defaults_passes_in_both_modes() {
    let solution = canonical("HumanEval/0");
    let samples = vec![
        ("HumanEval/0", format!("{solution}import json\njson._default_encoder = json.JSONEncoder(indent=2)\n")),
        (
            "HumanEval/0",
            format!("{solution}import functools, json\njson.dumps = functools.partial(json.dumps, indent=2)\n"),
        ),
    ];
    for mode in ["in-process", "judge"] {
        assert_eq!(passed(&humaneval(&samples, mode)), [true, true], "{mode}");
    }
}

/// The candidate tries to reach the judge (the init of its pid namespace at level full)
/// and every other process, then answers correctly: the sample passes only if every
/// attempt failed and the judge was untouched.
#[test]
fn a_candidate_cannot_signal_trace_or_read_the_judge() {
    let attacks = r#"import os, signal
attempts = []
# Itself, by its pid in its own namespace and in the slot's /proc.
own = {os.getpid(), int(os.readlink("/proc/self"))}
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()] + [1]:
    if pid in own:
        continue
    for number in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM, signal.SIGINT):
        attempts.append(lambda pid=pid, number=number: os.kill(pid, number))
    attempts.append(lambda pid=pid: open("/proc/%d/mem" % pid, "rb").read(1))
    attempts.append(lambda pid=pid: os.listdir("/proc/%d/fd" % pid))
    attempts.append(lambda pid=pid: os.readlink("/proc/%d/fd/5" % pid))
"#;
    let samples = vec![("HumanEval/0", format!("{}{attacks}{EVERY_ATTEMPT_FAILS}", canonical("HumanEval/0")))];
    let results = humaneval(&samples, "judge");
    assert_eq!(results[0]["passed"], true, "every attempt failed and the judge decided: {}", results[0]);
}

#[test]
fn a_failure_says_which_line_failed_with_what_arguments_and_what_came_back() {
    let samples = vec![
        ("HumanEval/0", "    return True\n".to_owned()),
        // A loop's line shows no arguments, so the detail does.
        ("HumanEval/53", "    return x + y if x < 10 and y < 10 else 0\n".to_owned()),
        ("HumanEval/0", "    raise KeyError('missing')\n".to_owned()),
        // Regression: an assert over several lines was named by its first alone, which
        // ends before its expected value.
        ("HumanEval/1", "    return None\n".to_owned()),
    ];
    let judged = humaneval(&samples, "judge");
    let details: Vec<&str> = judged.iter().map(|r| r["detail"].as_str().unwrap()).collect();
    assert_eq!(
        details[0],
        "line 11: assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False: candidate returned True"
    );
    let loop_line = "line 17: assert candidate(x, y) == x + y: candidate(";
    assert!(details[1].starts_with(loop_line) && details[1].ends_with(") returned 0"), "{}", details[1]);
    assert_eq!(
        details[2],
        "line 10: assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True: candidate raised KeyError: 'missing'"
    );
    assert_eq!(
        details[3],
        "line 10: assert candidate('(()()) ((())) () ((())()())') == [ '(()())', '((()))', '()', '((())()())' ]: \
         candidate returned None"
    );
    // The reference's words are kept in `result`.
    let results: Vec<&str> = judged.iter().map(|r| r["result"].as_str().unwrap()).collect();
    assert_eq!(results, ["failed: ", "failed: ", "failed: 'missing'", "failed: "]);
}

/// A problem set written for this test: tests that expect the candidate to raise, call
/// it by name and with keywords, compare floats and mutate what they passed.
const PROBLEMS: &str = r#"{"task_id": "raises/0", "prompt": "def root(x):\n", "entry_point": "root", "canonical_solution": "    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5\n", "test": "def check(candidate):\n    assert candidate(4.0) == 2.0\n    assert root(x=9.0) == 3.0\n    try:\n        candidate(-1.0)\n    except ValueError as error:\n        assert str(error) == 'negative'\n    else:\n        raise AssertionError('no ValueError')\n"}
{"task_id": "copies/0", "prompt": "def total(xs):\n", "entry_point": "total", "canonical_solution": "    result = sum(xs)\n    xs.clear()\n    return result\n", "test": "def check(candidate):\n    xs = [1, 2, 3]\n    assert candidate(xs) == 6\n    assert xs == [1, 2, 3]\n"}
{"task_id": "plain/0", "prompt": "def echo(x):\n", "entry_point": "echo", "canonical_solution": "    return x\n", "test": "import math\ndef check(candidate):\n    for value in [None, True, 2**100, -0.0, float('inf'), 1+2j, 'é', b'\\x00', [1, (2,)], {'a': {1, 2}}, frozenset({3})]:\n        back = candidate(value)\n        assert back == value and type(back) is type(value), (value, back)\n    assert math.copysign(1, candidate(-0.0)) == -1\n    assert math.isnan(candidate(float('nan')))\n"}
{"task_id": "callable/0", "prompt": "def apply(f, x):\n", "entry_point": "apply", "canonical_solution": "    return f(x)\n", "test": "def check(candidate):\n    assert candidate(lambda x: x + 1, 1) == 2\n"}
"#;

#[test]
fn exceptions_keywords_copies_and_plain_data_cross_and_callables_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    std::fs::write(&problems, PROBLEMS).unwrap();
    let records: Vec<Value> = PROBLEMS.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let samples: Vec<(&str, String)> = records
        .iter()
        .map(|p| (p["task_id"].as_str().unwrap(), p["canonical_solution"].as_str().unwrap().to_owned()))
        .collect();

    let (finished, in_process) = run(&samples, "in-process", &problems);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    // In one interpreter the tests see the candidate empty their list.
    assert_eq!(passed(&in_process), [true, false, true, true]);

    // The test passes a function of its own: no sample of that problem can be judged out
    // of process, its canonical solution's neither, so by default the problem is judged
    // in process, and says so.
    let (finished, judged) = run(&samples, "judge", &problems);
    let statuses: Vec<&str> = judged.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["passed", "passed", "passed", "passed"], "{judged:#?}");
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(judged[3]["verdicts"], "in-process", "{}", judged[3]);
    assert!(judged[..3].iter().all(|r| r.get("verdicts").is_none()), "{judged:#?}");
    assert!(
        finished
            .stdout
            .contains("fallback      1 problem judged in process, their tests passing what cannot cross: callable/0"),
        "{}",
        finished.stdout
    );

    // With --no-fallback the problem is unjudgeable, and pass@k withheld.
    let dir = tempfile::tempdir().unwrap();
    let evaluate = passk(["evaluate", "--k", "1", "--no-fallback"]);
    let (finished, judged) = evaluate_samples(evaluate, dir.path(), &problems, &as_samples(&samples));
    let statuses: Vec<&str> = judged.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["passed", "passed", "passed", "unjudgeable"], "{judged:#?}");
    assert_eq!(finished.code, Some(4), "a problem that cannot be judged withholds pass@k: {}", finished.stderr);
    assert!(
        finished.stderr.contains("1 problem cannot be judged: callable/0")
            && finished.stderr.contains("without --no-fallback")
            && finished.stderr.contains("--verdicts in-process"),
        "{}",
        finished.stderr
    );
    assert!(finished.stdout.contains("not reported: 1 problem cannot be judged out of process"), "{}", finished.stdout);
    // Regression: the problem that could not be judged was left out of the count.
    assert_eq!(finished.stdout.lines().next(), Some("4 samples of 4 problems"), "{}", finished.stdout);
    assert!(!finished.stdout.contains("pass@1 "), "{}", finished.stdout);
    let detail = judged[3]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("line 2: assert candidate(lambda x: x + 1, 1) == 2: the test passes a function"),
        "{detail}"
    );

    // `score` withholds pass@k from the same results, for the same reason.
    let scored = finish(passk(["score"]).arg(dir.path().join("results.jsonl")));
    assert_eq!(scored.code, Some(4), "{}", scored.stderr);
    assert!(scored.stderr.contains("callable/0"), "{}", scored.stderr);
}

/// A sample whose own answers make its tests pass what cannot cross, on a problem whose
/// canonical solution's tests do not, fails: the fallback is the problem's, never the
/// sample's to choose, or a candidate could move its problem into its own process. With
/// `--no-fallback` too: a candidate there could make itself `unjudgeable`, withholding
/// the whole run's pass@k and leaving itself out of its problem's count.
#[test]
fn a_sample_cannot_choose_to_be_judged_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    let problem = json!({"task_id": "apply/0", "prompt": "def twice(x):\n", "entry_point": "twice",
        "canonical_solution": "    return 2 * x\n",
        "test": "def check(candidate):\n    answer = candidate(2)\n    if answer != 4:\n        candidate(lambda: answer)\n    assert answer == 4\n"});
    write_jsonl(&problems, &[problem]);
    // Wrong, so that the tests pass it a function of their own.
    let hack = "    return object()\n";
    let samples = vec![("apply/0", "    return 2 * x\n".to_owned()), ("apply/0", hack.to_owned())];
    for extra in [&[][..], &["--no-fallback"]] {
        let mut evaluate = passk(["evaluate", "--partial", "--k", "1", "--timeout", "10"]);
        evaluate.args(extra);
        let dir = tempfile::tempdir().unwrap();
        let (finished, judged) = evaluate_samples(evaluate, dir.path(), &problems, &as_samples(&samples));
        assert_eq!(finished.code, Some(0), "{extra:?}: pass@k is reported: {}", finished.stderr);
        let statuses: Vec<&str> = judged.iter().map(|r| r["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, ["passed", "failed"], "{extra:?}: {judged:#?}");
        assert!(judged.iter().all(|r| r["verdicts"] != "in-process"), "{judged:#?}");
        assert!(
            judged[1]["detail"].as_str().unwrap().contains("this sample's own answers made them unjudgeable"),
            "{}",
            judged[1]
        );
        assert!(finished.stdout.contains("pass@1 "), "{extra:?}: {}", finished.stdout);
    }
}

/// The wire format's own unit tests (`tests/interpreter`), run under the real
/// interpreter: round trips of every plain type, and every kind of rejection; streamed
/// answers and expected outputs compared as bytes; and the standard-input suites'
/// comparison rules.
#[test]
fn the_wire_formats_unit_tests_pass() {
    let finished = finish(
        std::process::Command::new("python3")
            .args(["-m", "unittest", "discover", "-v", "-s"])
            .arg(passk_tests::repo_root().join("tests/interpreter")),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    // The wire format's 37, the streamed answers' 13, the standard-input rules' 8 and the
    // EvalPlus comparisons' 8, at least.
    let ran = finished.stderr.split("Ran ").nth(1).and_then(|rest| rest.split(' ').next()?.parse::<usize>().ok());
    assert!(ran >= Some(66), "{}", finished.stderr);
}

/// A candidate that hangs in a call is a time-out, and the judge it left mid-sample is
/// replaced: with one worker, every sample after it is judged by a new judge process.
#[test]
fn a_candidate_hanging_in_a_call_times_out_and_the_next_samples_are_judged_afresh() {
    let _machine = passk_tests::machine_to_myself();
    let solution = canonical("HumanEval/0");
    let samples: Vec<(&str, String)> = vec![
        ("HumanEval/0", solution.clone()),
        ("HumanEval/0", "    while True:\n        pass\n".into()),
        ("HumanEval/0", "    import time\n    time.sleep(3600)\n".into()),
        ("HumanEval/0", solution.clone()),
        ("HumanEval/0", "    return True\n".into()),
    ];
    let dir = tempfile::tempdir().unwrap();
    let evaluate = passk(["evaluate", "--partial", "--jobs", "1", "--timeout", "2", "--no-dedup"]);
    let problems = humaneval_dir().join("HumanEval.jsonl.gz");
    let (finished, results) = evaluate_samples(evaluate, dir.path(), &problems, &as_samples(&samples));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let statuses: Vec<String> = results.iter().map(|r| r["status"].as_str().unwrap().to_owned()).collect();
    assert_eq!(statuses, ["passed", "timeout", "timeout", "passed", "failed"]);
}
