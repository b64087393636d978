//! What the table's footer and the warnings say about the conditions a run had: who
//! decided the verdicts, what isolated the candidates, and the limits in force. Each
//! names only what is in force, and what is missing as missing.

use passk_runner::cgroup::Accounting;
use passk_runner::{DriverFacts, Isolation, Level, Tests, VerdictMode};
use serde_json::{json, Map, Value};

use super::EvaluateOptions;
use crate::events::{warning, EventSink};
use crate::languages::Toolchains;
use passk_formats::problems::{Format, ProblemSet};

pub fn refused(isolation: &Isolation) -> Value {
    let refused: Map<String, Value> =
        isolation.refused.iter().map(|(level, reason)| (level.to_string(), json!(reason))).collect();
    Value::Object(refused)
}

/// One warning naming what is missing and what would enable it; louder for `none`.
pub fn warn_about_isolation(isolation: &Isolation, syscall_filter: bool, events: &EventSink) {
    match isolation.level {
        Level::Full => {}
        Level::None => warning!(
            events,
            "--sandbox none: candidates run unisolated, as passk's own user, with this machine's \
             files and network open to them; use it only for code you trust"
        ),
        level => {
            let reasons: Vec<String> =
                isolation.refused.iter().map(|(level, reason)| format!("{level}: {reason}")).collect();
            let reason = reasons.join("; ");
            let exposed = if level == Level::Uid {
                "candidates run as unprivileged users of their own but can read world-readable files and reach \
                 the network"
            } else {
                "candidates run as passk's own user: they can read and write its files, this run's journal and \
                 results among them, so a candidate can forge any verdict (train on none of them), read the memory \
                 of other candidates running beside it, reach the network, and a fork bomb is not contained"
            };
            warning!(events, "sandbox degraded to `{level}` ({reason}); {exposed}; {}", Isolation::advice());
        }
    }
    if !syscall_filter && isolation.level != Level::None {
        warning!(
            events,
            "this kernel refused the seccomp filter of sandbox/syscalls.toml, which stops candidates \
             from signalling other processes, making namespaces and reaching the kernel's riskier calls"
        );
    }
}

/// Who decides the verdicts, and what keeps the candidate from the judge.
fn describe_verdicts(verdicts: VerdictMode, level: Level, facts: DriverFacts) -> String {
    match verdicts {
        VerdictMode::InProcess => "in-process (the tests share the candidate's interpreter)".to_owned(),
        VerdictMode::Judge if facts.pid_namespace_per_sample => {
            "judge, out of the candidate's process (a pid namespace per sample, the candidate its init; the judge in another)".to_owned()
        }
        VerdictMode::Judge if level == Level::None => "judge, out of the candidate's process (unisolated)".to_owned(),
        VerdictMode::Judge => {
            "judge, out of the candidate's process (same user, kept apart by the system-call filter)".to_owned()
        }
    }
}

/// Where a sample's SysV objects and POSIX message queues live.
fn describe_ipc(level: Level, facts: DriverFacts) -> String {
    if facts.ipc_namespace_per_sample {
        "a namespace per sample".to_owned()
    } else if level == Level::Full {
        "a namespace per worker, shared by its samples".to_owned()
    } else {
        "shared with the machine".to_owned()
    }
}

fn describe_network(level: Level, facts: DriverFacts) -> &'static str {
    if facts.network_namespace_per_sample {
        "a namespace with only its own loopback, new after any sample that left a socket"
    } else if level == Level::Full {
        "a namespace per worker with only its own loopback"
    } else {
        "shared with the machine"
    }
}

fn describe_syscalls(level: Level, facts: DriverFacts) -> &'static str {
    // Which of the filter's two programs is in force: a candidate alone in its pid
    // namespace may signal any pid there (see sandbox/syscalls.toml).
    if facts.syscall_filter && facts.pid_namespace_per_sample {
        "filtered: what sandbox/syscalls.toml does not allow fails with EPERM; signals reach only the candidate's own pid namespace"
    } else if facts.syscall_filter {
        "filtered: what sandbox/syscalls.toml does not allow fails with EPERM; signals reach only the candidate and its group"
    } else if level == Level::None {
        "not filtered (--sandbox none)"
    } else {
        "not filtered: the kernel refused the seccomp filter"
    }
}

