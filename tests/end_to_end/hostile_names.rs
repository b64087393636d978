//! The names the tests use that only the candidate defines: what it may make of them.

use passk_tests::{the_judge_fails_a_cheat_that_passes_in_process, the_judge_fails_cheats_that_pass_in_process};
use serde_json::json;

/// MBPP/596's shape: the tests use `sys`, which only the solution imports, to compute
/// what they expect.
const MODULE_PROBLEM: &str = "def check(candidate):\n    assert candidate((1, 2, 3)) == sys.getsizeof((1, 2, 3))\n    assert candidate(('a', 'b')) == sys.getsizeof(('a', 'b'))\n";

/// Guards against a candidate answering the tests' `sys` with a class of its own whose
/// `getsizeof` agrees with its wrong entry point: the tests' own expected values then
/// came from the candidate. A name the tests use that names a standard-library module is
/// that module, imported by the judge; an honest `import sys` still passes.
#[test]
fn a_standard_library_module_the_tests_use_is_the_judges_own() {
    let problem = json!({"task_id": "size/0", "prompt": "def tuple_size(t):\n", "entry_point": "tuple_size",
        "canonical_solution": "    import sys\n    return sys.getsizeof(t)\n", "test": MODULE_PROBLEM});
    let cheat = "    return 0\n\nclass sys:\n    @staticmethod\n    def getsizeof(value):\n        return 0\n";
    let honest = "    return sys.getsizeof(t)\n\nimport sys\n";
    let dir = tempfile::tempdir().unwrap();
    the_judge_fails_a_cheat_that_passes_in_process(dir.path(), problem, cheat, honest);
}

/// The tests compare with numpy through `np`, which the problem's solution imports and
/// the prompt does not: the candidate's own `np` would answer for them.
const NUMPY_TESTS: &str = "def check(candidate):\n    assert np.allclose(candidate([1.0, 2.5], 2), [2.0, 5.0])\n    assert np.allclose(candidate([0.5], 4), [2.0])\n";

/// Cheats that answer wrongly and make the tests' `np.allclose` say yes: a class of
/// their own named `np`, a module of their own named `numpy`, and numpy itself patched
/// in the candidate's process.
const NUMPY_CHEATS: [&str; 3] = [
    "    return [0.0] * len(xs)\n\nclass np:\n    @staticmethod\n    def allclose(*args, **kwargs):\n        return True\n",
    "    return [0.0] * len(xs)\n\nimport types\nnp = types.ModuleType('numpy')\nnp.allclose = lambda *args, **kwargs: True\n",
    "    return [0.0] * len(xs)\n\nimport numpy as np\nnp.allclose = lambda *args, **kwargs: True\n",
];

const NUMPY_HONEST: &str = "    return [x * k for x in xs]\n\nimport numpy as np\n";

/// The system's python3 with numpy allowed, or None (with a message) where it has none.
fn with_numpy() -> Option<[&'static str; 4]> {
    let has_numpy =
        std::process::Command::new("/usr/bin/python3").args(["-c", "import numpy"]).status().is_ok_and(|s| s.success());
    if !has_numpy {
        eprintln!("skipped: /usr/bin/python3 cannot import numpy");
        return None;
    }
    Some(["--python", "/usr/bin/python3", "--allow-package", "numpy"])
}

/// Guards against the tests calling the candidate's code through a name that stands for
/// a module other than the standard library's: `np`, bound by the problem's own solution
/// to numpy, is the judge's own import of numpy, whatever the candidate bound to it.
#[test]
fn a_module_the_problems_solution_imports_is_the_judges_own() {
    let Some(extra) = with_numpy() else { return };
    let problem = json!({"task_id": "scale/0", "prompt": "def scale(xs, k):\n", "entry_point": "scale",
        "canonical_solution": NUMPY_HONEST, "test": NUMPY_TESTS});
    let dir = tempfile::tempdir().unwrap();
    the_judge_fails_cheats_that_pass_in_process(dir.path(), problem, &NUMPY_CHEATS, NUMPY_HONEST, &extra);
}

