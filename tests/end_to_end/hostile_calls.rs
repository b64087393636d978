//! Candidates of suites of calls that abuse the calls the judge sends ahead of the answer
//! it awaits (`sandbox/passk_driver/calls.py`): answering before being asked, flooding
//! the judge while reading nothing, hanging or exiting with calls in flight. Each gets the
//! verdict it deserves, and the run ends. And the canonical solution's calls, recorded
//! with calls in flight too, set each input's limit by that input's own time.

use std::path::Path;

use passk_tests::{evaluate_set, write_jsonl};
use serde_json::{json, Value};

/// More inputs than the judge sends ahead, so that calls are in flight throughout.
const INPUTS: u64 = 100;

/// An EvalPlus problem, `double(n)`, whose base inputs are 0 to 99 and plus input 100.
fn problems(dir: &Path) -> std::path::PathBuf {
    problems_solved_by(dir, "    return 2 * n\n")
}

fn problems_solved_by(dir: &Path, canonical_solution: &str) -> std::path::PathBuf {
    let path = dir.join("problems.jsonl");
    let base: Vec<Value> = (0..INPUTS).map(|n| json!([n])).collect();
    write_jsonl(
        &path,
        &[json!({
            "task_id": "HumanEval/950", "prompt": "def double(n: int):\n    \"\"\"Return 2 * n.\"\"\"\n",
            "entry_point": "double", "canonical_solution": canonical_solution, "test": "", "contract": "",
            "atol": 0, "base_input": base, "plus_input": [[INPUTS]],
        })],
    );
    path
}

fn judged(completion: &str) -> Value {
    let result = judged_on(problems, "HumanEval/950", completion, &[]);
    // However it ended, it ended by its own input's limit, not the sample's.
    assert!(result["duration"].as_f64().unwrap() < 30.0, "{result}");
    result
}

/// The result of `completion` for problem `task_id` of the set `problems` writes, with
/// one worker, a sample's limit of 60 s and `extra` arguments.
fn judged_on(problems: fn(&Path) -> std::path::PathBuf, task_id: &str, completion: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let samples = [json!({"task_id": task_id, "completion": completion})];
    let args: Vec<&str> = ["--jobs", "1", "--timeout", "60"].iter().chain(extra).copied().collect();
    evaluate_set(dir.path(), &problems(dir.path()), &samples, &args).1.into_iter().next().unwrap()
}

/// Python that makes `frames`: the frames of the answer `("return", value)` to each int of
/// the expression `values`, for the candidate to write on its end of its line to the judge.
fn answer_frames(values: &str) -> String {
    padded_answer_frames(values, 0)
}

/// `answer_frames`, each int's bytes led by `padding` zero bytes, which leave its value
/// as it is and make its frame that much longer.
fn padded_answer_frames(values: &str, padding: usize) -> String {
    format!(
        "    import os\n    def frame(value):\n        data = b'\\x00' * {padding} + value.to_bytes((value.bit_length() + 8) // 8, 'big', signed=True)\n        payload = b'U\\x00\\x00\\x00\\x02S\\x00\\x00\\x00\\x06returnI' + len(data).to_bytes(4, 'big') + data\n        return len(payload).to_bytes(4, 'big') + payload\n    frames = b''.join(frame(value) for value in {values})\n"
    )
}

/// Guards against answers taken for calls the candidate had not yet been sent: every
/// right answer written at the first call, before any other was read, would pass.
#[test]
fn answers_written_before_their_calls_were_made_do_not_count() {
    let completion = format!(
        "{}    os.write(4, frames)\n    import time\n    time.sleep(3600)\n",
        answer_frames(&format!("(2 * m for m in range(n, n + {INPUTS}))"))
    );
    let result = judged(&completion);
    assert_eq!(result["status"], "error", "{result}");
    assert!(result["detail"].as_str().unwrap().contains("an answer that came before its call was made"), "{result}");
    assert_eq!(result["passed"], false, "{result}");
}

