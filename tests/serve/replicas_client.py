"""A trainer's reward calls against replicas of passk serve behind a load balancer.

The calls are verl's (verl_client.py: the same body, request time-out and reading of
the answer), at 32 at once, and each retries what a replica going away can cause: an
HTTP 504 (the balancer found no replica to take it, or one drained) and a connection
refused or reset, three attempts with verl's delays (1 s, then 2 s). Any other answer,
or the last attempt failing, is a lost call. Each answer line is written as it arrives,
so that a test can act on the calls' progress (kill a replica mid-run).

    replicas_client.py URL CASES.jsonl ANSWERS.jsonl

Each case is {"id", "code"}: a program that exits 0 when it passes; each answer line is
{"id", "result", "status", "attempts", "retried", "error"}, `result` being verl's (True
passed, False or a negative code failed, -1 no verdict). A last line on standard output
gives the calls made, the seconds they took and the retries.
"""

import concurrent.futures
import json
import sys
import threading
import time

import requests

from verl_client import judge

MAX_RETRIES = 3
INITIAL_RETRY_DELAY = 1
TIMEOUT = 10
CONCURRENCY = 32

lock = threading.Lock()
retries = {"504": 0, "connection": 0}


def call(url, case):
    """One case's call with its retries: its answer line."""
    payload = json.dumps({"compile_timeout": TIMEOUT, "run_timeout": TIMEOUT, "code": case["code"], "stdin": "",
                          "language": "python", "files": {}, "fetch_files": []})
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    retried, error = [], None
    for attempt in range(MAX_RETRIES):
        if attempt:
            time.sleep(INITIAL_RETRY_DELAY * attempt)
        try:
            response = requests.post(url, headers=headers, data=payload, timeout=2 * TIMEOUT + 10)
        except requests.exceptions.ConnectionError as failure:
            error, kind = f"connection: {failure}", "connection"
        else:
            if response.status_code == 504:
                error, kind = f"HTTP 504: {response.text[:200]}", "504"
            elif response.status_code != 200:
                return {"id": case["id"], "result": -1, "status": "lost", "attempts": attempt + 1,
                        "retried": retried, "error": f"HTTP {response.status_code}: {response.text[:500]}"}
            else:
                result, status = judge(response.json(), "")
                return {"id": case["id"], "result": result, "status": status, "attempts": attempt + 1,
                        "retried": retried, "error": None}
        retried.append(error)
        with lock:
            retries[kind] += 1
    return {"id": case["id"], "result": -1, "status": "lost", "attempts": MAX_RETRIES, "retried": retried,
            "error": error}


def main():
    url, cases_path, answers_path = sys.argv[1:4]
    with open(cases_path) as lines:
        cases = [json.loads(line) for line in lines if line.strip()]
    started = time.monotonic()
    with open(answers_path, "w") as out, concurrent.futures.ThreadPoolExecutor(CONCURRENCY) as pool:
        calls = [pool.submit(call, url, case) for case in cases]
        for done in concurrent.futures.as_completed(calls):
            answer = done.result()
            with lock:
                out.write(json.dumps(answer) + "\n")
                out.flush()
    print(json.dumps({"calls": len(cases), "seconds": time.monotonic() - started, "retried": retries}))


if __name__ == "__main__":
    main()
