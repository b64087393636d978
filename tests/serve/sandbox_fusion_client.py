"""Calls a run_code server with SandboxFusion's own client from PyPI (`sandbox-fusion`),
as a user of it would: its request model, its `run_code` (which raises on an HTTP status
other than 200 and on SandboxError), its async `run_code`, and its summary of a result.

    sandbox_fusion_client.py URL CALLS.json ANSWERS.json

CALLS.json is a list of {"name", "request"}; ANSWERS.json maps each name to the
response's fields and its summary, or to {"raised": message}.
"""

import asyncio
import json
import sys

from sandbox_fusion import RunCodeRequest, SummaryMapping, run_code, run_code_async, summary_run_code_result


def answer_of(response):
    fields = json.loads(response.json())
    fields["summary"] = summary_run_code_result(
        response,
        SummaryMapping(CompileFailed="compile-failed", CompileTimeout="compile-timeout", RunFailed="run-failed",
                       RunTimeout="run-timeout"),
    )
    return fields


def main():
    url, calls_path, answers_path = sys.argv[1:4]
    with open(calls_path) as calls_file:
        calls = json.load(calls_file)
    answers = {}
    for call in calls:
        request = RunCodeRequest(**call["request"])
        try:
            if call.get("async"):
                response = asyncio.run(run_code_async(request, endpoint=url, max_attempts=1))
            else:
                response = run_code(request, endpoint=url, max_attempts=1)
            answers[call["name"]] = answer_of(response)
        except Exception as error:  # the client's own way of saying it failed
            answers[call["name"]] = {"raised": str(error)}
    with open(answers_path, "w") as out:
        json.dump(answers, out, indent=1)


if __name__ == "__main__":
    main()
