//! How values cross between the judge and the candidate: the released benchmarks'
//! canonical solutions, honest code that answers with standard-library values, what only
//! the candidate defines reached through handles, and the attacks on all of these.

use passk_tests::{
    finish, humaneval_dir, passk, read_jsonl, shared_benchmark, the_judge_fails_a_cheat_that_passes_in_process,
    write_jsonl, Finished,
};
use serde_json::{json, Value};
use std::path::Path;

/// `passk canonical` of `problems`, evaluated in `mode` with a generous limit (the
/// machine may be shared): the run, and its results.
fn canonical_run(problems: &Path, mode: &str) -> (Finished, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let made = finish(passk(["canonical", "--problems"]).arg(problems).arg("--output").arg(&samples));
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    let results = dir.path().join("results.jsonl");
    let run = finish(
        passk(["evaluate"])
            .arg(&samples)
            .arg("--problems")
            .arg(problems)
            .args(["--k", "1", "--timeout", "30", "--verdicts", mode, "--results"])
            .arg(&results),
    );
    let results = if results.exists() { read_jsonl(&results) } else { Vec::new() };
    (run, results)
}

/// Every canonical solution of a released file passes in both verdict modes, exit 0,
/// with pass@1 reported.
fn every_canonical_solution_passes(problems: &Path, count: usize) {
    for mode in ["judge", "in-process"] {
        let (run, results) = canonical_run(problems, mode);
        let failing: Vec<&Value> = results.iter().filter(|r| r["passed"] != true).collect();
        assert!(failing.is_empty(), "{mode}: {failing:#?}");
        assert_eq!(results.len(), count, "{mode}");
        assert_eq!(run.code, Some(0), "{mode}: {}", run.stderr);
        assert!(run.stdout.contains("pass@1          1.0000"), "{mode}: {}", run.stdout);
    }
}

/// Guards against MBPP's canonical solutions failing in judge mode: Counter and
/// defaultdict answers compared with dicts (40, 88, 653, 902), entry points named
/// `check` (56, 349, 899, 967), setup code run before the classes it builds (367, 927),
/// and tests using the solution's own class, module or a type (601, 596, 533).
#[test]
fn every_canonical_solution_of_the_released_mbpp_passes() {
    if let Some(problems) = shared_benchmark("mbpp/mbpp.jsonl.gz") {
        every_canonical_solution_passes(&problems, 974);
    }
}

/// Regression: MBPP's task 123 (amicable numbers), whose canonical solution takes 2.5 s
/// of the default 3 s limit alone, timed out on a loaded machine, its own canonical
/// solution as a sample too. Four copies of it at once on a machine with a busy loop
/// on every core time out at the default limit, and pass: the time-out is run again
/// under 4 x the canonical solution's time, measured under the same load.
#[test]
fn the_released_mbpps_task_123_passes_at_the_default_limit_on_a_loaded_machine() {
    let Some(released) = shared_benchmark("mbpp/mbpp.jsonl.gz") else { return };
    let _machine = passk_tests::machine_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(std::fs::File::open(released).unwrap()), &mut text)
        .unwrap();
    let line = text.lines().find(|line| serde_json::from_str::<Value>(line).unwrap()["task_id"] == 123).unwrap();
    let problems = dir.path().join("mbpp-123.jsonl");
    std::fs::write(&problems, format!("{line}\n")).unwrap();
    let samples = dir.path().join("samples.jsonl");
    let made = finish(passk(["canonical", "--problems"]).arg(&problems).arg("--output").arg(&samples));
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    let canonical = std::fs::read_to_string(&samples).unwrap();
    std::fs::write(&samples, canonical.repeat(4)).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut hogs: Vec<std::process::Child> = (0..cores)
        .map(|_| std::process::Command::new("python3").args(["-c", "while True: pass"]).spawn().unwrap())
        .collect();
    let results = dir.path().join("results.jsonl");
    let jobs = (2 * cores).to_string();
    let run = finish(
        passk(["evaluate", "--no-dedup", "--jobs", &jobs])
            .arg(&samples)
            .arg("--problems")
            .arg(&problems)
            .arg("--results")
            .arg(&results),
    );
    for hog in &mut hogs {
        hog.kill().unwrap();
        hog.wait().unwrap();
    }
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for result in read_jsonl(&results) {
        assert_eq!((&result["status"], &result["retried"]), (&json!("passed"), &json!(true)), "{result}");
    }
}

#[test]
fn every_canonical_solution_of_the_released_sanitized_mbpp_passes() {
    if let Some(problems) = shared_benchmark("mbpp/sanitized-mbpp.json.gz") {
        every_canonical_solution_passes(&problems, 427);
    }
}

#[test]
fn every_canonical_solution_of_humaneval_passes() {
    every_canonical_solution_passes(&humaneval_dir().join("HumanEval.jsonl.gz"), 164);
}

