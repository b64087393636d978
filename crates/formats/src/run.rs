//! What a run records of itself, beside its results and in its summary: the settings
//! that decide its verdicts, which a resumed or repeated run must match, and the facts
//! of the run as it happened. Each is a struct here, written as JSON in field order.

use passk_runner::{Level, Limits, SandboxMode, VerdictMode};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::problems::Format;

/// The settings that decide a run's verdicts.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictSettings {
    pub passk_version: String,
    /// passk's driver and language table (`judging_digest`): a build of the same
    /// version from another commit may judge otherwise.
    pub driver_sha256: String,
    pub samples: String,
    pub samples_sha256: String,
    /// The share of the samples run (`--shard`), if not all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
    pub problems: String,
    pub problems_sha256: String,
    pub verdicts: VerdictMode,
    pub sandbox_asked: SandboxMode,
    /// Seconds.
    pub timeout: f64,
    pub limits: Limits,
    pub retry_timeouts: bool,
    pub fallback: bool,
    /// The factor of `--calibrate`, if asked.
    pub calibrate: Option<f64>,
    pub extract: bool,
    pub format: Format,
    pub tests: TestSettings,
    pub python: String,
    pub python_version: String,
    pub allowed_packages: Vec<String>,
    /// The language of samples that name none (`--language`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The toolchains of the samples' languages other than Python, by language: each
    /// one's executable and version, and its runtime's where that is another program.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub toolchains: std::collections::BTreeMap<String, String>,
    /// The sandbox level reached: known once the workers are up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Level>,
}

/// How the problem set's tests run.
#[derive(Debug, Clone, Serialize)]
pub struct TestSettings {
    pub challenge_tests: bool,
    pub base_only: bool,
    pub all_tests: bool,
    pub min_time_limit: f64,
    pub time_limit_factor: f64,
    pub float_tolerance: Option<f64>,
    pub checker_sha256: Option<String>,
}

/// What a run's summary records of its settings: those that decide the verdicts, and
/// those that only say how they were reported.
#[derive(Debug, Clone, Serialize)]
pub struct SummarySettings {
    #[serde(flatten)]
    pub verdicts: VerdictSettings,
    pub results: String,
    pub k: Vec<u64>,
    pub jobs: usize,
    pub dedup: bool,
}

/// What happened during a run, as opposed to what was asked for.
#[derive(Debug, Clone, Serialize)]
pub struct RunFacts {
    /// Programs run, and samples that reused an identical program's verdict.
    pub executions: u64,
    pub reused: u64,
    pub harness_peak_rss_kib: Option<u64>,
    pub started_at: String,
    pub finished_at: String,
    pub seconds: f64,
    pub cpus: usize,
    /// The CPU each worker slot was kept on, where they were.
    pub worker_cpus: Option<Vec<usize>>,
    /// Samples an interrupted run had decided before this one resumed it.
    pub resumed_from: usize,
    pub syscall_filter: bool,
    pub pid_namespace_per_sample: bool,
    pub ipc_namespace_per_sample: bool,
    pub network_namespace_per_sample: bool,
    pub fresh_tmp_per_sample: bool,
    pub fresh_shm_per_sample: bool,
    pub cgroups: Value,
    /// Each sandbox level tried and refused, with why.
    pub sandbox_refused: Value,
    /// The packages candidates could import.
    pub packages: String,
    /// Each problem's limit, by task id, under `--calibrate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated_timeouts: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retried_timeouts: Option<RetriedTimeouts>,
    /// The floors that raised the limit of a time-out run again, by task id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_floors: Option<Map<String, Value>>,
    /// The problems the fallback judged in process.
    pub judged_in_process: Vec<String>,
}

/// The time-outs run again alone, and how many of them changed.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RetriedTimeouts {
    pub samples: usize,
    pub changed: usize,
}

/// A record as the JSON object it is written as.
pub fn to_map(record: &impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(record) {
        Ok(Value::Object(map)) => map,
        // The records here are structs of plain fields, which always serialize so.
        _ => Map::new(),
    }
}
