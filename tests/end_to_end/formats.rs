//! Every problem format passk reads, from fixtures the project wrote in each suite's
//! published schema: canonical solutions pass, wrong answers fail on the right test with
//! the right detail, and each suite's own rules hold (EvalPlus's base and plus phases,
//! its special oracles, MBPP's integer ids, LiveCodeBench's packed private tests).

use std::path::Path;

use passk_tests::{evaluate_set, finish, format_fixture, passk, write_jsonl};
use serde_json::{json, Value};

fn canonical(problems: &Path) -> Vec<Value> {
    let out = finish(passk(["canonical", "--problems"]).arg(problems));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    out.stdout.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

fn by_task<'a>(results: &'a [Value], task_id: &str) -> &'a Value {
    results.iter().find(|r| r["task_id"] == task_id).unwrap_or_else(|| panic!("no result for {task_id}"))
}

#[test]
fn canonical_solutions_pass_in_every_format() {
    for name in [
        "mbpp.jsonl",
        "mbpp-sanitized.json",
        "evalplus-humaneval.jsonl",
        "evalplus-mbpp.jsonl",
        "apps.jsonl",
        "code-contests.jsonl",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let samples = canonical(&format_fixture(name));
        assert!(!samples.is_empty(), "{name}");
        let (_, results) = evaluate_set(dir.path(), &format_fixture(name), &samples, &[]);
        assert_eq!(results.len(), samples.len(), "{name}");
        for result in &results {
            assert_eq!(result["status"], "passed", "{name}: {result}");
        }
    }
}

#[test]
fn mbpp_takes_integer_ids_runs_setup_code_and_challenge_asserts() {
    let dir = tempfile::tempdir().unwrap();
    let problems = format_fixture("mbpp.jsonl");
    let samples = [
        json!({"task_id": 1, "completion": "def add_two(a, b):\n    return int(float(a) + float(b))"}),
        json!({"task_id": "2", "solution": "def circle_area(r):\n    return math.pi * r * r"}),
        json!({"task_id": 3, "completion": "def reverse_words(s):\n    return s"}),
    ];
    let (_, results) = evaluate_set(dir.path(), &problems, &samples, &[]);
    // The ids are the set's own, as strings; the setup code's import reached the candidate.
    assert_eq!(by_task(&results, "1")["passed"], true);
    assert_eq!(by_task(&results, "2")["passed"], true, "{}", by_task(&results, "2"));
    let wrong = by_task(&results, "3");
    assert_eq!(wrong["passed"], false);
    assert!(wrong["detail"].as_str().unwrap().contains("reverse_words"), "{wrong}");
    // The challenge assert adds 10**20 + 1, which floats cannot hold.
    let (_, results) = evaluate_set(dir.path(), &problems, &samples, &["--challenge-tests"]);
    assert_eq!(by_task(&results, "1")["passed"], false);
}

/// Regression: an MBPP failure's detail said "line 5: assert double(2) == 4", counting
/// the lines of the test function passk writes from the asserts (after the setup code),
/// which the user never sees. It names the assert by its place in the problem's list.
#[test]
fn mbpp_failures_name_the_assert_by_its_place_in_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("mbpp.jsonl");
    let asserts = ["assert double(1) == 2", "assert double(2) == 4", "assert double(3) == 6"];
    write_jsonl(
        &problems,
        &[json!({"task_id": 7, "text": "Double a number.", "code": "def double(n):\r\n    return 2 * n",
            "test_list": asserts, "test_setup_code": "import math\nLIMIT = 10", "challenge_test_list": []})],
    );
    let samples = [json!({"task_id": 7, "completion": "def double(n):\n    return 2 if n == 1 else n + 3"})];
    let (finished, results) = evaluate_set(dir.path(), &problems, &samples, &[]);
    assert_eq!(results.len(), 1, "{}", finished.stderr);
    assert_eq!(results[0]["detail"], "test 2 of 3 (assert double(2) == 4): candidate(2) returned 5", "{}", results[0]);
    // Sanitized MBPP's asserts, after its test imports, are counted alike.
    let sanitized = dir.path().join("sanitized.json");
    let problem = json!({"source_file": "x", "task_id": 7, "prompt": "Double a number.",
        "code": "def double(n):\n    return 2 * n", "test_imports": ["import math"], "test_list": asserts});
    std::fs::write(&sanitized, serde_json::to_string(&[problem]).unwrap()).unwrap();
    let samples = [json!({"task_id": 7, "completion": "def double(n):\n    return 2 * n if n < 3 else 0"})];
    let (finished, results) = evaluate_set(dir.path(), &sanitized, &samples, &[]);
    assert_eq!(results.len(), 1, "{}", finished.stderr);
    assert_eq!(results[0]["detail"], "test 3 of 3 (assert double(3) == 6): candidate(3) returned 0", "{}", results[0]);
}