/// Guards against HumanEval-X's Python file, HumanEval's fields less `entry_point`, being
/// refused as a format passk cannot tell.
#[test]
fn every_canonical_solution_of_humaneval_x_in_python_passes() {
    if let Some(problems) = shared_benchmark("humaneval-x/humaneval_python.jsonl.gz") {
        every_canonical_solution_passes(&problems, 164);
    }
}

/// The completions as samples of HumanEval's problems, run in `mode`; every sample is
/// run (no deduplication).
fn humaneval(samples: &[(&str, String)], mode: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("samples.jsonl");
    let records: Vec<Value> = samples.iter().map(|(t, c)| json!({"task_id": t, "completion": c})).collect();
    write_jsonl(&path, &records);
    let results = dir.path().join("results.jsonl");
    let run = finish(
        passk(["evaluate"])
            .arg(&path)
            .arg("--problems")
            .arg(humaneval_dir().join("HumanEval.jsonl.gz"))
            .args(["--partial", "--no-dedup", "--k", "1", "--timeout", "20", "--verdicts", mode, "--results"])
            .arg(&results),
    );
    assert_eq!(run.code, Some(0), "{mode}: {}", run.stderr);
    read_jsonl(&results)
}

fn passed(results: &[Value]) -> Vec<bool> {
    results.iter().map(|r| r["passed"].as_bool().unwrap()).collect()
}

/// Guards against honest code that the reference passes failing in judge mode because
/// its answer was not plain data: a namedtuple, an OrderedDict, a Fraction, a Decimal,
/// an IntEnum, an iterator, a deque and a generator where the tests call tuple().
#[test]
fn honest_answers_of_standard_library_types_pass_in_both_modes() {
    let reorder = "    evens = sorted(l[::2])\n    out = list(l)\n    out[::2] = evens\n";
    let samples: Vec<(&str, String)> = vec![
        ("HumanEval/8", "    import collections\n    R = collections.namedtuple('R', 'total product')\n    p = 1\n    for n in numbers:\n        p *= n\n    return R(sum(numbers), p)\n".into()),
        ("HumanEval/111", "    import collections\n    c = collections.Counter(w for w in test.split(' ') if w)\n    top = max(c.values(), default=0)\n    return collections.OrderedDict((k, v) for k, v in c.items() if v == top)\n".into()),
        ("HumanEval/2", "    from fractions import Fraction\n    return Fraction(1, 2) if number == 3.5 else number % 1.0\n".into()),
        ("HumanEval/13", "    import decimal, math\n    return decimal.Decimal(math.gcd(a, b))\n".into()),
        ("HumanEval/13", "    import enum, math\n    return enum.IntEnum('Gcd', {'VALUE': math.gcd(a, b)}).VALUE\n".into()),
        ("HumanEval/37", format!("{reorder}    return iter(out)\n")),
        ("HumanEval/37", format!("{reorder}    import collections\n    return collections.deque(out)\n")),
        ("HumanEval/37", format!("{reorder}    return (x for x in out)\n")),
    ];
    for mode in ["in-process", "judge"] {
        let results = humaneval(&samples, mode);
        assert_eq!(passed(&results), vec![true; samples.len()], "{mode}: {results:#?}");
    }
}

/// Values that claim equality through code of the candidate's: each beats the tests in
/// process, and crosses to the judge as data (or a handle) that the judge compares itself.
#[test]
fn standard_library_values_and_subclasses_cannot_make_a_comparison_pass() {
    let samples: Vec<(&str, String)> = vec![
        // A Counter subclass whose __eq__ says yes, with the wrong counts.
        ("HumanEval/111", "    import collections\n    class C(collections.Counter):\n        def __eq__(self, other):\n            return True\n    return C()\n".into()),
        // A namedtuple whose class's __eq__ is patched to say yes.
        ("HumanEval/8", "    import collections\n    R = collections.namedtuple('R', 'a b')\n    R.__eq__ = lambda self, other: True\n    return R(0, 0)\n".into()),
        // An int subclass and an IntEnum whose __eq__ says yes: each only its int.
        ("HumanEval/13", "    class I(int):\n        def __eq__(self, other):\n            return True\n        __hash__ = int.__hash__\n    return I(0)\n".into()),
        ("HumanEval/13", "    import enum\n    class E(enum.IntEnum):\n        ZERO = 0\n        def __eq__(self, other):\n            return True\n        __hash__ = int.__hash__\n    return E.ZERO\n".into()),
        // A dict subclass whose items lie and whose __eq__ says yes.
        ("HumanEval/111", "    class D(dict):\n        def __eq__(self, other):\n            return True\n        def items(self):\n            return [('a', 1)]\n    return D()\n".into()),
        // A defaultdict whose default factory is the candidate's and whose items are wrong.
        ("HumanEval/111", "    import collections\n    class D(collections.defaultdict):\n        def __eq__(self, other):\n            return True\n    return D(lambda: 1)\n".into()),
        // An object of its own class whose __eq__ says yes.
        ("HumanEval/8", "    class Yes:\n        def __eq__(self, other):\n            return True\n        def __hash__(self):\n            return 0\n    return Yes()\n".into()),
    ];
    let in_process = humaneval(&samples, "in-process");
    assert_eq!(passed(&in_process), vec![true; samples.len()], "each hack is live: {in_process:#?}");
    let judged = humaneval(&samples, "judge");
    assert_eq!(passed(&judged), vec![false; samples.len()], "{judged:#?}");
    assert!(judged.iter().all(|r| r["status"] == "failed"), "{judged:#?}");
    let details: Vec<&str> = judged.iter().map(|r| r["detail"].as_str().unwrap()).collect();
    assert!(details[0].contains("candidate returned Counter():"), "{}", details[0]);
    assert!(details[2].ends_with("candidate returned 0"), "{}", details[2]);
    assert!(details[6].ends_with("candidate returned <a Yes object>"), "{}", details[6]);
}

