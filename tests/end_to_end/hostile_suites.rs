//! Candidates of problems whose tests are data (standard input, suites of calls) that
//! try to fake a pass: by finding the expected outputs in their own memory, which they
//! share with the warm driver they were forked from, or by leaving processes behind and
//! outlasting their limits.

use std::path::Path;

use passk_tests::{evaluate_set, format_fixture, hostile_python, processes_marked, sleeper, unique_marker};
use serde_json::{json, Value};

/// Runs `samples` one at a time on one worker, so that every sample is forked from the
/// driver that ran the ones before it.
fn evaluate(dir: &Path, problems: &Path, samples: &[Value], extra: &[&str]) -> Vec<Value> {
    let one_worker = [&["--jobs", "1", "--no-dedup"], extra].concat();
    evaluate_set(dir, problems, samples, &one_worker).1
}

/// A program for standard input that prints the output it finds paired with its input.
fn output_finder() -> String {
    format!(
        r#"{}
data = _sys.stdin.read()

def answer():
    for d in _passk_dicts():
        if d.get("input") == data and isinstance(d.get("output"), str):
            return d["output"]
    pattern = rb'"input":\s*' + _re.escape(_json.dumps(data).encode()) + rb',\s*"output":\s*' + _PASSK_STRING
    for blob in _passk_pages():
        for match in _re.finditer(pattern, blob):
            return _json.loads(match.group(1))

found = answer()
print("nothing found" if found is None else found, end="")
"#,
        hostile_python("memory.py")
    )
}

/// A LeetCode-style solution that returns the expected output it finds paired with its
/// arguments.
fn call_answer_finder() -> String {
    format!(
        r#"{}
def suites():
    for d in _passk_dicts():
        if isinstance(d.get("inputs"), str) and isinstance(d.get("expected"), str):
            yield d["inputs"], d["expected"]
    for blob in _passk_pages():
        inputs, expected = list(_passk_strings_after(b"inputs", blob)), list(_passk_strings_after(b"expected", blob))
        yield from ((i, e) for i in inputs for e in expected)

class Solution:
    def twoSum(self, nums, target):
        for inputs, expected in suites():
            try:
                pairs = list(zip(_json.loads(inputs), _json.loads(expected)))
                for text, output in pairs:
                    if [_json.loads(line) for line in text.split("\n")] == [nums, target]:
                        return _json.loads(output)
            except (ValueError, TypeError, AttributeError):
                continue
        return None
"#,
        hostile_python("memory.py")
    )
}

/// Guards against expected outputs held by the driver, whose memory every candidate is
/// forked from: a candidate found its own test's answer there and printed it.
#[test]
fn a_candidate_finds_no_expected_output_in_the_memory_it_was_forked_from() {
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        // Wrong answers first, so that a failure's detail, which shows the expected
        // output, has been through the slot before the searches run.
        json!({"task_id": "passk_double", "solution": "print(5)"}),
        json!({"task_id": "passk_double", "solution": output_finder()}),
        json!({"task_id": "passk_l1", "solution": "class Solution:\n    def twoSum(self, nums, target):\n        return [9, 9]\n"}),
        json!({"task_id": "passk_l1", "solution": call_answer_finder()}),
    ];
    let mut results = evaluate(dir.path(), &format_fixture("code-contests.jsonl"), &samples[..2], &["--timeout", "20"]);
    results.extend(evaluate(dir.path(), &format_fixture("livecodebench.jsonl"), &samples[2..], &["--timeout", "20"]));

    // The wrong answers are told what was expected: the harness has it from the judge.
    assert_eq!(results[0]["failure"]["expected"], "'2\\n10\\n'", "{}", results[0]);
    assert!(results[0]["detail"].as_str().unwrap().ends_with("printed 1 line, expected 2 lines"), "{}", results[0]);
    assert_eq!(results[2]["phases"][0]["failure"]["expected"], "[0, 1]", "{}", results[2]);
    assert!(results[2]["detail"].as_str().unwrap().ends_with("returned [9, 9], expected [0, 1]"), "{}", results[2]);

    // The searches find nothing to print or return.
    let printed = &results[1];
    assert_eq!(printed["passed"], false, "{printed}");
    assert_eq!(printed["failure"]["got"], "'nothing found'", "{printed}");
    let returned = &results[3];
    assert_eq!(returned["passed"], false, "{returned}");
    assert_eq!(returned["phases"][0]["failure"]["outcome"], "returned None", "{returned}");
}

#[test]
fn what_a_standard_input_program_leaves_running_is_killed_after_each_test() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_marker("stdio-daemon");
    let right = "import sys\nt = int(sys.stdin.readline())\nprint('\\n'.join(str(2 * int(sys.stdin.readline())) for _ in range(t)))\n";
    let samples = [json!({"task_id": "passk_double", "solution": format!("{}{right}", sleeper(&marker, true))})];
    let results = evaluate(dir.path(), &format_fixture("code-contests.jsonl"), &samples, &["--timeout", "20"]);
    assert_eq!(results[0]["passed"], true, "{}", results[0]);
    assert_eq!(results[0]["tests"], json!({"passed": 4, "run": 4, "total": 4}), "{}", results[0]);
    assert!(results[0]["duration"].as_f64().unwrap() < 20.0, "no test waited for what it left: {}", results[0]);
    assert_eq!(processes_marked(&marker), Vec::<u32>::new(), "no process outlives its test");
}

#[test]
fn a_call_that_sleeps_past_its_limit_times_out_on_that_input() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_marker("call-sleeper");
    // bump's base inputs are small; its plus input is beyond 64 bits.
    let completion = format!(
        "    import time\n    if n > 2 ** 64:\n{}        time.sleep(3600)\n    return n + 1\n",
        sleeper(&marker, false).lines().map(|line| format!("        {line}\n")).collect::<String>()
    );
    let samples = [json!({"task_id": "HumanEval/901", "completion": completion})];
    let results = evaluate(dir.path(), &format_fixture("evalplus-humaneval.jsonl"), &samples, &["--timeout", "60"]);
    let result = &results[0];
    assert_eq!(result["status"], "timeout", "{result}");
    assert_eq!(result["base_passed"], true, "{result}");
    let failure = &result["phases"][1]["failure"];
    assert!(failure["outcome"].as_str().unwrap().starts_with("was still running after 1 s"), "{result}");
    // The call's own limit ended it, not the sample's.
    assert!(result["duration"].as_f64().unwrap() < 20.0, "{result}");
    assert_eq!(processes_marked(&marker), Vec::<u32>::new(), "no process outlives its call");
}

/// Guards against a judge lost mid-sample taking with it the suites the harness believed
/// it held: the next sample of the same suite found no tests.
#[test]
fn the_sample_after_a_judge_was_lost_is_judged_on_the_same_suite() {
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        // Never ready: the judge waits for it until the phase's deadline, and is stopped.
        json!({"task_id": "HumanEval/901", "solution": "while True:\n    pass\n"}),
        json!({"task_id": "HumanEval/901", "completion": "    return n + 1\n"}),
    ];
    let results = evaluate(dir.path(), &format_fixture("evalplus-humaneval.jsonl"), &samples, &["--timeout", "2"]);
    assert_eq!(results[0]["status"], "timeout", "{}", results[0]);
    assert_eq!(results[1]["passed"], true, "{}", results[1]);
}