/// Guards against asserts that build the candidate's own classes failing every sample
/// with a NameError in the judge, which cannot have them: they are the candidate's, and
/// reach the tests as handles.
#[test]
fn mbpp_asserts_on_the_candidates_own_classes_are_judged_through_handles() {
    let dir = tempfile::tempdir().unwrap();
    let code = "class Pair(object):\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n\n\
                def max_chain(pairs):\n    count, end = 0, float('-inf')\n    for p in sorted(pairs, key=lambda p: p.b):\n        \
                if p.a > end:\n            count, end = count + 1, p.b\n    return count\n";
    let problems = dir.path().join("pairs.jsonl");
    write_jsonl(
        &problems,
        &[json!({"task_id": 601, "text": "Find the longest chain of pairs, each starting after the last ends.",
                 "code": code, "test_setup_code": "", "challenge_test_list": [],
                 "test_list": ["assert max_chain([Pair(5, 24), Pair(15, 25), Pair(27, 40), Pair(50, 60)]) == 3"]})],
    );
    let wrong = code.replace("count + 1", "count + 2");
    let samples = [json!({"task_id": 601, "completion": code}), json!({"task_id": 601, "completion": wrong})];
    for mode in ["judge", "in-process"] {
        let (run, results) = evaluate_set(dir.path(), &problems, &samples, &["--verdicts", mode]);
        assert_eq!(
            (&results[0]["passed"], &results[1]["passed"]),
            (&json!(true), &json!(false)),
            "{mode}: {results:?}"
        );
        assert!(run.stdout.contains("pass@1"), "{mode}: {}", run.stdout);
    }
}

#[test]
fn evalplus_judges_base_and_plus_inputs_against_the_canonical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let problems = format_fixture("evalplus-humaneval.jsonl");
    let samples = [
        // Right on the base inputs, wrong on the plus input of Infinity (inf * 2 - 0 is
        // inf, but this returns nan).
        json!({"task_id": "HumanEval/900", "completion": "    return [x * k + (x - x) for x in xs]\n"}),
        // Integers beyond 64 bits cross intact; this is right.
        json!({"task_id": "HumanEval/901", "completion": "    return n + 1\n"}),
        // Any root is right for find_zero, not only the canonical solution's.
        json!({"task_id": "HumanEval/32", "completion": "    lo, hi = -1000.0, 1000.0\n    f = lambda x: sum(c * x ** i for i, c in enumerate(xs))\n    for _ in range(300):\n        mid = (lo + hi) / 2\n        if (f(lo) > 0) == (f(mid) > 0):\n            lo = mid\n        else:\n            hi = mid\n    return hi\n"}),
        // Close within EvalPlus's default 1e-6 for floats, and wrong on base.
        json!({"task_id": "HumanEval/902", "completion": "    return sum(xs) / len(xs) + 1e-9\n"}),
        json!({"task_id": "HumanEval/902", "completion": "    return sum(xs) / (len(xs) + 1)\n"}),
    ];
    let (run, results) = evaluate_set(dir.path(), &problems, &samples, &[]);
    assert!(run.stderr.contains("computing expected outputs"), "{}", run.stderr);
    let scale = by_task(&results, "HumanEval/900");
    assert_eq!((scale["base_passed"].clone(), scale["passed"].clone()), (json!(true), json!(false)), "{scale}");
    assert_eq!(scale["phases"][1]["failure"]["input"], 1, "{scale}");
    assert!(scale["detail"].as_str().unwrap().starts_with("plus input 2 of 2"), "{scale}");
    assert_eq!(by_task(&results, "HumanEval/901")["passed"], true);
    assert_eq!(by_task(&results, "HumanEval/32")["passed"], true, "{}", by_task(&results, "HumanEval/32"));
    let means: Vec<&Value> = results.iter().filter(|r| r["task_id"] == "HumanEval/902").collect();
    assert_eq!(means[0]["passed"], true, "{}", means[0]);
    assert_eq!(means[1]["base_passed"], false);
    // Stopped at the first failure: the plus inputs never ran.
    assert_eq!(means[1]["phases"].as_array().unwrap().len(), 1, "{}", means[1]);

    // The summary gives pass@1 on base and plus inputs, and on base inputs alone.
    assert!(run.stdout.contains(&format!("{:<14}{:>8.4}", "pass@1", 0.625)), "{}", run.stdout);
    assert!(run.stdout.contains(&format!("{:<14}{:>8.4}", "base_pass@1", 0.875)), "{}", run.stdout);
    // Regression: the table's limits row said "3 s", --timeout, which no input is held to.
    let limits = "each input the larger of 1 s and 4 x the canonical solution's time, ";
    assert!(run.stdout.contains(&format!("{:<14}{limits}", "limits")), "{}", run.stdout);

    // The second run reads the expected outputs from the cache, and -v says so.
    let (again, _) = evaluate_set(dir.path(), &problems, &samples, &["--base-only", "-v"]);
    assert!(!again.stderr.contains("computing expected outputs"), "{}", again.stderr);
    assert!(again.stderr.contains("expected outputs of 4 problems from the cache"), "{}", again.stderr);
    // Regression: -v said expected outputs came from a cache folder, never made, for a
    // set that has none (HumanEval, MBPP).
    let add = [json!({"task_id": 1, "solution": "def add_two(a, b):\n    return a + b\n"})];
    let (plain, _) = evaluate_set(dir.path(), &format_fixture("mbpp.jsonl"), &add, &["-v"]);
    assert!(!plain.stderr.contains("from the cache"), "{}", plain.stderr);
}