/// A candidate whose methods forge a passing verdict wherever they run in a process
/// that holds the judge's stand-in, which only the judge's does. Its __eq__, __hash__,
/// __repr__ and __bool__ would each pass the sample if the judge ran them; __bool__, __len__
/// and __str__ are the object's to answer and run in its own process, where they find
/// no stand-in. The tests also build the candidate's class by name, as MBPP's do.
const FORGER: &str = r#"
def forge_if_in_the_judge():
    import gc, sys
    judge = sys.modules.get("passk_driver.judge")
    if judge is not None and any(type(o) is judge.StandIn for o in gc.get_objects()):
        raise judge._Stop(judge.Record("passed", "", "passed"))

class Forger:
    def __init__(self, n=0):
        self.n = n
    def __eq__(self, other):
        forge_if_in_the_judge()
        return True
    def __hash__(self):
        forge_if_in_the_judge()
        return 0
    def __repr__(self):
        forge_if_in_the_judge()
        return "Forger()"
    def __bool__(self):
        forge_if_in_the_judge()
        return True
    def __len__(self):
        forge_if_in_the_judge()
        return 1
    def __str__(self):
        forge_if_in_the_judge()
        return "forger"

def make(x):
    return Forger(x)
"#;

const FORGER_PROBLEMS: &str = r#"{"task_id": "forger/0", "prompt": "", "entry_point": "make", "test": "def check(candidate):\n    made = candidate(1)\n    assert made and len(made) == 1 and str(made) == 'forger'\n    assert {made: 1} and made in [made]\n    assert made == Forger(1), 'same class, same data'\n    assert made != Forger(2), 'same class, other data'\n    assert made == 2\n"}
"#;

#[test]
fn the_candidates_code_runs_only_in_its_own_process() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    std::fs::write(&problems, FORGER_PROBLEMS).unwrap();
    let path = dir.path().join("samples.jsonl");
    write_jsonl(&path, &[json!({"task_id": "forger/0", "completion": FORGER})]);
    let results = dir.path().join("results.jsonl");
    let run = finish(
        passk(["evaluate"]).arg(&path).arg("--problems").arg(&problems).args(["--k", "1", "--results"]).arg(&results),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let result = &read_jsonl(&results)[0];
    assert_eq!(result["status"], "failed", "{result}");
    let detail = result["detail"].as_str().unwrap();
    assert!(detail.starts_with("line 7: assert made == 2"), "only the last assert failed: {detail}");
}

/// Guards against a handle's `__contains__` deciding `in`: one that says yes to
/// everything passes `assert "needle" in answer` in process; in the judge `in` iterates
/// the object and compares each item itself.
#[test]
fn what_a_handle_contains_is_decided_by_iterating_it() {
    let problem = json!({"task_id": "contains/0", "prompt": "def words(text):\n", "entry_point": "words",
        "canonical_solution": "    return text.split()\n",
        "test": "def check(candidate):\n    assert 'needle' in candidate('hay needle')\n    assert 'hay' in candidate('hay needle')\n"});
    let cheat = "    class Everything:\n        def __contains__(self, item):\n            return True\n        def __iter__(self):\n            return iter(())\n    return Everything()\n";
    let honest = "    class Words:\n        def __init__(self, words):\n            self.words = words\n        def __iter__(self):\n            return iter(self.words)\n    return Words(text.split())\n";
    let dir = tempfile::tempdir().unwrap();
    the_judge_fails_a_cheat_that_passes_in_process(dir.path(), problem, cheat, honest);
}

