//! The names the tests use that only the candidate defines: what it may make of them.

use passk_tests::the_judge_fails_a_cheat_that_passes_in_process;
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