/// Regression: the expected-output cache was keyed by the problem file and the
/// interpreter alone, so a passk whose driver encodes or compares outputs otherwise read
/// what an older one had stored. Outputs stored under the old key, or under another
/// passk's driver, are not read: they are computed again, and stored under this passk's
/// key, which the next run reads.
#[test]
fn evalplus_expected_outputs_stored_by_another_passk_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let problems = format_fixture("evalplus-humaneval.jsonl");
    let samples = [json!({"task_id": "HumanEval/901", "completion": "    return n + 1\n"})];
    let cache = dir.path().join("cache");
    let folders = || -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(&cache).unwrap().map(|entry| entry.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        names
    };
    let (first, _) = evaluate_set(dir.path(), &problems, &samples, &[]);
    assert!(first.stderr.contains("computing expected outputs"), "{}", first.stderr);
    let [ours] = &folders()[..] else { panic!("one cache folder: {:?}", folders()) };
    // expected-<file's SHA-256>-python<version>-passk<version>-driver<digest>
    let (old_key, driver) = ours.split_once("-passk").unwrap();
    assert!(driver.contains("-driver"), "{ours}");
    let another_driver = format!("{}{}", &ours[..ours.len() - 16], "0".repeat(16));
    assert_ne!(&another_driver, ours);
    for planted in [old_key, &another_driver] {
        copy_folder(&cache.join(ours), &cache.join(planted));
    }
    std::fs::remove_dir_all(cache.join(ours)).unwrap();

    let (second, results) = evaluate_set(dir.path(), &problems, &samples, &[]);
    // Of the set's 4 problems, only the one the samples answer is computed.
    assert!(
        second.stderr.contains("computing expected outputs: running the canonical solutions of 1 problem on"),
        "neither planted folder was read: {}",
        second.stderr
    );
    assert_eq!(results[0]["passed"], true, "{}", results[0]);
    assert!(folders().contains(ours), "{:?}", folders());
    let (third, results) = evaluate_set(dir.path(), &problems, &samples, &[]);
    assert!(!third.stderr.contains("computing expected outputs"), "this passk reads its own: {}", third.stderr);
    assert_eq!(results[0]["passed"], true, "{}", results[0]);
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn mbpp_plus_compares_sets_and_found_or_not_as_evalplus_does() {
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        // Any order of the shared elements is right, and a list passes for a tuple.
        json!({"task_id": "Mbpp/2", "solution": "def similar_elements(a, b):\n    return sorted(set(a) & set(b), reverse=True)"}),
        // A match object is not plain data; only whether there is one is compared.
        json!({"task_id": "Mbpp/900", "solution": "import re\ndef text_match_three(text):\n    return re.search('z', text)"}),
        json!({"task_id": "Mbpp/900", "solution": "def text_match_three(text):\n    return 'z' in text"}),
        json!({"task_id": "Mbpp/900", "solution": "def text_match_three(text):\n    return text"}),
    ];
    let (_, results) = evaluate_set(dir.path(), &format_fixture("evalplus-mbpp.jsonl"), &samples, &[]);
    let passed: Vec<bool> = results.iter().map(|r| r["passed"].as_bool().unwrap()).collect();
    assert_eq!(passed, [true, true, true, false], "{results:?}");
}