/// Guards against answers taken for calls the judge wrote while the answers waited in the
/// pipe unread: the judge counted as come before a call only the bytes it had read, and
/// reads at most 64 KiB at a time, so every right answer written at the first call, 4 KiB
/// each into a pipe made large enough to take them all (F_SETPIPE_SZ), passed.
#[test]
fn answers_written_before_their_calls_and_left_in_the_pipe_do_not_count() {
    let completion = format!(
        "{}    import fcntl\n    fcntl.fcntl(4, 1031, 1 << 19)\n    os.write(4, frames)\n    import time\n    time.sleep(3600)\n",
        padded_answer_frames(&format!("(2 * m for m in range(n, n + {INPUTS}))"), 4096)
    );
    let result = judged(&completion);
    assert_eq!(result["status"], "error", "{result}");
    assert!(result["detail"].as_str().unwrap().contains("an answer that came before its call was made"), "{result}");
    assert_eq!(result["passed"], false, "{result}");
}

/// A candidate that floods the judge with answers, reading nothing, is stopped at the
/// second input: its first answer, 0, is double(0); the second, 0 again, answers the call
/// that went with the first, wrongly; the judge reads no more.
#[test]
fn a_candidate_that_floods_answers_and_reads_nothing_is_stopped_at_the_second() {
    let completion = format!("{}    while True:\n        os.write(4, frames * 100)\n", answer_frames("[0]"));
    let result = judged(&completion);
    assert_eq!(result["status"], "failed", "{result}");
    let phase = &result["phases"][0];
    assert_eq!((phase["passed"].as_u64(), phase["run"].as_u64()), (Some(1), Some(2)), "{result}");
}

#[test]
fn a_call_that_sleeps_past_its_limit_with_calls_in_flight_times_out_on_that_input() {
    let result = judged("    if n == 40:\n        import time\n        time.sleep(3600)\n    return 2 * n\n");
    assert_eq!(result["status"], "timeout", "{result}");
    let phase = &result["phases"][0];
    assert!(phase["failure"]["outcome"].as_str().unwrap().starts_with("was still running after 1 s"), "{result}");
    assert_eq!((phase["passed"].as_u64(), phase["run"].as_u64()), (Some(40), Some(41)), "{result}");
    assert_eq!(phase["failure"]["input"], 40, "{result}");
}

/// Guards the deadline against an answer that never ends and never lets the judge wait:
/// the judge reads what has come before it waits, so a streamed answer whose empty parts
/// always fill the pipe, and so never outgrow the judge's budget, must still end at the
/// input's limit rather than at the sample's.
#[test]
fn an_answer_streamed_in_empty_parts_without_end_times_out_on_that_input() {
    let result = judged(
        "    import os\n    if n == 40:\n        def frame(payload):\n            return len(payload).to_bytes(4, 'big') + payload\n        os.write(4, frame(b'U\\x00\\x00\\x00\\x01S\\x00\\x00\\x00\\x08streamed'))\n        parts = frame(b'+') * 10000\n        while True:\n            os.write(4, parts)\n    return 2 * n\n",
    );
    assert_eq!(result["status"], "timeout", "{result}");
    let phase = &result["phases"][0];
    assert!(phase["failure"]["outcome"].as_str().unwrap().starts_with("was still running after 1 s"), "{result}");
    assert_eq!((phase["passed"].as_u64(), phase["run"].as_u64()), (Some(40), Some(41)), "{result}");
}

#[test]
fn a_call_that_exits_with_calls_in_flight_ends_the_sample_as_an_exit() {
    let result = judged("    if n == 40:\n        import os\n        os._exit(3)\n    return 2 * n\n");
    assert_eq!(result["status"], "error", "{result}");
    assert!(result["detail"].as_str().unwrap().contains("status 3"), "{result}");
    let phase = &result["phases"][0];
    assert_eq!((phase["passed"].as_u64(), phase["run"].as_u64()), (Some(40), Some(41)), "{result}");
}

#[test]
fn every_input_is_judged_with_calls_in_flight() {
    let result = judged("    return 2 * n if n % 2 else n + n\n");
    assert_eq!(result["passed"], true, "{result}");
    assert_eq!(result["tests"], json!({"passed": INPUTS + 1, "run": INPUTS + 1, "total": INPUTS + 1}), "{result}");
}

