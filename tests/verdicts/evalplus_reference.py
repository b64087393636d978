"""EvalPlus's own verdicts on a samples file, for comparison with passk's.

    python3 evalplus_reference.py EVALPLUS_WHEEL PROBLEMS SAMPLES OUT [--workers N]
        [--min-time-limit SECONDS] [--time-limit-factor FACTOR]

EVALPLUS_WHEEL is the evalplus 0.3.1 wheel from PyPI, imported as it is (it is pure
Python); its checks need numpy and psutil. PROBLEMS is a HumanEval+ or MBPP+ file.
This follows `evalplus.evaluate.evaluate` with its defaults: the expected outputs and
times from the canonical solution run in this process (`trusted_exec`, with MBPP+'s
inputs rebuilt and its not-None tasks), then each sample checked on the base and then
the plus inputs by `untrusted_check`, stopping at a phase's first failure
(`fast_check`). Writes one line per sample: `base_status` and `plus_status`.

Only EvalPlus's evaluation code is used; its data loaders, which download the real
sets, are stood in for, as they are never called here.
"""

import json
import sys
import types
from concurrent.futures import ProcessPoolExecutor


class _Absent(types.ModuleType):
    """A module EvalPlus imports for downloading data, which is never done here."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


for _module in ("datasets", "wget", "tempdir", "appdirs"):
    sys.modules.setdefault(_module, _Absent(_module))

sys.path.insert(0, sys.argv[1])
sys.set_int_max_str_digits(0)

from evalplus.data.mbpp import mbpp_deserialize_inputs  # noqa: E402
from evalplus.eval import untrusted_check  # noqa: E402
from evalplus.eval._special_oracle import MBPP_OUTPUT_NOT_NONE_TASKS  # noqa: E402
from evalplus.gen.util import trusted_exec  # noqa: E402


def load_problems(path):
    problems = {}
    with open(path) as lines:
        for line in lines:
            problem = json.loads(line)
            if problem["task_id"].startswith("Mbpp/"):
                for phase in ("base_input", "plus_input"):
                    problem[phase] = mbpp_deserialize_inputs(problem["task_id"], problem[phase])
            problems[problem["task_id"]] = problem
    return problems


def groundtruth(problem):
    dataset = "mbpp" if problem["task_id"].startswith("Mbpp/") else "humaneval"
    not_none = dataset == "mbpp" and problem["entry_point"] in MBPP_OUTPUT_NOT_NONE_TASKS
    code = problem["prompt"] + problem["canonical_solution"]
    oracle = {}
    for phase in ("base", "plus"):
        oracle[phase], oracle[f"{phase}_time"] = trusted_exec(
            code, problem[f"{phase}_input"], problem["entry_point"], record_time=True, output_not_none=not_none
        )
    return oracle


def check(job):
    dataset, problem, solution, oracle, limits = job
    statuses = {}
    for phase in ("base", "plus"):
        statuses[f"{phase}_status"], _ = untrusted_check(
            dataset, solution, problem[f"{phase}_input"], problem["entry_point"], expected=oracle[phase],
            atol=problem["atol"], ref_time=oracle[f"{phase}_time"], fast_check=True, **limits,
        )
    return statuses


def option(name, default, kind):
    return kind(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main():
    problems_path, samples_path, out_path = sys.argv[2:5]
    workers = option("--workers", 2, int)
    # EvalPlus's own defaults unless given, as passk's --min-time-limit and --time-limit-factor.
    limits = {"min_time_limit": option("--min-time-limit", 1.0, float),
              "gt_time_limit_factor": option("--time-limit-factor", 4.0, float)}
    problems = load_problems(problems_path)
    oracles = {task_id: groundtruth(problem) for task_id, problem in problems.items()}
    jobs = []
    with open(samples_path) as lines:
        for line in lines:
            sample = json.loads(line)
            problem = problems[sample["task_id"]]
            # As evalplus.data.load_solutions: a completion continues the prompt.
            solution = sample["solution"] if "solution" in sample else problem["prompt"] + sample["completion"]
            dataset = "mbpp" if sample["task_id"].startswith("Mbpp/") else "humaneval"
            jobs.append((dataset, problem, solution, oracles[sample["task_id"]], limits))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        verdicts = list(pool.map(check, jobs))
    with open(out_path, "w") as out:
        for verdict in verdicts:
            out.write(json.dumps(verdict) + "\n")


if __name__ == "__main__":
    main()