#[test]
fn standard_input_problems_run_as_main_and_stop_at_the_first_wrong_test() {
    let dir = tempfile::tempdir().unwrap();
    let problems = format_fixture("code-contests.jsonl");
    let samples = [
        // Wrong from the third test on (it ignores the count and doubles only one number).
        json!({"task_id": "passk_double", "solution": "import sys\nif __name__ == '__main__':\n    d = sys.stdin.read().split()\n    print(2 * int(d[1]))\n    if int(d[0]) > 1:\n        print(2 * int(d[2]))\n"}),
        // Right to the decimal: LiveCodeBench's comparison takes 0.33333333330 for 0.3333333333.
        json!({"task_id": "passk_third", "solution": "print(f'{int(input()) / 3:.10f}0')"}),
        // A runtime error names the test and the exception.
        json!({"task_id": "passk_third", "solution": "raise ValueError('nope')"}),
        // Regression: a program that does not compile was a runtime error, `failed`,
        // where in every other mode it is an `error` that says it does not compile.
        json!({"task_id": "passk_third", "solution": "print(int(input()) / 3"}),
    ];
    let (_, results) = evaluate_set(dir.path(), &problems, &samples, &[]);
    let double = &results[0];
    assert_eq!(double["passed"], false);
    assert_eq!(double["tests"], json!({"passed": 2, "run": 3, "total": 4}), "{double}");
    assert!(
        double["detail"]
            .as_str()
            .unwrap()
            .starts_with("wrong answer on test 3 of 4: printed 2 lines, expected 3 lines"),
        "{double}"
    );
    assert_eq!(results[1]["passed"], true, "{}", results[1]);
    assert!(results[2]["detail"].as_str().unwrap().contains("ValueError: nope"), "{}", results[2]);
    assert!(results[2]["detail"].as_str().unwrap().ends_with("on test 1 of 2"), "{}", results[2]);
    assert_eq!(results[2]["status"], "failed", "{}", results[2]);
    let uncompiled = &results[3];
    assert_eq!(uncompiled["status"], "error", "{uncompiled}");
    assert!(uncompiled["detail"].as_str().unwrap().starts_with("does not compile: SyntaxError"), "{uncompiled}");
    assert_eq!(uncompiled["failure"]["outcome"], "compile error", "{uncompiled}");

    // --all-tests runs every test, so the fraction passed is exact.
    let (run, results) = evaluate_set(dir.path(), &problems, &samples[..1], &["--all-tests"]);
    assert_eq!(results[0]["tests"], json!({"passed": 3, "run": 4, "total": 4}), "{}", results[0]);
    let average = format!("{:<14}{:>8.4}  test-case average\n", "tests passed", 0.75);
    assert!(run.stdout.contains(&average), "{}", run.stdout);
    // Regression: the table's limits row said "3 s", as if it bounded the whole sample.
    assert!(run.stdout.contains(&format!("{:<14}3 s per test, ", "limits")), "{}", run.stdout);
}