/// The canonical solution's calls go ahead of the answers too, so the judge cannot time
/// them: each recorded time is the one its own process measured, and sets that input's
/// limit alone (EvalPlus's max(1 s, 4 x its time)).
#[test]
fn each_input_is_limited_by_the_canonical_solutions_own_time_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let sleeping_at = |at: u64, seconds: f64| {
        format!("    if n == {at}:\n        import time\n        time.sleep({seconds})\n    return 2 * n\n")
    };
    let problems = problems_solved_by(dir.path(), &sleeping_at(40, 0.5));
    let samples = [
        json!({"task_id": "HumanEval/950", "completion": sleeping_at(40, 1.5)}),
        json!({"task_id": "HumanEval/950", "completion": sleeping_at(41, 1.5)}),
    ];
    let results = evaluate_set(dir.path(), &problems, &samples, &["--jobs", "1", "--timeout", "60", "--no-dedup"]).1;
    // Input 40 took the canonical solution 0.5 s: 1.5 s is within its 2 s.
    assert_eq!(results[0]["passed"], true, "{}", results[0]);
    // Input 41 took it nothing: 1 s is its limit.
    assert_eq!(results[1]["status"], "timeout", "{}", results[1]);
    let failure = &results[1]["phases"][0]["failure"];
    assert_eq!(failure["input"], 41, "{failure}");
    assert!(failure["outcome"].as_str().unwrap().starts_with("was still running after 1 s"), "{failure}");
}

/// Guards against a slow input passing on time borrowed from the inputs before it: with
/// calls sent ahead and each input charged from when the judge was done with the answer
/// before, a candidate started a later input in a thread as soon as its call came and held
/// back the answers before it, each within its own limit (an input of 5 s passed under a
/// limit of 1 s). Input 40 takes this candidate 1.5 s; it reads whatever calls have come
/// into its own buffer and starts input 40 in a thread the moment it finds that call, then
/// holds back each answer before it for 0.5 s, within its limit as counted then, for the
/// thread to finish. Charged from when their calls were written, those answers are late;
/// the phase is judged again one call at a time, where no call can be seen early, and
/// input 40 times out. On a loaded machine the judge may send too few calls ahead for the
/// candidate to see input 40's early (it then simply times out there, as the first
/// assertions require every time); the attack is tried until it is made, three times at
/// most.
#[test]
fn a_slow_input_worked_on_ahead_in_a_thread_times_out() {
    let completion = "    import gc, os, threading, time\n    state = globals()\n    if n == 40:\n        if 'ahead' in state:\n            state['ahead'].join()\n            return state['answer']\n        time.sleep(1.5)\n        return 80\n    if 'channel' not in state:\n        state['channel'] = [o for o in gc.get_objects() if type(o).__name__ == 'Channel'][0]\n    if 'ahead' not in state:\n        channel = state['channel']\n        os.set_blocking(3, False)\n        try:\n            chunk = os.read(3, 1 << 16)\n            channel.buffer = bytes(channel.buffer) + chunk\n            channel._arrived(len(chunk))\n        except BlockingIOError:\n            pass\n        os.set_blocking(3, True)\n        if b'\\x5b\\x01\\x00\\x00\\x00\\x69\\x28\\x00\\x00\\x00' in bytes(channel.buffer):\n            def work():\n                time.sleep(1.5)\n                state['answer'] = 80\n            state['ahead'] = threading.Thread(target=work)\n            state['ahead'].start()\n    if 'ahead' in state:\n        time.sleep(0.5)\n    return 2 * n\n";
    let mut made = false;
    for _ in 0..3 {
        let result = judged(completion);
        assert_eq!(result["status"], "timeout", "{result}");
        let phase = &result["phases"][0];
        assert_eq!(phase["failure"]["input"], 40, "{result}");
        made = phase["one_at_a_time"] == true;
        if made {
            break;
        }
    }
    assert!(made, "the candidate never saw input 40's call early in three tries");
}