/// Below level `full`, a judging program in another language than Python runs as the
/// candidates' user and, being a program started afresh, can be reached by them through
/// `/proc` (Python's judge is never: it stays non-dumpable): say so, since its verdicts
/// could then be forged.
pub fn warn_about_other_judges(
    isolation: &Isolation,
    problems: &ProblemSet,
    toolchains: &Toolchains,
    events: &EventSink,
) {
    if isolation.level == Level::Full || isolation.level == Level::None {
        return;
    }
    let judged: Vec<&str> = toolchains
        .found()
        .filter(|toolchain| toolchain.judges_functions())
        .map(|toolchain| toolchain.language.as_str())
        .filter(|language| {
            problems.problems.iter().any(|problem| problem.language().is_some_and(|own| own.name == *language))
        })
        .collect();
    if !judged.is_empty() {
        warning!(
            events,
            "at sandbox level `{}`, the judges of {} function completions run as the candidates' user, which can \
             reach them through /proc: their verdicts could be forged (train on none of them); level full hides \
             them in a pid namespace the candidates cannot see; {}",
            isolation.level,
            judged.join(" and "),
            Isolation::advice()
        );
    }
}

/// The toolchains of the samples' other languages, with their versions, and how their
/// builds run; None where every sample is in the host's language. A resident compiler
/// is kept only where every candidate is in a pid namespace of its own (the driver's
/// resident.py): elsewhere candidates run as its user and could reach it.
pub fn describe_toolchains(
    toolchains: &Toolchains,
    limits: &passk_runner::Limits,
    facts: DriverFacts,
) -> Option<String> {
    let found: Vec<String> = toolchains
        .found()
        .map(|toolchain| {
            let name = toolchain.path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
            let built = match &toolchain.prebuilt {
                Some(dir) if !toolchain.precompiled.is_empty() => {
                    format!("; {} precompiled headers in {}", toolchain.precompiled.len(), dir.display())
                }
                Some(dir) => format!("; what its programs use built once in {}", dir.display()),
                None => String::new(),
            };
            let kept = match (toolchain.resident.is_empty(), facts.pid_namespace_per_sample) {
                (true, _) => "",
                (false, true) => "; its compiler kept running for each worker's builds, out of the candidates' sight",
                (false, false) => "; its compiler started for each build (kept running at level full only)",
            };
            let runtime = match &toolchain.runtime {
                Some(runtime) => format!("; run by {} {}", runtime.name, runtime.version),
                None => String::new(),
            };
            format!(
                "{}: {name} {} ({}{runtime}{built}{kept})",
                toolchain.language,
                toolchain.version,
                toolchain.path.display()
            )
        })
        .collect();
    (!found.is_empty()).then(|| {
        format!(
            "{}; each program built once, in the sandbox with the sample's limits, {} s to compile",
            found.join(", "),
            limits.compile_seconds
        )
    })
}

/// The Python packages candidates can import and read.
pub fn describe_packages(level: Level, allowed: &[String]) -> String {
    match level {
        Level::Full if allowed.is_empty() => "standard library only".to_owned(),
        Level::Full => format!("standard library + {}", allowed.join(", ")),
        Level::None => "all of the interpreter's (--sandbox none)".to_owned(),
        Level::Uid | Level::Minimal => {
            "all of the interpreter's, none a benchmark's (packages are hidden at level full only)".to_owned()
        }
    }
}

/// The control groups per sample, and who could undo them: below `uid`, candidates run
/// as passk's own user, who owns the groups passk made.
fn describe_cgroups(level: Level, accounting: &Accounting) -> String {
    if accounting.in_force() && matches!(level, Level::Minimal | Level::None) {
        format!("{accounting} (candidates run as passk's own user, who could change these limits)")
    } else {
        accounting.to_string()
    }
}