/// Regression: with --extract, a standard-input program given as a `completion` was cut
/// at a base model's stop sequences, as if it continued a prompt: a program with a main
/// guard ran as `import sys` alone, one with a top-level `if` stopped before it, and both,
/// right, failed.
#[test]
fn extract_keeps_a_standard_input_program_whole() {
    let dir = tempfile::tempdir().unwrap();
    let guarded = "import sys\n\ndef main():\n    data = sys.stdin.read().split()\n    t = int(data[0])\n    print('\\n'.join(str(2 * int(x)) for x in data[1:1 + t]))\n\nif __name__ == '__main__':\n    main()\n";
    let flat = "n = int(input())\nif n >= 0:\n    print(f'{n / 3:.10f}')\n";
    let samples = [
        json!({"task_id": "passk_double", "completion": guarded}),
        json!({"task_id": "passk_third", "completion": flat}),
        json!({"task_id": "passk_third", "completion": format!("Here it is:\n```python\n{flat}```\n")}),
    ];
    let (_, results) = evaluate_set(dir.path(), &format_fixture("code-contests.jsonl"), &samples, &["--extract"]);
    for (sample, result) in samples.iter().zip(&results) {
        assert_eq!(result["passed"], true, "{sample}: {result}");
        assert_ne!(result["extracted"]["rule"], "stop_sequence", "{result}");
    }
    assert_eq!(results[0]["extracted"]["code"], guarded, "{}", results[0]);
}

#[test]
fn a_checker_program_decides_problems_with_many_right_answers() {
    let dir = tempfile::tempdir().unwrap();
    let checker = dir.path().join("checker.py");
    std::fs::write(
        &checker,
        "import sys\ninput_, output, answer = (open(p).read() for p in sys.argv[1:4])\n\
         sys.exit(0 if abs(float(output) - float(answer)) < 1e-3 else 1)\n",
    )
    .unwrap();
    let samples = [
        json!({"task_id": "passk_third", "solution": "print(round(int(input()) / 3, 4))"}),
        json!({"task_id": "passk_third", "solution": "print(round(int(input()) / 3, 1))"}),
    ];
    let args = ["--checker", checker.to_str().unwrap()];
    let (_, results) = evaluate_set(dir.path(), &format_fixture("code-contests.jsonl"), &samples, &args);
    assert_eq!(results[0]["passed"], true, "{}", results[0]);
    assert_eq!(results[1]["passed"], false);
    assert!(results[1]["detail"].as_str().unwrap().contains("the checker rejected it"), "{}", results[1]);
}

#[test]
fn livecodebench_reads_packed_private_tests_and_calls_leetcode_methods() {
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        json!({"task_id": "passk_a1", "solution": "print(input().count('a'))"}),
        // Right on the public test only: the private tests, packed, catch it.
        json!({"task_id": "passk_a1", "solution": "print(3)"}),
        json!({"task_id": "passk_l1", "solution": "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n                return (seen[target - x], i)\n            seen[x] = i\n"}),
        // An answer that claims to equal everything crosses as the list it is.
        json!({"task_id": "passk_l1", "solution": "class Solution:\n    def twoSum(self, nums, target):\n        class Any(list):\n            def __eq__(self, other):\n                return True\n        return Any()\n"}),
    ];
    let (_, results) = evaluate_set(dir.path(), &format_fixture("livecodebench.jsonl"), &samples, &[]);
    let passed: Vec<bool> = results.iter().map(|r| r["passed"].as_bool().unwrap()).collect();
    assert_eq!(passed, [true, false, true, false], "{results:?}");
    assert_eq!(results[1]["tests"]["total"], 3);
    assert!(results[3]["detail"].as_str().unwrap().contains("returned []"), "{}", results[3]);
}

/// Guards against a functional test whose expected output is an int too long for Python's
/// default limit on converting text to ints (4,300 digits) making its problem
/// unjudgeable: the judge lifted the limit only once it read the inputs, which it now
/// reads after the outputs, and where it could, not at all.
#[test]
fn livecodebench_outputs_of_ints_of_thousands_of_digits_are_judged() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("livecodebench.jsonl");
    let cases = json!([
        {"input": "10\n5000", "output": format!("1{}", "0".repeat(5000)), "testtype": "functional"},
        {"input": "2\n3", "output": "8", "testtype": "functional"},
    ]);
    write_jsonl(
        &problems,
        &[json!({
            "question_title": "Power", "question_content": "Return a to the power b.", "platform": "leetcode",
            "question_id": "passk_big", "contest_id": "passk", "contest_date": "2026-01-01T00:00:00",
            "starter_code": "class Solution:\n    def power(self, a: int, b: int) -> int:\n        ",
            "difficulty": "easy", "public_test_cases": cases.to_string(), "metadata": "{\"func_name\": \"power\"}",
        })],
    );
    let samples = [
        json!({"task_id": "passk_big", "solution": "class Solution:\n    def power(self, a, b):\n        return a ** b\n"}),
        json!({"task_id": "passk_big", "solution": "class Solution:\n    def power(self, a, b):\n        return a ** b + 1\n"}),
    ];
    let (_, results) = evaluate_set(dir.path(), &problems, &samples, &[]);
    let statuses: Vec<&str> = results.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["passed", "failed"], "{results:?}");
}