/// An EvalPlus problem, `double(n, pad)`, whose base inputs are each n from 0 to 59 with a
/// list of 3,000 ints: each call's frame is about 15 KB, far more than a pipe of one page.
fn padded_problems(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("problems.jsonl");
    let pad: Vec<u64> = (0..3000).collect();
    let base: Vec<Value> = (0..60).map(|n| json!([n, pad])).collect();
    write_jsonl(
        &path,
        &[json!({
            "task_id": "HumanEval/951", "prompt": "def double(n: int, pad: list):\n    \"\"\"Return 2 * n.\"\"\"\n",
            "entry_point": "double", "canonical_solution": "    return 2 * n\n", "test": "", "contract": "",
            "atol": 0, "base_input": base, "plus_input": [[100, [1]]],
        })],
    );
    path
}

/// Guards against a slow input passing on time borrowed from the call before it, seen by
/// the first bytes of its call: each input was charged from when its call was written
/// whole, so a candidate that shrank its end of the pipe to one page (F_SETPIPE_SZ) read
/// the head of the next call while the judge still held its tail, started that input in a
/// thread, and held back the answer before it (within its limit): the tail, and so the
/// charge, came only when it next read, and an input of 1.5 s passed under a limit of 1 s.
/// Charged from when the first byte of its call was written, that answer is late; the
/// phase is judged again one call at a time, and input 40 times out.
#[test]
fn a_slow_input_begun_from_the_head_of_its_call_times_out() {
    let completion = "    import fcntl, gc, os, threading, time\n    state = globals()\n    if 'channel' not in state:\n        fcntl.fcntl(3, 1031, 4096)\n        state['channel'] = [o for o in gc.get_objects() if type(o).__name__ == 'Channel'][0]\n    if n == 40:\n        if 'ahead' in state:\n            state['ahead'].join()\n            return state['answer']\n        time.sleep(1.5)\n        return 80\n    if 'ahead' not in state:\n        channel = state['channel']\n        os.set_blocking(3, False)\n        try:\n            while len(channel.buffer) < 16:\n                chunk = os.read(3, 16 - len(channel.buffer))\n                if not chunk:\n                    break\n                channel.buffer = bytes(channel.buffer) + chunk\n                channel._arrived(len(chunk))\n        except BlockingIOError:\n            pass\n        os.set_blocking(3, True)\n        if bytes(channel.buffer)[4:16] == b'M\\x00\\x5b\\x02\\x00\\x00\\x00\\x69\\x28\\x00\\x00\\x00':\n            def work():\n                time.sleep(1.5)\n                state['answer'] = 80\n            state['ahead'] = threading.Thread(target=work)\n            state['ahead'].start()\n            time.sleep(0.8)\n    return 2 * n\n";
    let result = &judged_on(padded_problems, "HumanEval/951", completion, &[]);
    assert_eq!(result["status"], "timeout", "{result}");
    let phase = &result["phases"][0];
    assert_eq!(phase["one_at_a_time"], true, "{result}");
    assert_eq!(phase["failure"]["input"], 40, "{result}");
}

/// Calls do go ahead, so that the test above tries what it says: at input 30 the
/// candidate finds a later call already in its buffer or its pipe.
#[test]
fn a_candidate_sees_calls_ahead_of_the_answer_awaited() {
    let completion = "    import gc, select, time\n    if n == 30:\n        time.sleep(0.2)\n        buffers = [bytes(o.buffer) for o in gc.get_objects() if type(o).__name__ == 'Channel']\n        if any(b'\\x5b\\x01\\x00\\x00\\x00\\x69\\x1f\\x00\\x00\\x00' in buffer for buffer in buffers) or select.select([3], [], [], 0)[0]:\n            return -1\n    return 2 * n\n";
    let result = judged(completion);
    assert_eq!(result["status"], "failed", "{result}");
    assert_eq!(result["phases"][0]["failure"]["input"], 30, "{result}");
}

