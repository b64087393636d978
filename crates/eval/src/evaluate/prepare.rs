//! Before anything runs: the results file is claimed, every output path tried, every
//! sample checked and the interpreter found, so that a mistake costs nothing and never
//! leaves half a results file behind.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use passk_runner::{Interpreter, Tests, VerdictMode};

use super::samples::{self, SamplesFile};
use super::EvaluateOptions;
use crate::error::EvalError;
use crate::events::EventSink;
use crate::languages::Toolchains;
use passk_formats::lock::FileLock;
use passk_formats::problems::ProblemSet;
use passk_formats::run::{TestSettings, VerdictSettings};
use passk_formats::InputError;
use passk_report::document::ReportPath;

/// A run's inputs, checked, and its results file, claimed.
#[derive(Debug)]
pub struct Prepared {
    /// Held until the run ends: one run per results file.
    _lock: FileLock,
    pub samples: Arc<SamplesFile>,
    pub problems: Arc<ProblemSet>,
    pub total: usize,
    /// The positions in the set of the problems the samples answer.
    pub covered: BTreeSet<usize>,
    /// Samples that look like raw chat output, run without `--extract`.
    pub chat_like: usize,
    /// The first sample that is a line of passk's results, if any is.
    pub results_like: Option<usize>,
    /// Standard-input samples that run as Python and look written in another language.
    pub resembling: Option<samples::Resembling>,
    pub interpreter: Interpreter,
    /// The toolchains of the samples' languages other than the host's.
    pub toolchains: Toolchains,
    /// The report asked for, its name and path checked.
    pub report: Option<ReportPath>,
    /// The settings that decide the verdicts, but for the sandbox level, which is known
    /// once the workers are up.
    pub settings: VerdictSettings,
}

impl Prepared {
    pub async fn new(options: &EvaluateOptions, events: &EventSink) -> Result<Prepared, EvalError> {
        if !samples::is_stream(&options.samples) && same_file(&options.samples, &options.results) {
            return Err(InputError::ResultsOverSamples { path: options.results.display().to_string() }.into());
        }
        // The results are tried first, so that a folder that refuses them is named as
        // the user gave it, not by the lock file beside it.
        let outputs =
            std::iter::once(("--results", &options.results)).chain(options.summary.iter().map(|s| ("--summary", s)));
        for (option, path) in outputs {
            passk_formats::write::check_writable(path)
                .map_err(|source| InputError::unwritable(option, path, source))?;
        }
        if let Some(fields) = not_results(&options.results) {
            return Err(InputError::ResultsOverOther { path: options.results.display().to_string(), fields }.into());
        }
        let lock = FileLock::acquire(&options.results, "--results")?;
        let report = options.report.as_deref().map(ReportPath::new).transpose()?;
        // Meanwhile the interpreter is found; a bad input is still reported first.
        let checking = {
            let toolchains = Toolchains::new(options.language, options.cache_dir.clone());
            let (problems, given, partial, extract, set, verdicts, shard) = (
                options.problems.clone(),
                options.samples.clone(),
                options.partial,
                options.extract,
                options.set.clone(),
                options.workers.verdicts,
                options.shard,
            );
            let beside = options.results.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let beside = beside.to_owned();
            tokio::task::spawn_blocking(move || {
                let problems = ProblemSet::load(&problems, &set).map_err(InputError::for_evaluate)?;
                let judged_calls =
                    problems.problems.iter().any(|problem| matches!(problem.code.tests, Tests::Calls(_)));
                if verdicts == VerdictMode::InProcess && judged_calls {
                    return Err(InputError::InProcessFormat {
                        path: problems.name.clone(),
                        format: problems.format.name(),
                    });
                }
                let samples = SamplesFile::open(&given, &beside)?;
                let checked = samples::check(&samples, &problems, extract, &toolchains)?;
                if verdicts == VerdictMode::InProcess && !checked.languages.is_empty() {
                    let languages: Vec<&str> = checked.languages.iter().copied().collect();
                    return Err(InputError::InProcessLanguage {
                        path: samples.name().to_owned(),
                        languages: languages.join(", "),
                    });
                }
                if checked.covered.len() < problems.problems.len() && !partial {
                    return Err(samples::missing_problems(&samples, &problems, &checked.covered));
                }
                // The whole file is checked, and tied to the run by its hash, whatever
                // share of it runs.
                let sha256 = samples.sha256()?;
                let (samples, checked) = match shard {
                    None => (samples, checked),
                    Some(shard) => {
                        let (held, total, covered) = samples.shard(&problems, &checked.covered, shard, &beside)?;
                        (held, samples::Checked { total, covered, ..checked })
                    }
                };
                Ok::<_, InputError>((Arc::new(samples), Arc::new(problems), checked, sha256, toolchains))
            })
        };
        let interpreter = options.workers.interpreter().await;
        let (samples, problems, checked, samples_sha256, mut toolchains) =
            checking.await.expect("checking the input does not panic")?;
        let interpreter = interpreter?;
        let languages = checked.languages.clone();
        let events = events.clone();
        let toolchains = tokio::task::spawn_blocking(move || {
            toolchains.find(languages, &crate::languages::tell_building(&events)).map(|()| toolchains)
        })
        .await
        .expect("finding toolchains does not panic")
        .map_err(EvalError::Toolchain)?;
        tracing::info!(python = %interpreter.executable.display(), version = %interpreter.version, "interpreter resolved");
        let settings = settings(options, &problems, &samples_sha256, &interpreter, &toolchains);
        Ok(Prepared {
            _lock: lock,
            samples,
            problems,
            total: checked.total,
            covered: checked.covered,
            chat_like: checked.chat_like,
            results_like: checked.results_like,
            resembling: checked.resembling,
            report,
            interpreter,
            toolchains,
            settings,
        })
    }

