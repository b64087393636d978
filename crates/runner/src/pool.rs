//! Worker slots, each with a warm driver, fed from one queue.

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;
use tokio::sync::{mpsc, Mutex};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::cgroup::{Accounting, RunGroups};
use crate::dispatch::{Dispatch, Job, JobLimits};
use crate::driver::{Driver, DriverError, Limits as DriverLimits, Ready, ENVIRONMENT};
use crate::error_chain;
use crate::interpreter::Interpreter;
use crate::limits::Limits;
use crate::program::{Program, VerdictMode};
use crate::reaper::{self, Left};
use crate::sandbox::{self, Isolation, Level, PackageView, SandboxContext, SandboxError, SandboxMode};
use crate::verdict::Verdict;

#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub interpreter: Interpreter,
    /// Worker slots: candidates run at once.
    pub jobs: usize,
    /// Wall-clock limit per candidate.
    pub timeout: Duration,
    /// The sandbox's limits per candidate.
    pub limits: Limits,
    /// How strongly to isolate candidates.
    pub sandbox: SandboxMode,
    /// The executable that runs `__sandbox-exec` (the passk binary).
    pub helper: PathBuf,
    /// Bytes of each output stream a driver keeps; the rest is read and counted.
    pub output_cap: usize,
    /// Who decides verdicts.
    pub verdicts: VerdictMode,
    /// Directories the toolchains' builds read besides the policy's (the libraries
    /// passk built for them), shown read-only.
    pub shown: Vec<PathBuf>,
}

/// What the drivers could set up, beyond the level itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriverFacts {
    /// Candidates are barred from signalling or tracing other processes.
    pub syscall_filter: bool,
    /// Each sample gets a pid namespace of its own, with a /proc that shows it alone.
    pub pid_namespace_per_sample: bool,
    /// Each sample gets an IPC namespace of its own (SysV objects, POSIX queues).
    pub ipc_namespace_per_sample: bool,
    /// Each sample finds a network namespace that no earlier sample left a socket in.
    pub network_namespace_per_sample: bool,
    /// Each sample gets a new /tmp of its own (a tmpfs mount).
    pub fresh_tmp_per_sample: bool,
    /// Each sample gets a new /dev/shm of its own (a tmpfs mount), even where its /tmp
    /// cannot be (an interpreter installed below /tmp is bound there).
    pub fresh_shm_per_sample: bool,
}

