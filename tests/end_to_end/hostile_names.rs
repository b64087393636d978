//! The names the tests use that only the candidate defines: what it may make of them.

use passk_tests::{finish, passk, read_jsonl, write_jsonl};
use serde_json::{json, Value};

/// MBPP/596's shape: the tests use `sys`, which only the solution imports, to compute
/// what they expect.
const MODULE_PROBLEM: &str = "def check(candidate):\n    assert candidate((1, 2, 3)) == sys.getsizeof((1, 2, 3))\n    assert candidate(('a', 'b')) == sys.getsizeof(('a', 'b'))\n";

/// Guards against a candidate answering the tests' `sys` with a class of its own whose
/// `getsizeof` agrees with its wrong entry point: the tests' own expected values then
/// came from the candidate. A name the tests use that names a standard-library module is
/// that module, imported by the judge; an honest `import sys` still passes.
#[test]
fn a_standard_library_module_the_tests_use_is_the_judges_own() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("problems.jsonl");
    let problem = json!({"task_id": "size/0", "prompt": "def tuple_size(t):\n", "entry_point": "tuple_size",
        "canonical_solution": "    import sys\n    return sys.getsizeof(t)\n", "test": MODULE_PROBLEM});
    write_jsonl(&problems, &[problem]);
    let hack = "    return 0\n\nclass sys:\n    @staticmethod\n    def getsizeof(value):\n        return 0\n";
    let honest = "    return sys.getsizeof(t)\n\nimport sys\n";
    let path = dir.path().join("samples.jsonl");
    write_jsonl(
        &path,
        &[json!({"task_id": "size/0", "completion": hack}), json!({"task_id": "size/0", "completion": honest})],
    );
    for (mode, expected) in [("in-process", [true, true]), ("judge", [false, true])] {
        let results = dir.path().join(format!("{mode}.jsonl"));
        let run = finish(
            passk(["evaluate"])
                .arg(&path)
                .arg("--problems")
                .arg(&problems)
                .args(["--k", "1", "--no-dedup", "--verdicts", mode, "--results"])
                .arg(&results),
        );
        assert_eq!(run.code, Some(0), "{mode}: {}", run.stderr);
        let results = read_jsonl(&results);
        let passed: Vec<bool> = results.iter().map(|r: &Value| r["passed"].as_bool().unwrap()).collect();
        assert_eq!(passed, expected, "{mode}: {results:#?}");
    }
}