/// The limits in force, and only those: what a level or host does not enforce is named
/// as missing rather than listed.
fn describe_limits(
    options: &EvaluateOptions,
    problems: &ProblemSet,
    level: Level,
    facts: DriverFacts,
    accounting: &Accounting,
) -> String {
    let limits = &options.workers.limits;
    let timeout = options.workers.timeout.as_secs_f64();
    let time = match options.calibrate {
        Some(factor) => format!("{timeout} s + {factor} x the canonical solution's time"),
        // HumanEval+'s and MBPP+'s inputs have limits of their own, and --timeout is not one.
        None if problems.format == Format::Evalplus => format!(
            "each input the larger of {} s and {} x the canonical solution's time",
            options.set.min_time_limit, options.set.time_limit_factor
        ),
        None if problems.problems.iter().any(|problem| !matches!(problem.code.tests, Tests::Check(_))) => {
            format!("{timeout} s per test")
        }
        None => format!("{timeout} s"),
    };
    let memory = match (limits.memory_mib, accounting.in_force()) {
        (0, _) => "no memory limit".to_owned(),
        (mib, true) => format!("{mib} MiB memory"),
        (mib, false) => format!("{mib} MiB address space per process"),
    };
    // The process rlimit counts a user's processes: the slot's own at `full` and `uid`.
    let processes = if accounting.in_force() || matches!(level, Level::Full | Level::Uid) {
        format!("{} processes", limits.processes)
    } else {
        "no process limit".to_owned()
    };
    let tmp = if facts.fresh_tmp_per_sample {
        format!("{} MiB /tmp and /dev/shm, new for each sample", limits.tmp_mib)
    } else if facts.fresh_shm_per_sample {
        format!("{} MiB /tmp per worker, {0} MiB /dev/shm new for each sample", limits.tmp_mib)
    } else if level == Level::Full {
        format!("{} MiB /tmp per worker", limits.tmp_mib)
    } else {
        "the host's /tmp".to_owned()
    };
    format!(
        "{time}, {memory}, {processes}, {} CPU s, {} MiB files, {} open files, {tmp}",
        limits.cpu_seconds, limits.file_size_mib, limits.open_files
    )
}

/// The footer's row that counts what was executed.
pub const EXECUTED_ROW: &str = "executed";
/// The footer's row that names the problems judged in process, where any were.
pub const FALLBACK_ROW: &str = "fallback";

/// What the `executed` row says.
pub fn executed(executions: u64, reused: u64, resumed_from: usize) -> String {
    // Regression: a run resumed over several sessions said only the last one's count.
    let earlier =
        if resumed_from > 0 { format!("; {resumed_from} decided before the run was resumed") } else { String::new() };
    format!("{executions} ({reused} identical samples reused a verdict){earlier}")
}

/// The `fallback` row, where problems were judged in process.
pub fn fallback(in_process: &[String]) -> Option<(String, String)> {
    (!in_process.is_empty()).then(|| {
        let problems = passk_report::words::plural(in_process.len(), "problem");
        (
            FALLBACK_ROW.into(),
            format!("{problems} judged in process, their tests passing what cannot cross: {}", in_process.join(", ")),
        )
    })
}

/// The rows the table ends with: what was executed and under which conditions.
pub fn footer(
    options: &EvaluateOptions,
    problems: &ProblemSet,
    isolation: &Isolation,
    facts: DriverFacts,
    accounting: &Accounting,
    counts: super::run::Counts,
    resumed_from: usize,
) -> Vec<(String, String)> {
    let super::run::Counts { executions, reused } = counts;
    let level = isolation.level;
    vec![
        (EXECUTED_ROW.into(), executed(executions, reused, resumed_from)),
        ("sandbox".into(), level.to_string()),
        ("verdicts".into(), describe_verdicts(options.workers.verdicts, level, facts)),
        ("ipc".into(), describe_ipc(level, facts)),
        ("network".into(), describe_network(level, facts).into()),
        ("syscalls".into(), describe_syscalls(level, facts).into()),
        ("cgroups".into(), describe_cgroups(level, accounting)),
        ("limits".into(), describe_limits(options, problems, level, facts, accounting)),
        ("packages".into(), describe_packages(level, &options.workers.allowed_packages)),
    ]
}