#[derive(Debug, Error)]
pub enum PoolError {
    #[error("cannot create the pool's working directory")]
    Workdir(#[source] std::io::Error),
    #[error("cannot prepare worker {slot}'s directories")]
    Slot {
        slot: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start worker {slot}")]
    Start {
        slot: usize,
        #[source]
        source: DriverError,
    },
    #[error("the results receiver went away")]
    ResultsClosed,
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// How one batch of jobs runs on a pool: on how many of its slots at once, and who
/// decides the verdicts. Every phase of a run (expected outputs, calibration, the
/// samples, retries, fallbacks) is a batch on the run's one pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// Slots the batch runs on, at most the pool's; one gives each job the machine to
    /// itself (a time-out run again).
    pub slots: usize,
    pub verdicts: VerdictMode,
}

/// Warm drivers, one per worker slot, ready to run candidates, batch after batch.
#[derive(Debug)]
pub struct Pool {
    options: PoolOptions,
    /// A slot's driver, or None where it stopped (a fault, or a cancelled batch); the
    /// slot's next job starts it again.
    drivers: Vec<Option<Driver>>,
    isolation: Isolation,
    facts: DriverFacts,
    context: Arc<SandboxContext>,
    // Removed once the drivers are gone; or why there are none.
    cgroups: Result<RunGroups, Accounting>,
    workdir: Workdir,
}

/// The pool's working directory: the driver script and the slots' directories. Removed
/// on drop, or by the reaper if passk is killed first.
#[derive(Debug)]
struct Workdir(PathBuf);

impl Workdir {
    /// Makes a new `passk-*` directory in the temporary directory. The reaper is told of
    /// it before it exists, so that no instant is left in which a SIGKILL would leave it
    /// behind with no one knowing of it.
    fn create() -> std::io::Result<Workdir> {
        let parent = std::path::absolute(std::env::temp_dir())?;
        let made = tempfile::Builder::new().prefix("passk-").make_in(&parent, |path| {
            reaper::watch(Left::Dir(path.to_owned()));
            let made = std::fs::DirBuilder::new().mode(0o700).create(path);
            if made.is_err() {
                // Someone else's, or never made: it must never be the reaper's to remove.
                reaper::release(Left::Dir(path.to_owned()));
            }
            made
        })?;
        // Kept: a directory, which the file's own removal would not remove.
        let ((), path) = made.keep().map_err(|error| error.error)?;
        Ok(Workdir(path))
    }

    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        match std::fs::remove_dir_all(&self.0) {
            Ok(()) => reaper::release(Left::Dir(self.0.clone())),
            Err(error) => tracing::debug!("cannot remove the pool's working directory: {error}"),
        }
    }
}

impl Pool {
    /// Finds the strongest isolation the options allow, starts one driver per slot in
    /// it, and waits until every one is ready.
    pub async fn start(options: PoolOptions) -> Result<Pool, PoolError> {
        reaper::start(&options.helper);
        let workdir = Workdir::create().map_err(PoolError::Workdir)?;
        let driver = workdir.path().join("interpreter");
        sandbox::write_driver(&driver, options.interpreter.language).map_err(PoolError::Workdir)?;
        let cgroups = RunGroups::create(options.jobs, &options.limits).map_err(|error| {
            let reason = error_chain(&error);
            tracing::info!("no control groups per sample: {reason}");
            Accounting::Unavailable(reason)
        });
        let slot_groups = cgroups.as_ref().map(|groups| groups.slots().to_vec()).unwrap_or_default();
        let read_only = sandbox::read_only_paths(options.interpreter.paths.iter().chain(&options.shown));
        let packages = PackageView::new(&read_only, &options.interpreter, &sandbox::hidden_system_packages());
        let context = Arc::new(SandboxContext {
            helper: options.helper.clone(),
            language: options.interpreter.language,
            interpreter: options.interpreter.executable.clone(),
            read_only,
            packages,
            driver,
            workdir: workdir.path().to_path_buf(),
            limits: options.limits,
            environment: ENVIRONMENT.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            cgroups: slot_groups,
            cpus: crate::placement::cpu_per_slot(options.jobs),
        });
        let (weakest, stronger) =
            SandboxContext::levels(options.sandbox).split_last().expect("every mode allows some level");
        let mut refused = Vec::new();
        for &level in stronger {
            refuse_visible_benchmarks(&options.interpreter, level).await?;
            match start_drivers(&context, level, options.jobs).await {
                Ok((drivers, facts)) => {
                    let isolation = Isolation { level, refused };
                    let drivers = drivers.into_iter().map(Some).collect();
                    return Ok(Pool { options, drivers, isolation, facts, context, cgroups, workdir });
                }
                Err(error) => {
                    let reason = refusal(&error).ok_or(error)?;
                    tracing::info!(%level, "sandbox level unavailable: {reason}");
                    refused.push((level, reason));
                }
            }
        }
        refuse_visible_benchmarks(&options.interpreter, *weakest).await?;
        match start_drivers(&context, *weakest, options.jobs).await {
            Ok((drivers, facts)) => {
                let isolation = Isolation { level: *weakest, refused };
                let drivers = drivers.into_iter().map(Some).collect();
                Ok(Pool { options, drivers, isolation, facts, context, cgroups, workdir })
            }
            Err(error) if options.sandbox == SandboxMode::Strict => match refusal(&error) {
                Some(reason) => Err(SandboxError::StrictUnavailable { reason }.into()),
                None => Err(error),
            },
            Err(error) if *weakest == Level::Uid => match refusal(&error) {
                // Without these, no interpreter would help: say what is missing.
                Some(_) if !sandbox::missing_user_capabilities().is_empty() => {
                    let missing = sandbox::missing_user_capabilities().join(", ");
                    Err(SandboxError::RootWithoutCapabilities { missing }.into())
                }
                Some(reason) => Err(SandboxError::RootWithoutAnotherUser { reason }.into()),
                None => Err(error),
            },
            Err(error) => Err(error),
        }
    }