/// Guards against malformed handle frames, written by hand, reaching the harness as
/// infrastructure errors: each is the candidate's own `error`.
#[test]
fn malformed_handles_are_the_candidates_error() {
    let frame = |body: &str| {
        format!(
            "    import os, struct, time\n    body = {body}\n    payload = b'U' + struct.pack('>I', 2) + b'S' + struct.pack('>I', 6) + b'return' + body\n    os.write(4, struct.pack('>I', len(payload)) + payload)\n    time.sleep(30)\n"
        )
    };
    let int = "b'I' + struct.pack('>I', 1) + b'\\x05'";
    let samples: Vec<(&str, String)> = vec![
        // A handle to something that is not one of the kinds.
        ("HumanEval/0", frame(&format!("b'H' + {int} + b'S' + struct.pack('>I', 4) + b'bomb' + b'S' + struct.pack('>I', 1) + b'X' + b'N'"))),
        // A handle back to an object of the judge's it never sent.
        ("HumanEval/0", frame(&format!("b'h' + {int}"))),
        // A type by name that does not cross by name.
        ("HumanEval/0", frame("b'J' + b'S' + struct.pack('>I', 2) + b'os' + b'S' + struct.pack('>I', 6) + b'system'")),
        // A numpy array of objects as raw bytes.
        ("HumanEval/0", frame("b'A' + struct.pack('>I', 8) + bytes(8) + b'S' + struct.pack('>I', 3) + b'|O8' + b'U' + struct.pack('>I', 1) + b'I' + struct.pack('>I', 1) + b'\\x01'")),
    ];
    let results = humaneval(&samples, "judge");
    for result in &results {
        assert_eq!(result["status"], "error", "{result}");
        assert!(result["detail"].as_str().unwrap().starts_with("sent the judge an unreadable answer"), "{result}");
    }
}

/// Guards against numpy answers, which EvalPlus accepts, failing as "not plain data":
/// a numpy.int64 and a list of numpy.float64 cross as numpy values, and EvalPlus's
/// comparison takes them. Needs an interpreter with numpy (CI's /usr/bin/python3).
#[test]
fn numpy_answers_cross_to_a_suite_of_calls() {
    let python = Path::new("/usr/bin/python3");
    let has_numpy = std::process::Command::new(python).args(["-c", "import numpy"]).status().is_ok_and(|s| s.success());
    if !has_numpy {
        eprintln!("skipped: /usr/bin/python3 cannot import numpy");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        json!({"task_id": "HumanEval/901", "completion": "    import numpy\n    return numpy.int64(n) + 1 if abs(n) < 2**62 else n + 1\n"}),
        json!({"task_id": "HumanEval/900", "completion": "    import numpy\n    return [numpy.float64(x) * k for x in xs]\n"}),
        json!({"task_id": "HumanEval/900", "completion": "    import numpy\n    return numpy.array(xs) * k + 1\n"}),
    ];
    let (_, results) = passk_tests::evaluate_set(
        dir.path(),
        &passk_tests::format_fixture("evalplus-humaneval.jsonl"),
        &samples,
        &["--python", "/usr/bin/python3", "--allow-package", "numpy"],
    );
    assert_eq!(passed(&results), [true, true, false], "{results:#?}");
    assert!(results[2]["detail"].as_str().unwrap().contains("returned array"), "{}", results[2]);
}

/// Guards calls whose arguments cross as marshal data and take more than a mebibyte: the
/// candidate's side refused every frame that long that was not a message (a tuple), as
/// the judge refuses a candidate's, so the canonical solution's process ended at such a
/// call, the problem had no expected outputs (`unjudgeable`) and no candidate could pass.
#[test]
fn a_call_of_more_than_a_mebibyte_of_plain_arguments_crosses() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    let large: Vec<u64> = (0..300_000).collect();
    write_jsonl(
        &problems,
        &[json!({
            "task_id": "HumanEval/952", "prompt": "def total(xs: list):\n    \"\"\"The sum of xs.\"\"\"\n",
            "entry_point": "total", "canonical_solution": "    return sum(xs)\n", "test": "", "contract": "",
            "atol": 0, "base_input": [[[1, 2]], [large]], "plus_input": [[[3]]],
        })],
    );
    let samples = [
        json!({"task_id": "HumanEval/952", "completion": "    return sum(xs)\n"}),
        json!({"task_id": "HumanEval/952", "completion": "    return sum(xs) if len(xs) < 10 else 0\n"}),
    ];
    let (_, results) =
        passk_tests::evaluate_set(dir.path(), &problems, &samples, &["--jobs", "1", "--timeout", "60", "--no-dedup"]);
    assert_eq!(results[0]["status"], "passed", "{}", results[0]);
    assert_eq!(results[1]["status"], "failed", "{}", results[1]);
    assert_eq!(results[1]["phases"][0]["failure"]["input"], 1, "{}", results[1]);
}