/// Guards against a wrong answer lost to the phase judged again: with --all-tests a failed
/// input does not end the phase, so a candidate that answered wrongly while its calls went
/// ahead, and then held back an answer past its limit after its call (within its limit of
/// the answer before), had the phase judged again one call at a time, where it answered
/// rightly; that run's pass stood. A candidate judged again finds the first run's record,
/// which input it failed and what it answered, in the driver's frames, which its process
/// inherits: it could so have a second try at each input it got wrong. Here it answers
/// input 3 wrongly only where it finds later calls already come; judged again, it answers
/// every input rightly, and input 3's wrong answer still fails the sample.
#[test]
fn a_wrong_answer_given_with_calls_ahead_stands_when_the_phase_is_judged_again() {
    let completion = "    import gc, select, time\n    state = globals()\n    if n == 3:\n        time.sleep(0.3)\n        buffers = [bytes(o.buffer) for o in gc.get_objects() if type(o).__name__ == 'Channel']\n        if any(buffers) or select.select([3], [], [], 0)[0]:\n            state['ahead'] = True\n            return -1\n    if n == 4 and state.get('ahead'):\n        time.sleep(0.85)\n    return 2 * n\n";
    let result = &judged_on(problems, "HumanEval/950", completion, &["--all-tests"]);
    assert_eq!(result["status"], "failed", "{result}");
    let phase = &result["phases"][0];
    assert_eq!(phase["one_at_a_time"], true, "{result}");
    assert_eq!(phase["failure"]["input"], 3, "{result}");
    assert!(phase["failure"]["outcome"].as_str().unwrap().starts_with("returned -1"), "{result}");
    assert_eq!(phase["failure"]["expected"], "6", "{result}");
    // Every other input passed, and each counts once.
    assert_eq!(result["tests"], json!({"passed": INPUTS, "run": INPUTS + 1, "total": INPUTS + 1}), "{result}");
}

/// An honest candidate far slower than the canonical solution on every input (30 ms where
/// it took microseconds) passes, and its calls go ahead only as far as its own pace keeps
/// each within its limit: it is never judged a second time.
#[test]
fn a_candidate_slower_than_the_canonical_solution_passes_at_its_own_pace() {
    let result = judged("    import time\n    time.sleep(0.03)\n    return 2 * n\n");
    assert_eq!(result["passed"], true, "{result}");
    assert!(result["phases"].as_array().unwrap().iter().all(|phase| phase.get("one_at_a_time").is_none()), "{result}");
}

/// An honest candidate that turns slow part-way, after its pace let calls go far ahead,
/// has those calls' answers come late through no fault of its own: judged again one call at
/// a time, it passes.
#[test]
fn a_candidate_that_turns_slow_part_way_is_judged_again_and_passes() {
    let result = judged("    import time\n    if 20 <= n < 40:\n        time.sleep(0.25)\n    return 2 * n\n");
    assert_eq!(result["passed"], true, "{result}");
    assert_eq!(result["phases"][0]["one_at_a_time"], true, "{result}");
}

/// Guards the harness's patience with a phase judged twice: it waited for a sample of calls
/// as long as each phase's limit once, and margins, so a candidate that spent most of its
/// phase's time loading (18 s of 21 s here) and then answered two calls sent together in
/// 0.55 s each, each within its limit, was judged again, took that time twice, and the
/// harness gave up on the worker as stuck: twice, then `infrastructure`, and the run
/// reported no pass@k (a sample that would fail could so be left out). Given its phases'
/// time twice over, it passes.
#[test]
fn a_candidate_judged_again_after_a_long_load_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("problems.jsonl");
    let base: Vec<Value> = (0..20).map(|n| json!([n])).collect();
    write_jsonl(
        &path,
        &[json!({
            "task_id": "HumanEval/953", "prompt": "def double(n: int):\n    \"\"\"Return 2 * n.\"\"\"\n",
            "entry_point": "double", "canonical_solution": "    return 2 * n\n", "test": "", "contract": "",
            "atol": 0, "base_input": base, "plus_input": [[20]],
        })],
    );
    let completion = "    import time\n    if n < 2:\n        time.sleep(0.55)\n    return 2 * n\nimport time as _time\n_time.sleep(18)\n";
    let samples = [json!({"task_id": "HumanEval/953", "completion": completion})];
    let results = evaluate_set(dir.path(), &path, &samples, &["--jobs", "1", "--timeout", "60", "--base-only"]).1;
    let result = &results[0];
    assert_eq!(result["status"], "passed", "{result}");
    assert_eq!(result["phases"][0]["one_at_a_time"], true, "{result}");
}
