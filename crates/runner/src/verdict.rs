use serde::{Deserialize, Serialize};

/// How a candidate's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The tests ran to the end and returned normally.
    Passed,
    /// The tests raised: a failed assertion or any other exception.
    Failed,
    /// No verdict was reached: the program does not compile, or it exited before its
    /// tests finished.
    Error,
    /// The program was still running at its time limit.
    Timeout,
    /// The program, in a compiled language, did not compile: the compiler said why.
    CompileError,
    /// The program's build was still running at its time limit (`--compile-timeout`).
    CompileTimeout,
    /// The program ran out of memory.
    OutOfMemory,
    /// The program was killed by a signal (a crash, or a signal it sent itself).
    Killed,
    /// The program ran into one of its limits: CPU time, file size, processes or open
    /// files.
    #[serde(rename = "limit")]
    LimitExceeded,
    /// No verdict, through a fault of the machine rather than of the candidate: its
    /// worker crashed twice, or could not be started. Never counted in pass@k.
    Infrastructure,
    /// No verdict, through the problem: its tests pass the candidate something that is
    /// not plain data (a function, say), which cannot cross to the candidate's process.
    /// Never counted in pass@k.
    Unjudgeable,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::CompileError => "compile-error",
            Status::CompileTimeout => "compile-timeout",
            Status::OutOfMemory => "out-of-memory",
            Status::Killed => "killed",
            Status::LimitExceeded => "limit",
            Status::Infrastructure => "infrastructure",
            Status::Unjudgeable => "unjudgeable",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one candidate.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Verdict {
    pub status: Status,
    /// A short human-readable explanation; empty for a pass.
    pub detail: String,
    /// The outcome in the reference harness's words: `passed`, `timed out` or
    /// `failed: <reason>`.
    pub result: String,
    /// Wall-clock seconds from the start of the candidate's process to its verdict.
    pub duration: f64,
    /// The most memory the sample's processes held at once, all of it counted (see the
    /// `cgroup` module); `None` where the run has no control groups.
    #[serde(default)]
    pub memory_peak_bytes: Option<u64>,
    /// CPU seconds used by all of the sample's processes; `None` likewise.
    #[serde(default)]
    pub cpu_seconds: Option<f64>,
    /// Bytes the candidate wrote to its standard output and error.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// The first bytes of each stream, up to the pool's output cap.
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
    /// For a suite of calls, each phase run (EvalPlus's base and plus inputs), in order.
    #[serde(default)]
    pub phases: Vec<Phase>,
    /// For standard-input problems, how many tests passed, ran, and there are.
    #[serde(default)]
    pub tests: Option<TestCounts>,
    /// For standard-input problems, the first test that failed and how.
    #[serde(default)]
    pub failure: Option<serde_json::Value>,
    /// For a program run as it is, with no tests (a plain suite, see `Suite::plain`):
    /// its build, if it has one, then its run, each with its whole output up to the
    /// suite's cap.
    #[serde(default)]
    pub runs: Vec<ProgramRun>,
    /// For a plain suite, the files it asked to fetch from the program's working
    /// directory once it ended, in base64, by path: those that were there as regular
    /// files.
    #[serde(default)]
    pub files: std::collections::BTreeMap<String, String>,
}

/// One process of a program run as it is: its build, or its run.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct ProgramRun {
    /// `compile` or `run`.
    pub stage: String,
    /// How it ended: `finished` (by itself, whatever its exit status), `timeout`, or
    /// another of [`Status`]'s names where the sandbox ended it.
    pub ended: String,
    /// Its exit status, or 128 plus the signal that killed it; None if it was still
    /// running at its limit.
    pub return_code: Option<i32>,
    /// Wall-clock seconds.
    pub duration: f64,
    pub stdout: String,
    pub stderr: String,
}

/// One phase of a suite of calls: its inputs passed, called, and in all.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Phase {
    pub phase: String,
    pub status: Status,
    pub passed: u64,
    pub run: u64,
    pub total: u64,
    /// The first input that failed: which, its arguments, what came back, what was due.
    #[serde(default)]
    pub failure: Option<serde_json::Value>,
    /// When the phase records what the canonical solution returns: how many outputs the
    /// judge sent the harness, one frame each (see `judge_link`).
    #[serde(default)]
    pub recorded: Option<u64>,
    /// Judged a second time with each call sent once the one before was answered: an
    /// answer to a call sent ahead came later than its limit after the call was sent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_at_a_time: bool,
    /// Those outputs, each the judge's encoding of one input's output in base64, and
    /// each call's seconds, in input order; None if any of them never came.
    #[serde(skip)]
    pub outputs: Option<Vec<String>>,
    #[serde(skip)]
    pub times: Option<Vec<f64>>,
    /// Each input's arguments as the judge encoded them for its call, in base64.
    #[serde(skip)]
    pub arguments: Option<Vec<String>>,
}

/// Tests of a standard-input problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub struct TestCounts {
    pub passed: u64,
    pub run: u64,
    pub total: u64,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.status == Status::Passed
    }

    /// A verdict that could not be reached because of the machine, saying why.
    pub fn infrastructure(detail: String) -> Verdict {
        Verdict {
            status: Status::Infrastructure,
            result: format!("infrastructure error: {detail}"),
            detail,
            duration: 0.0,
            memory_peak_bytes: None,
            cpu_seconds: None,
            stdout_bytes: 0,
            stderr_bytes: 0,
            stdout: String::new(),
            stderr: String::new(),
            phases: Vec::new(),
            tests: None,
            failure: None,
            runs: Vec::new(),
            files: std::collections::BTreeMap::new(),
        }
    }
}