    /// The isolation candidates run under.
    pub fn isolation(&self) -> &Isolation {
        &self.isolation
    }

    /// What the drivers could set up, beyond the level.
    pub fn facts(&self) -> DriverFacts {
        self.facts
    }

    /// The CPU each worker slot is kept on, by slot; empty when the kernel places them
    /// (see `placement`).
    pub fn worker_cpus(&self) -> &[usize] {
        &self.context.cpus
    }

    /// What the kernel counts and limits per sample.
    pub fn accounting(&self) -> &Accounting {
        match &self.cgroups {
            Ok(groups) => groups.accounting(),
            Err(unavailable) => unavailable,
        }
    }

    /// Stops every driver and removes what the pool made, running nothing.
    /// Stops every driver, then removes the control groups and the directories the
    /// pool made. (Dropped instead, the pool kills its drivers' process groups.)
    pub async fn stop(self) {
        let Pool { drivers, cgroups, workdir, .. } = self;
        for driver in drivers.into_iter().flatten() {
            driver.stop().await;
        }
        drop(cgroups);
        drop(workdir);
    }

    /// What the pool was started with.
    pub fn options(&self) -> &PoolOptions {
        &self.options
    }

    /// A batch on every slot, with the pool's own verdict mode.
    pub fn batch(&self) -> Batch {
        Batch { slots: self.drivers.len(), verdicts: self.options.verdicts }
    }

    /// Runs every job from `jobs` as `batch` says, each on whichever of its slots frees
    /// up first, and sends each verdict with its job's tag. Returns once `jobs` is closed
    /// and drained, the drivers kept warm for the next batch. Results are never held up:
    /// there are never more of them than jobs taken.
    ///
    /// Cancelling `cancel` stops every worker at once, and no job is started after it:
    /// candidates in flight are killed and get no verdict, but a verdict a driver had
    /// already sent is still sent on, so that nothing decided is lost. Every verdict is
    /// sent before this returns.
    pub async fn run<T: Send + 'static>(
        &mut self,
        batch: Batch,
        jobs: mpsc::Receiver<Job<T>>,
        results: mpsc::UnboundedSender<(T, Verdict)>,
        cancel: CancellationToken,
    ) -> Result<(), PoolError> {
        let slots = batch.slots.clamp(1, self.drivers.len());
        let jobs = Arc::new(Mutex::new(Dispatch::new(jobs, slots)));
        let level = self.isolation.level;
        let limits = DriverLimits {
            timeout: self.options.timeout,
            sandbox: self.options.limits,
            level,
            output_cap: self.options.output_cap,
            verdicts: batch.verdicts,
            memory_below_group: false,
        };
        let mut workers = JoinSet::new();
        for slot in 0..slots {
            let driver = self.drivers[slot].take();
            let worker = Worker { slot, driver, context: self.context.clone(), level, limits };
            workers.spawn(worker.serve(jobs.clone(), results.clone(), cancel.clone()));
        }
        let mut outcome = Ok(());
        while let Some(joined) = workers.join_next().await {
            let (worker, finished) = joined.expect("a worker does not panic");
            self.drivers[worker.slot] = worker.driver;
            if outcome.is_ok() {
                outcome = finished;
            }
            if outcome.is_err() {
                // Stop handing out work; the other slots finish what they hold.
                jobs.lock().await.close();
            }
        }
        outcome
    }
}

