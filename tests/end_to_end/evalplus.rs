//! passk's HumanEval+ and MBPP+ verdicts against EvalPlus's own, computed by EvalPlus
//! 0.3.1's evaluation code (`tests/verdicts/evalplus_reference.py`) on the project's
//! fixtures, for candidates written to meet each of its comparison rules: exact
//! answers, floats within and beyond the tolerance, the special oracles, answers of the
//! wrong type, exceptions and time-outs.

use std::process::Command;

use passk_tests::{evalplus_wheel, evaluate_set, format_fixture, read_jsonl, repo_root};
use serde_json::{json, Value};

fn completion(task_id: &str, code: &str) -> Value {
    json!({"task_id": task_id, "completion": code})
}

fn solution(task_id: &str, code: &str) -> Value {
    json!({"task_id": task_id, "solution": code})
}

fn candidates() -> Vec<Value> {
    vec![
        completion("HumanEval/900", "    return [x * k for x in xs]\n"),
        completion("HumanEval/900", "    return [x * k + (x - x) for x in xs]\n"),
        completion("HumanEval/900", "    return [x * k * (1 + 1e-12) for x in xs]\n"),
        completion("HumanEval/900", "    return [x * k * (1 + 1e-3) for x in xs]\n"),
        completion("HumanEval/900", "    return tuple(x * k for x in xs)\n"),
        completion("HumanEval/901", "    return n + 1\n"),
        completion("HumanEval/901", "    return n + 2\n"),
        completion("HumanEval/901", "    return float(n + 1)\n"),
        completion("HumanEval/901", "    return str(n + 1)\n"),
        completion("HumanEval/32", "    lo, hi = -1000.0, 1000.0\n    f = lambda x: sum(c * x ** i for i, c in enumerate(xs))\n    for _ in range(300):\n        mid = (lo + hi) / 2\n        if (f(lo) > 0) == (f(mid) > 0):\n            lo = mid\n        else:\n            hi = mid\n    return hi\n"),
        completion("HumanEval/32", "    return 0.0\n"),
        completion("HumanEval/902", "    return sum(xs) / len(xs) + 1e-9\n"),
        completion("HumanEval/902", "    return sum(xs) / len(xs) + 1e-3\n"),
        completion("HumanEval/902", "    return sum(xs) / (len(xs) + 1)\n"),
        completion("HumanEval/902", "    raise ValueError('no')\n"),
        completion("HumanEval/902", "    return None\n"),
        completion("HumanEval/902", "    import time\n    time.sleep(5)\n"),
        completion("HumanEval/902", "    return sum(xs) / len(xs\n"),
        solution("Mbpp/2", "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"),
        solution("Mbpp/2", "def similar_elements(a, b):\n    return list(set(a) & set(b))\n"),
        solution("Mbpp/2", "def similar_elements(a, b):\n    return tuple(sorted(set(a) & set(b), reverse=True))\n"),
        solution("Mbpp/2", "def similar_elements(a, b):\n    return ()\n"),
        solution("Mbpp/900", "import re\ndef text_match_three(text):\n    return re.search('z', text)\n"),
        solution("Mbpp/900", "def text_match_three(text):\n    return 'z' in text\n"),
        solution("Mbpp/900", "def text_match_three(text):\n    return None\n"),
        solution("Mbpp/900", "def text_match_three(text):\n    return text\n"),
    ]
}

#[test]
fn humaneval_plus_and_mbpp_plus_verdicts_agree_with_evalplus() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    let mut text = std::fs::read_to_string(format_fixture("evalplus-humaneval.jsonl")).unwrap();
    text.push_str(&std::fs::read_to_string(format_fixture("evalplus-mbpp.jsonl")).unwrap());
    std::fs::write(&problems, text).unwrap();
    let candidates = candidates();
    let (_, ours) = evaluate_set(dir.path(), &problems, &candidates, &["--format", "evalplus"]);

    // numpy and psutil, which EvalPlus's checks import, come from Debian's packages.
    let reference = dir.path().join("evalplus.jsonl");
    let referenced = Command::new("/usr/bin/python3")
        .arg(repo_root().join("tests/verdicts/evalplus_reference.py"))
        .arg(evalplus_wheel())
        .arg(&problems)
        .arg(dir.path().join("samples.jsonl"))
        .arg(&reference)
        .output()
        .expect("python3 runs");
    assert!(referenced.status.success(), "evalplus_reference.py: {}", String::from_utf8_lossy(&referenced.stderr));
    let theirs = read_jsonl(&reference);
    assert_eq!(theirs.len(), candidates.len());

    let mut disagreements = Vec::new();
    for ((candidate, ours), theirs) in candidates.iter().zip(&ours).zip(&theirs) {
        if candidate["task_id"] == "HumanEval/32" {
            // EvalPlus 0.3.1's find_zero oracle never marks an input as passed, so it
            // fails every candidate, its own canonical solution too (evalplus#201); passk
            // deliberately takes any root within atol (see the README).
            assert_eq!(theirs["base_status"], "fail", "{theirs}");
            continue;
        }
        let base = theirs["base_status"] == "pass";
        let plus = base && theirs["plus_status"] == "pass";
        if ours["base_passed"] != json!(base) || ours["passed"] != json!(plus) {
            disagreements.push(json!({"candidate": candidate, "passk": ours, "evalplus": theirs}));
        }
    }
    assert!(disagreements.is_empty(), "{}", serde_json::to_string_pretty(&disagreements).unwrap());
    // The candidates meet both outcomes on both phases.
    let passed = ours.iter().filter(|result| result["passed"] == true).count();
    let base_only = ours.iter().filter(|result| result["base_passed"] == true && result["passed"] == false).count();
    assert!(passed >= 8 && base_only >= 2, "passed {passed}, base only {base_only}");
}

/// EvalPlus's comparison rules for numpy answers (`tests/interpreter/test_evalplus_compare.py`),
/// run under the system's python3, which has numpy (CI installs Debian's).
#[test]
fn evalplus_comparisons_of_numpy_answers_pass_their_unit_tests() {
    let output = Command::new("/usr/bin/python3")
        .args(["-m", "unittest", "-v"])
        .arg(repo_root().join("tests/interpreter/test_evalplus_compare.py"))
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("Ran 8 tests") && !stderr.contains("skipped"), "{stderr}");
}