    /// The warning for a samples file that is passk's results, if it is.
    pub fn results_hint(&self) -> Option<String> {
        self.results_like.map(|line| {
            format!(
                "{}:{line}: this is a line of passk's results (fields passed, result, status), given as a sample: \
                 its completion runs again, and its verdict is replaced; `passk score` reads results without running \
                 them",
                self.samples.name()
            )
        })
    }

    /// The hint for standard-input samples that run as Python and look written in
    /// another language, if any do.
    pub fn language_hint(&self) -> Option<String> {
        self.resembling.as_ref().map(|found| {
            format!(
                "{}:{}: this sample runs as python and looks written in {} (`{}`){}: name the samples' language \
                 with --language {}, or with a `language` field on each sample",
                self.samples.name(),
                found.line,
                found.language,
                found.mark,
                match found.count {
                    1 => String::new(),
                    count => format!(", as {} of {} do", count, self.total),
                },
                found.language,
            )
        })
    }

    /// The hint for samples that look like raw chat output, if any do.
    pub fn chat_hint(&self) -> Option<String> {
        (self.chat_like > 0).then(|| {
            format!(
                "{} of {} {} like raw chat output (a markdown fence, or prose before the code), which does not \
                 run as code; use --extract to take the program out of each answer",
                self.chat_like,
                passk_report::words::plural(self.total, "sample"),
                if self.chat_like == 1 { "looks" } else { "look" }
            )
        })
    }
}

/// The fields of the first line of a file at `results` that is neither passk's results
/// nor empty (a samples or problems file named by mistake), which a run would overwrite;
/// None where there is no such file. An interrupted run's results are its journal, beside
/// them, and a complete run's have `passed` on every line.
fn not_results(results: &Path) -> Option<String> {
    // A regular file only: opening a pipe would wait for a writer (and check_writable
    // has refused whatever else is there).
    if !std::fs::metadata(results).is_ok_and(|found| found.is_file()) {
        return None;
    }
    let file = std::fs::File::open(results).ok()?;
    let mut values = serde_json::Deserializer::from_reader(std::io::BufReader::new(file))
        .into_iter::<serde_json::Map<String, serde_json::Value>>();
    match values.next()? {
        Ok(object) if object.contains_key("passed") => None,
        Ok(object) => Some(object.keys().map(String::as_str).collect::<Vec<_>>().join(", ")),
        Err(_) => Some("none: it is not JSON lines".to_owned()),
    }
}

/// Whether two paths name one file (false when either does not exist yet).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The settings that decide the verdicts: a resumed run must match them all, and a
/// complete run with the same is not run again.
fn settings(
    options: &EvaluateOptions,
    problems: &ProblemSet,
    samples_sha256: &str,
    interpreter: &Interpreter,
    toolchains: &Toolchains,
) -> VerdictSettings {
    let set = &options.set;
    VerdictSettings {
        passk_version: env!("CARGO_PKG_VERSION").to_owned(),
        driver_sha256: passk_runner::sandbox::driver_package::judging_digest(),
        samples: options.samples.display().to_string(),
        samples_sha256: samples_sha256.to_owned(),
        shard: options.shard,
        problems: problems.name.clone(),
        problems_sha256: problems.sha256.clone(),
        verdicts: options.workers.verdicts,
        sandbox_asked: options.workers.sandbox,
        timeout: options.workers.timeout.as_secs_f64(),
        limits: options.workers.limits,
        retry_timeouts: options.retry_timeouts,
        fallback: options.fallback,
        calibrate: options.calibrate,
        extract: options.extract,
        format: problems.format,
        tests: TestSettings {
            challenge_tests: set.challenge_tests,
            base_only: set.base_only,
            all_tests: set.all_tests,
            min_time_limit: set.min_time_limit,
            time_limit_factor: set.time_limit_factor,
            float_tolerance: set.float_tolerance,
            checker_sha256: set.checker.as_deref().map(|text| passk_formats::provenance::sha256_bytes(text.as_bytes())),
        },
        python: interpreter.executable.display().to_string(),
        python_version: interpreter.version.clone(),
        allowed_packages: options.workers.allowed_packages.clone(),
        language: options.language.map(|language| language.name.clone()),
        toolchains: toolchains
            .found()
            .map(|toolchain| {
                let mut found = format!("{} {}", toolchain.path.display(), toolchain.version);
                if let Some(runtime) = &toolchain.runtime {
                    found.push_str(&format!(", run by {} {}", runtime.name, runtime.version));
                }
                (toolchain.language.clone(), found)
            })
            .collect(),
        sandbox: None,
    }
}