/// Refuses to run candidates at `level` under an interpreter that carries a benchmark's
/// package, where its packages cannot be hidden (levels `uid` and `minimal`; at
/// `none` nothing is hidden, for trusted code).
async fn refuse_visible_benchmarks(interpreter: &Interpreter, level: Level) -> Result<(), SandboxError> {
    if !matches!(level, Level::Uid | Level::Minimal) {
        return Ok(());
    }
    let scanned = interpreter.clone();
    let found = tokio::task::spawn_blocking(move || scanned.benchmarks()).await.expect("the walk does not panic");
    if found.is_empty() {
        return Ok(());
    }
    let found = found.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    Err(SandboxError::BenchmarkVisible { level, python: interpreter.executable.display().to_string(), found })
}

/// Why drivers could not come up at a level, if the level itself may be to blame: a
/// driver that exited before it was ready says why in the last line it wrote. `None`
/// for faults of the run itself, which no other level would mend.
fn refusal(error: &PoolError) -> Option<String> {
    match error {
        PoolError::Start { source: DriverError::NotReady { stderr }, .. } => {
            let line = stderr.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("the set-up failed");
            Some(line.trim().trim_start_matches("passk sandbox: ").to_owned())
        }
        PoolError::Start { source: DriverError::StartTimeout, .. } => Some(error.to_string()),
        // Handing the directories to a slot's user takes privilege (root without
        // CAP_CHOWN cannot).
        PoolError::Slot { source, .. } => Some(format!("{error}: {source}")),
        _ => None,
    }
}

/// Starts one driver per slot at `level`, all at once; all must come up. The drivers
/// come back in slot order, whichever came up first: a worker restarts its driver in
/// its own slot's directories, groups and CPU.
async fn start_drivers(
    context: &Arc<SandboxContext>,
    level: Level,
    jobs: usize,
) -> Result<(Vec<Driver>, DriverFacts), PoolError> {
    let mut starting = JoinSet::new();
    for slot in 0..jobs {
        let context = context.clone();
        starting.spawn(async move { (slot, start_driver(&context, level, slot).await) });
    }
    let mut drivers = Vec::with_capacity(jobs);
    let mut facts = DriverFacts {
        syscall_filter: true,
        pid_namespace_per_sample: true,
        ipc_namespace_per_sample: true,
        network_namespace_per_sample: true,
        fresh_tmp_per_sample: true,
        fresh_shm_per_sample: true,
    };
    let mut failure = None;
    while let Some(joined) = starting.join_next().await {
        let (slot, started) = joined.expect("starting a driver does not panic");
        match started {
            Ok((driver, ready)) => {
                facts.syscall_filter &= ready.syscall_filter;
                facts.pid_namespace_per_sample &= ready.pid_namespace_per_sample;
                facts.ipc_namespace_per_sample &= ready.ipc_namespace_per_sample;
                facts.network_namespace_per_sample &= ready.network_namespace_per_sample;
                facts.fresh_tmp_per_sample &= ready.fresh_tmp_per_sample;
                facts.fresh_shm_per_sample &= ready.fresh_shm_per_sample;
                drivers.push((slot, driver));
            }
            Err(error) => failure = Some(error),
        }
    }
    drivers.sort_by_key(|(slot, _)| *slot);
    let drivers = drivers.into_iter().map(|(_, driver)| driver);
    match failure {
        None => Ok((drivers.collect(), facts)),
        Some(error) => {
            for driver in drivers {
                driver.stop().await;
            }
            Err(error)
        }
    }
}

async fn start_driver(context: &SandboxContext, level: Level, slot: usize) -> Result<(Driver, Ready), PoolError> {
    let policy = context.policy(level, slot);
    context.prepare_slot(&policy, slot).map_err(|source| PoolError::Slot { slot, source })?;
    Driver::start(context, &policy, slot).await.map_err(|source| PoolError::Start { slot, source })
}

