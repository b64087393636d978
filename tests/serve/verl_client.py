"""A trainer's reward calls against a run_code server, as verl makes them.

verl's SandboxFusion reward (verl/utils/reward_score/sandbox_fusion/utils.py) sends one
POST per test case with this exact body and these headers, gives each call compile +
run + 10 seconds, retries an HTTP 504 alone (three attempts, waiting 1 s then 2 s) and
takes any other error as final. It then reads the answer: SandboxError and a failed
call are -1, a compile error -4, a run that timed out -3, another failed run -2, and a
finished run passes when its output, trailing newlines stripped, is the expected one.
This script does the same, with verl's default concurrency (64 calls at once, from a
pool of max(32, 5 x CPUs) threads), so that passk is tested as the trainer drives it.

    verl_client.py URL CASES.jsonl ANSWERS.jsonl

Each case is {"id", "code", "language", "stdin", "expected_output", "timeout"}; each
answer line is {"id", "result", "status", "attempts", "api_error"}. A last line on
standard output gives the calls made, the seconds they took and the 504s retried.
"""

import concurrent.futures
import json
import os
import sys
import threading
import time

import requests

MAX_RETRIES = 3
INITIAL_RETRY_DELAY = 1
API_TIMEOUT = 10
MAX_CONCURRENT = 64

retried = 0
retried_lock = threading.Lock()


def call(url, code, stdin, compile_timeout, run_timeout, language):
    """One case's call, retried on 504 as verl retries it: (response, error, attempts)."""
    global retried
    payload = json.dumps(
        {
            "compile_timeout": compile_timeout,
            "run_timeout": run_timeout,
            "code": code,
            "stdin": stdin,
            "language": language,
            "files": {},
            "fetch_files": [],
        }
    )
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    request_timeout = compile_timeout + run_timeout + API_TIMEOUT
    last_error = None
    for attempt in range(MAX_RETRIES):
        try:
            response = requests.post(url, headers=headers, data=payload, timeout=request_timeout)
            if response.status_code == 504:
                last_error = f"Gateway Timeout (504) on attempt {attempt + 1}/{MAX_RETRIES}"
                with retried_lock:
                    retried += 1
                if attempt < MAX_RETRIES - 1:
                    time.sleep(INITIAL_RETRY_DELAY * (attempt + 1))
                continue
            response.raise_for_status()
            return response.json(), None, attempt + 1
        except requests.exceptions.RequestException as error:
            last_error = f"API Request Error: {error}"
            break
        except json.JSONDecodeError as error:
            last_error = f"API Response JSON Decode Error: {error}"
            break
    return None, last_error or "API Call Failed after retries", MAX_RETRIES


def judge(answer, expected_output):
    """verl's reading of one answer: (result, status)."""
    status = answer.get("status")
    compile_result = answer.get("compile_result")
    run_result = answer.get("run_result")
    if status == "SandboxError":
        return -1, "sandbox_error"
    if status == "Failed":
        compile_status = compile_result and compile_result.get("status")
        if compile_result and (compile_status in ("Error", "TimeLimitExceeded")
                               or (compile_status == "Finished" and compile_result.get("return_code") != 0)):
            return -4, "compile_timeout" if compile_status == "TimeLimitExceeded" else "compile_error"
        if run_result:
            run_status = run_result.get("status")
            if run_status == "TimeLimitExceeded":
                return -3, "timeout"
            if run_status == "Error" or (run_status == "Finished" and run_result.get("return_code") != 0):
                return -2, "runtime_error"
            return -1, "unknown_failure"
        return -1, "unknown_failure_state"
    if status == "Success":
        if run_result and run_result.get("status") == "Finished":
            stdout = run_result.get("stdout") or ""
            if str(stdout).rstrip("\n") == str(expected_output).rstrip("\n"):
                return True, "success"
            return False, "wrong_answer"
        return -1, "unexpected_success_state"
    return -1, f"unknown_api_status_{status}"


def one_case(url, case, semaphore):
    with semaphore:
        timeout = case.get("timeout", 10)
        answer, error, attempts = call(url, case["code"], case.get("stdin", ""), timeout, timeout,
                                       case.get("language", "python"))
    if error is not None:
        return {"id": case["id"], "result": -1, "status": "api_error", "attempts": attempts, "api_error": error}
    result, status = judge(answer, case.get("expected_output", ""))
    return {"id": case["id"], "result": result, "status": status, "attempts": attempts, "api_error": None}


def main():
    url, cases_path, answers_path = sys.argv[1:4]
    with open(cases_path) as lines:
        cases = [json.loads(line) for line in lines if line.strip()]
    semaphore = threading.Semaphore(MAX_CONCURRENT)
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(32, os.cpu_count() * 5)) as pool:
        answers = list(pool.map(lambda case: one_case(url, case, semaphore), cases))
    took = time.monotonic() - started
    with open(answers_path, "w") as out:
        for answer in answers:
            out.write(json.dumps(answer) + "\n")
    print(json.dumps({"calls": len(cases), "seconds": took, "retried_504": retried}))


if __name__ == "__main__":
    main()