#[test]
fn an_evalplus_line_of_hundreds_of_kilobytes_loads() {
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<String> = (0..20_000).map(|i| format!("[{i}]")).collect();
    let line = format!(
        r#"{{"task_id": "HumanEval/950", "prompt": "def square(n):\n", "entry_point": "square", "canonical_solution": "    return n * n\n", "test": "", "contract": "", "atol": 0, "base_input": [[Infinity]], "plus_input": [{}]}}"#,
        inputs.join(", ")
    );
    assert!(line.len() > 100_000);
    let problems = dir.path().join("big.jsonl");
    std::fs::write(&problems, format!("{line}\n")).unwrap();
    let samples = [json!({"task_id": "HumanEval/950", "completion": "    return n ** 2\n"})];
    let (_, results) = evaluate_set(dir.path(), &problems, &samples, &[]);
    assert_eq!(results[0]["passed"], true, "{}", results[0]);
    assert_eq!(results[0]["phases"][1]["passed"], 20_000);
}

/// Guards against honest APPS programs failing with a NameError where APPS passes them:
/// its harness (`run_test`, eval/testing_util.py) runs every program after imports of
/// its own (`Counter`, `List`, `heapq`'s names, ...), called or on standard input, and
/// so does passk.
#[test]
fn apps_programs_run_after_apps_own_imports() {
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        json!({"task_id": 4000, "solution": "a, b = map(int, input().split())\nprint(sum(Counter({'a': a, 'b': b}).values()))\n"}),
        json!({"task_id": 4001, "solution": "class Solution:\n    def largest(self, xs: List[int]) -> int:\n        return nlargest(1, xs)[0]\n"}),
    ];
    let (_, results) = evaluate_set(dir.path(), &format_fixture("apps.jsonl"), &samples, &[]);
    let statuses: Vec<&Value> = results.iter().map(|result| &result["status"]).collect();
    assert_eq!(statuses, ["passed", "passed"], "{results:#?}");
}

/// Guards against honest APPS programs that take or return a dict with integer keys
/// failing where APPS passes them: JSON makes a dict's keys text, and APPS's `run_test`
/// (eval/testing_util.py) makes them ints again, in a first argument that is a dict and
/// in an expected output that is one.
#[test]
fn apps_calls_get_and_are_compared_with_integer_keys_as_apps_does() {
    let dir = tempfile::tempdir().unwrap();
    let problems = dir.path().join("apps.jsonl");
    let weighted = json!({"fn_name": "weighted", "inputs": [[{"1": 2, "3": 4}]], "outputs": [14]}).to_string();
    let inverted = json!({"fn_name": "inverted", "inputs": [[[1, 2]]], "outputs": [{"2": 1}]}).to_string();
    write_jsonl(
        &problems,
        &[
            json!({"problem_id": 1, "input_output": weighted, "starter_code": "def weighted(counts):\n"}),
            json!({"problem_id": 2, "input_output": inverted, "starter_code": "def inverted(pair):\n"}),
        ],
    );
    let samples = [
        json!({"task_id": 1, "solution": "def weighted(counts):\n    return sum(k * v for k, v in counts.items())\n"}),
        json!({"task_id": 2, "solution": "def inverted(pair):\n    return {pair[1]: pair[0]}\n"}),
        // Text keys are what JSON had, not what APPS passes or compares.
        json!({"task_id": 2, "solution": "def inverted(pair):\n    return {str(pair[1]): pair[0]}\n"}),
    ];
    let (_, results) = evaluate_set(dir.path(), &problems, &samples, &["--no-dedup"]);
    let statuses: Vec<&Value> = results.iter().map(|result| &result["status"]).collect();
    assert_eq!(statuses, ["passed", "passed", "failed"], "{results:#?}");
}