struct Worker {
    slot: usize,
    driver: Option<Driver>,
    context: Arc<SandboxContext>,
    level: Level,
    limits: DriverLimits,
}

/// What became of a job on a worker.
enum Outcome {
    /// Its verdict; with a fault that stops this worker, if there was one.
    Decided(Box<Verdict>, Option<PoolError>),
    /// The pool was cancelled before the driver decided it.
    Cancelled,
}

impl Worker {
    /// Runs jobs until the queue is drained or the batch is cancelled; gives itself
    /// back, with its driver still warm unless the batch was cancelled or it failed.
    async fn serve<T>(
        mut self,
        jobs: Arc<Mutex<Dispatch<T>>>,
        results: mpsc::UnboundedSender<(T, Verdict)>,
        cancel: CancellationToken,
    ) -> (Worker, Result<(), PoolError>) {
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                job = async { jobs.lock().await.next(self.slot).await } => job,
            };
            let Some(job) = next else { break };
            let Outcome::Decided(verdict, fault) = self.run(&job.program, job.limits, &cancel).await else { break };
            if results.send((job.tag, *verdict)).is_err() {
                self.stop().await;
                return (self, Err(PoolError::ResultsClosed));
            }
            if let Some(error) = fault {
                // The machine cannot run candidates any more; the samples after this
                // one are left for a later run to resume.
                self.stop().await;
                return (self, Err(error));
            }
        }
        if cancel.is_cancelled() {
            self.stop().await;
        }
        (self, Ok(()))
    }

    /// Runs one candidate. A driver that fails while running it is replaced and the
    /// candidate run once more, so a crash of the machine's making is not taken for the
    /// candidate's. The error, if any, is a fault that stops this worker.
    async fn run(&mut self, program: &Program, own: JobLimits, cancel: &CancellationToken) -> Outcome {
        let mut sandbox = self.limits.sandbox;
        if let Some(compile) = own.compile_timeout {
            // Whole seconds, as the policy gives them: a build never gets less than asked.
            sandbox.compile_seconds = compile.as_secs() + u64::from(compile.subsec_nanos() > 0);
        }
        let mut memory_below_group = false;
        if let Some(memory) = own.memory_mib {
            // Past 2^40 MiB the limit in bytes would not fit in 64 bits.
            let memory = memory.clamp(1, 1 << 40);
            memory_below_group = sandbox.memory_mib == 0 || memory < sandbox.memory_mib;
            sandbox.memory_mib = match sandbox.memory_mib {
                0 => memory,
                pool => pool.min(memory),
            };
        }
        let limits = DriverLimits {
            timeout: own.timeout.unwrap_or(self.limits.timeout),
            sandbox,
            memory_below_group,
            ..self.limits
        };
        let mut failures = Vec::new();
        while failures.len() < 2 {
            if cancel.is_cancelled() {
                return Outcome::Cancelled;
            }
            let driver = match self.driver.as_mut() {
                Some(driver) => driver,
                None => match start_driver(&self.context, self.level, self.slot).await {
                    Ok((driver, _)) => self.driver.insert(driver),
                    Err(error) => {
                        let detail = format!("the worker could not be restarted: {}", error_chain(&error));
                        return Outcome::Decided(Box::new(Verdict::infrastructure(detail)), Some(error));
                    }
                },
            };
            match driver.run(program, limits, cancel).await {
                Ok(verdict) => return Outcome::Decided(Box::new(verdict), None),
                Err(_) if cancel.is_cancelled() => return Outcome::Cancelled,
                Err(error) => {
                    tracing::warn!(slot = self.slot, "{error}; restarting the worker");
                    self.stop().await;
                    failures.push(error.to_string());
                }
            }
        }
        let detail = format!("the worker failed twice running this sample: {}", failures.join("; "));
        Outcome::Decided(Box::new(Verdict::infrastructure(detail)), None)
    }

    async fn stop(&mut self) {
        if let Some(driver) = self.driver.take() {
            driver.stop().await;
        }
    }
}