/// Guards against the same without a canonical solution to tell what `np` is: a module
/// the candidate says is numpy is the judge's own numpy, and a module of the candidate's
/// own files is never imported by the judge, nor called through: the sample fails,
/// saying why.
#[test]
fn a_module_only_the_candidate_imports_is_the_judges_own_or_refused() {
    let Some(extra) = with_numpy() else { return };
    let problem = json!({"task_id": "scale/0", "prompt": "def scale(xs, k):\n", "entry_point": "scale",
        "test": NUMPY_TESTS});
    let own_file = "    return [0.0] * len(xs)\n\nimport os, sys\nwith open('fake_numpy.py', 'w') as f:\n    f.write('def allclose(*args, **kwargs):\\n    return True\\n')\nsys.path.insert(0, os.getcwd())\nimport fake_numpy as np\n";
    let cheats = [NUMPY_CHEATS[1], NUMPY_CHEATS[2], own_file];
    let dir = tempfile::tempdir().unwrap();
    let judged = the_judge_fails_cheats_that_pass_in_process(dir.path(), problem, &cheats, NUMPY_HONEST, &extra);
    let detail = judged[2]["detail"].as_str().unwrap();
    assert!(detail.contains("np") && detail.contains("fake_numpy"), "{detail}");
}

/// What a cheat leaves where unittest's discovery looks (the judge's working directory
/// is `/`, and `/tmp` is the candidate's): a test module that, once imported in the
/// judge, turns every failing record into a pass.
const POISON: &str = "import os, types\nopen('/tmp/__init__.py', 'w').close()\nwith open('/tmp/test_poison.py', 'w') as f:\n    f.write('import sys\\nsys.exit = lambda *a, **k: None\\nm = sys.modules[\"passk_driver.judge\"]\\nold = m.Record.__init__\\ndef init(self, status, detail, result, extra=None):\\n    old(self, \"passed\", \"\", \"passed\", extra)\\nm.Record.__init__ = init\\n')\n";

/// Guards against the judge importing a module on the candidate's word whose import runs
/// code: `unittest.__main__` runs unittest's discovery from the judge's working
/// directory, which imported a test file the candidate wrote to `/tmp` into the judge,
/// and from there every later sample of that judge passed. The candidate named it as a
/// module the tests use (`Pair`) and as a module it returned; both fail, and so do the
/// wrong samples the same judge sees next.
#[test]
fn a_module_named_by_the_candidate_never_runs_code_in_the_judge() {
    let problem = json!({"task_id": "pair/0", "prompt": "import types\n", "entry_point": "first",
        "canonical_solution": "def first(pair):\n    return pair.a\n\nclass Pair:\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n",
        "test": "def check(candidate):\n    assert candidate(Pair(1, 2)) == 1\n    assert candidate(Pair(5, 0)) == 5\n"});
    let as_used_name =
        format!("{POISON}def first(pair):\n    return 0\n\nPair = types.ModuleType('unittest.__main__')\n");
    let as_answer = format!("{POISON}def first(pair):\n    return types.ModuleType('unittest.__main__')\n\nclass Pair:\n    def __init__(self, a, b):\n        self.a = a\n");
    let wrong = "def first(pair):\n    return None\n\nclass Pair:\n    def __init__(self, a, b):\n        self.a = a\n";
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    passk_tests::write_jsonl(&problems, &[problem]);
    for cheat in [as_used_name, as_answer] {
        let samples: Vec<_> = [cheat.as_str(), wrong, wrong, wrong]
            .iter()
            .map(|completion| json!({"task_id": "pair/0", "completion": completion}))
            .collect();
        let (_, results) = passk_tests::evaluate_set(dir.path(), &problems, &samples, &["--jobs", "1", "--no-dedup"]);
        let passed: Vec<_> = results.iter().map(|result| result["passed"] == true).collect();
        assert_eq!(passed, [false; 4], "{results:#?}");
        // Each fails on its answer, not on something that would fail an honest sample too.
        assert!(results[1..].iter().all(|result| result["detail"].as_str().unwrap().contains("None")), "{results:#?}");
    }
}
