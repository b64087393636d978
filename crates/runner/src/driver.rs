//! One warm interpreter: the harness's end of the driver protocol.

use std::os::fd::{AsRawFd, RawFd};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio_util::sync::CancellationToken;

use crate::judge_link::{JudgeLink, JUDGE_LINK_FD};
use crate::kept::KeptSuites;
use crate::limits::Limits as SandboxLimits;
use crate::process::GroupLeader;
use crate::program::{Program, Suite, Tests, VerdictMode};
use crate::sandbox::{HelperPolicy, Level, SandboxContext};
use crate::source_line::{SourceLine, SOURCE_LINE_FD};
use crate::verdict::Verdict;

/// How long a driver may take to start and report ready.
const START_LIMIT: Duration = Duration::from_secs(30);
/// How much longer than a candidate's own limit the driver may take to answer. The
/// driver enforces the limit itself; this only catches a driver that has stopped working.
const ANSWER_MARGIN: Duration = Duration::from_secs(10);
/// How long the driver waits for a resident compiler to start (a JVM and javac's warm-up,
/// or node parsing TypeScript's library), outside any build's limit: RESIDENT_START in
/// sandbox/passk_driver/resident.py.
const RESIDENT_START: Duration = Duration::from_secs(30);
/// What each run of a candidate may take beyond its limit, in a sample of several runs.
const RUN_MARGIN: Duration = Duration::from_secs(1);
/// How long a stopping driver gets to clean up after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// The variables a driver and its candidates see; nothing of the harness's environment.
pub(crate) const ENVIRONMENT: [(&str, &str); 4] =
    [("PATH", "/usr/local/bin:/usr/bin:/bin"), ("LANG", "C.UTF-8"), ("LC_ALL", "C.UTF-8"), ("OMP_NUM_THREADS", "1")];

#[derive(Debug, Error)]
pub enum DriverError {
    #[error("cannot start the driver")]
    Spawn(#[source] std::io::Error),
    #[error("the driver exited before it was ready{}", stderr_suffix(.stderr))]
    NotReady { stderr: String },
    #[error("the driver did not report ready within {} s", START_LIMIT.as_secs())]
    StartTimeout,
    #[error("the driver stopped answering")]
    Unresponsive,
    #[error("the driver exited while running a candidate")]
    Died,
    #[error("the driver was stopped before it sent a verdict")]
    Interrupted,
    #[error("lost contact with the driver")]
    Pipe(#[source] std::io::Error),
    #[error("the driver sent an unreadable message: {line:?}")]
    Protocol {
        line: String,
        #[source]
        source: serde_json::Error,
    },
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

/// What a driver reports about itself once it is ready.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Ready {
    pub(crate) syscall_filter: bool,
    /// Whether each sample gets a pid namespace of its own whose init is the judge.
    pub(crate) pid_namespace_per_sample: bool,
    /// Whether each sample gets an IPC namespace of its own.
    pub(crate) ipc_namespace_per_sample: bool,
    /// Whether a sample that left sockets is followed by a new network namespace.
    pub(crate) network_namespace_per_sample: bool,
    /// Whether each sample gets a new /tmp of its own.
    pub(crate) fresh_tmp_per_sample: bool,
    /// Whether each sample gets a new /dev/shm of its own.
    pub(crate) fresh_shm_per_sample: bool,
}

/// Per-candidate limits sent with every request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) timeout: Duration,
    pub(crate) sandbox: SandboxLimits,
    pub(crate) level: Level,
    pub(crate) output_cap: usize,
    pub(crate) verdicts: VerdictMode,
    /// The job asked for less memory than the pool's control groups were made with (or
    /// for a limit where they have none): the candidate's address space is limited to
    /// it, since the sample's group only holds it to the pool's.
    pub(crate) memory_below_group: bool,
}

/// A suite named by id, with the driver's part of it if the driver does not hold it.
#[derive(Serialize)]
struct SuiteReference<'a> {
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    suite: Option<&'a serde_json::Value>,
}

/// How the driver runs one sample in each mode. The code itself goes on the source line.
#[derive(Serialize)]
#[serde(untagged)]
enum Code<'a> {
    InProcess { in_process: bool },
    Judged { tests: SuiteReference<'a> },
    Calls { calls: SuiteReference<'a> },
    Stdio { stdio: SuiteReference<'a> },
}

impl<'a> Code<'a> {
    fn of(program: &'a Program, verdicts: VerdictMode, kept: &mut KeptSuites) -> Code<'a> {
        let mut reference = |suite: &'a Suite| SuiteReference {
            id: &suite.id,
            suite: (!kept.touch(&suite.id)).then_some(&suite.driver_part),
        };
        match (&program.problem().tests, verdicts) {
            (Tests::Calls(suite), _) => Code::Calls { calls: reference(suite) },
            (Tests::Stdio(suite), _) => Code::Stdio { stdio: reference(suite) },
            (Tests::Check(_), VerdictMode::InProcess) => Code::InProcess { in_process: true },
            (Tests::Check(suite), VerdictMode::Judge) => Code::Judged { tests: reference(suite) },
        }
    }
}

/// What the sample's own processes run: the candidate's code, or in process the whole
/// program.
fn source(program: &Program, verdicts: VerdictMode) -> std::borrow::Cow<'_, str> {
    match (&program.problem().tests, verdicts) {
        (Tests::Check(_), VerdictMode::InProcess) => program.in_process_text().expect("tests that are code").into(),
        _ => program.candidate_code().into(),
    }
}

/// How long a driver may take over a sample before it counts as stuck: the sample's own
/// limit for each of its runs, its builds' limits, and a margin.
fn answer_limit(program: &Program, timeout: Duration, compile_timeout: Duration) -> Duration {
    // Regression: a slow build (a loaded machine, a template-heavy program) went past
    // a limit that counted only the runs, and its sample was lost as `infrastructure`.
    // The candidate's program is built under its own limit, and for a function
    // completion the tests' program too, in the judge, before the candidate's time.
    // A build by a resident compiler may also wait for it to start, and be run again by a
    // compiler of its own where that one was lost (sandbox/passk_driver/resident.py).
    let (builds, resident) = match program.toolchain() {
        Some(toolchain) if toolchain.assembly.is_some() => (2, !toolchain.resident.is_empty()),
        Some(toolchain) if !toolchain.compile.is_empty() => (1, !toolchain.resident.is_empty()),
        _ => (0, false),
    };
    let building = if resident { (compile_timeout * 2 + RESIDENT_START) * builds } else { compile_timeout * builds };
    let timeout_then_builds = |runs: Duration| runs + building;
    let (runs, tries) = match &program.problem().tests {
        Tests::Check(_) => return timeout_then_builds(timeout) + ANSWER_MARGIN,
        // A phase of calls whose answer came late after its call went ahead is judged
        // again, one call at a time, with its whole limit (sandbox/passk_driver/calls.py):
        // each phase may take its time twice.
        Tests::Calls(suite) => (suite, 2),
        Tests::Stdio(suite) => (suite, 1),
    };
    let each = runs.budget.unwrap_or(timeout * u32::try_from(runs.runs).unwrap_or(u32::MAX));
    // Every run also pays for its fork and clean-up.
    timeout_then_builds((each + RUN_MARGIN * u32::try_from(runs.runs).unwrap_or(u32::MAX)).saturating_mul(tries))
        + ANSWER_MARGIN
}

/// Reads one message, a whole line; a driver that ends in the middle of one has died.
async fn read_message<T: for<'de> Deserialize<'de>>(
    stdout: &mut BufReader<ChildStdout>,
    line: &mut String,
) -> Result<T, DriverError> {
    line.clear();
    stdout.read_line(line).await.map_err(DriverError::Pipe)?;
    if !line.ends_with('\n') {
        return Err(DriverError::Died);
    }
    serde_json::from_str(line).map_err(|source| DriverError::Protocol { line: line.trim_end().to_owned(), source })
}

/// Has the driver find the judge's line as JUDGE_LINK_FD and the source line as
/// SOURCE_LINE_FD, which it alone keeps open.
fn hand_over(command: &mut tokio::process::Command, judge_link: RawFd, source_line: RawFd) {
    let place = move || {
        let placed = [(judge_link, JUDGE_LINK_FD), (source_line, SOURCE_LINE_FD)].map(|(fd, target)| {
            // SAFETY: only async-signal-safe calls, between fork and exec. Each end is
            // first copied above both targets, so that placing one cannot close the other.
            unsafe {
                let copy = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 16);
                (copy, target)
            }
        });
        for (copy, target) in placed {
            // SAFETY: as above; dup2 leaves the target inheritable.
            if copy < 0 || unsafe { libc::dup2(copy, target) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: the closure runs in the child between fork and exec, and only calls
    // async-signal-safe functions.
    unsafe { command.pre_exec(place) };
}

/// How the driver builds and runs a program in a language other than its own: the
/// program's toolchain (see `toolchain`), and how long a build may take.
#[derive(Serialize)]
struct Build<'a> {
    #[serde(flatten)]
    toolchain: &'a crate::toolchain::Toolchain,
    compile_timeout: f64,
}

impl<'a> Build<'a> {
    fn of(program: &'a Program, compile_timeout: Duration) -> Option<Build<'a>> {
        Some(Build { toolchain: program.toolchain()?, compile_timeout: compile_timeout.as_secs_f64() })
    }
}

#[derive(Serialize)]
struct Request<'a> {
    #[serde(flatten)]
    code: Code<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    build: Option<Build<'a>>,
    /// The sample's number on this driver, which the judge's line names it by.
    seq: u64,
    timeout: f64,
    output_cap: usize,
    memory_bytes: Option<u64>,
    /// See `Limits::memory_below_group`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    memory_below_group: bool,
    /// Only where the count is the slot's own (a user per slot, or a user namespace):
    /// at lower levels it would count every process of passk's user.
    processes: Option<u64>,
    cpu_seconds: u64,
    file_size_bytes: u64,
    open_files: u64,
}

#[derive(Debug)]
pub(crate) struct Driver {
    leader: GroupLeader,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    suites: KeptSuites,
    judge: JudgeLink,
    sources: SourceLine,
    seq: u64,
}

/// The driver's answer to a request.
#[derive(Deserialize)]
struct Response {
    #[serde(flatten)]
    verdict: Verdict,
    /// Whether the slot's judge was lost during the sample, and what it held with it.
    #[serde(default)]
    judge_lost: bool,
}

impl Driver {
    pub(crate) async fn start(
        context: &SandboxContext,
        policy: &HelperPolicy,
        slot: usize,
    ) -> Result<(Driver, Ready), DriverError> {
        let mut command = context.command(policy);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let (judge, judge_end) = JudgeLink::open().map_err(DriverError::Spawn)?;
        let (sources, source_end) = SourceLine::open().map_err(DriverError::Spawn)?;
        hand_over(&mut command, judge_end.as_raw_fd(), source_end.as_raw_fd());
        if let Some(&cpu) = context.cpus.get(slot) {
            crate::placement::keep_on(&mut command, cpu);
        }
        let mut leader = GroupLeader::spawn(&mut command).map_err(DriverError::Spawn)?;
        // Only the driver holds the judge's end and the source line's.
        drop(judge_end);
        drop(source_end);
        let child = leader.child_mut();
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(DriverError::Spawn(std::io::Error::other("driver pipes missing")));
        };
        let (stderr_tx, stderr_rx) = tokio::sync::oneshot::channel();
        let ready_flag = Arc::new(AtomicBool::new(false));
        let ready_seen = ready_flag.clone();
        tokio::spawn(async move {
            // Before the driver is ready its stderr explains a failed start, which the
            // caller reports (a sandbox level may simply be unavailable here); after, any
            // line is a driver fault worth a warning.
            let mut lines = BufReader::new(stderr).lines();
            let mut early = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                if ready_seen.load(Ordering::Relaxed) {
                    tracing::warn!(slot, "driver: {line:?}");
                } else {
                    tracing::debug!(slot, "driver: {line:?}");
                    early.push(line);
                    if early.len() > 20 {
                        early.remove(0);
                    }
                }
            }
            let _ = stderr_tx.send(early.join("\n"));
        });
        let mut driver = Driver {
            leader,
            stdin,
            stdout: BufReader::new(stdout),
            line: String::new(),
            suites: KeptSuites::default(),
            judge,
            sources,
            seq: 0,
        };
        let ready = match tokio::time::timeout(START_LIMIT, driver.read_message::<Ready>()).await {
            Ok(Ok(ready)) => {
                ready_flag.store(true, Ordering::Relaxed);
                ready
            }
            Ok(Err(DriverError::Died)) => {
                let _ = driver.leader.wait().await;
                let stderr = stderr_rx.await.unwrap_or_default();
                return Err(DriverError::NotReady { stderr });
            }
            Ok(Err(error)) => return Err(error),
            Err(_) => {
                driver.stop().await;
                return Err(DriverError::StartTimeout);
            }
        };
        Ok((driver, ready))
    }

    async fn read_message<T: for<'de> Deserialize<'de>>(&mut self) -> Result<T, DriverError> {
        read_message(&mut self.stdout, &mut self.line).await
    }

    /// Runs one candidate program and returns its verdict. Once `cancel` is cancelled,
    /// the driver's group is told to stop at once; a verdict it had already sent is
    /// still read and returned, and otherwise the error is `Interrupted`.
    pub(crate) async fn run(
        &mut self,
        program: &Program,
        limits: Limits,
        cancel: &CancellationToken,
    ) -> Result<Verdict, DriverError> {
        let sandbox = limits.sandbox;
        self.seq += 1;
        let seq = self.seq;
        let verdicts = program.verdicts(limits.verdicts);
        // In process, candidate and tests are one program: nothing goes to a judge.
        match (&program.problem().tests, verdicts) {
            (Tests::Check(_), VerdictMode::InProcess) => {}
            (Tests::Check(suite) | Tests::Calls(suite) | Tests::Stdio(suite), _) => self.judge.send(seq, suite),
        }
        let request = Request {
            code: Code::of(program, verdicts, &mut self.suites),
            build: Build::of(program, sandbox.compile_timeout()),
            seq,
            timeout: limits.timeout.as_secs_f64(),
            output_cap: limits.output_cap,
            memory_bytes: (sandbox.memory_mib > 0).then_some(sandbox.memory_mib << 20),
            memory_below_group: limits.memory_below_group,
            processes: matches!(limits.level, Level::Full | Level::Uid).then_some(sandbox.processes),
            cpu_seconds: sandbox.cpu_seconds,
            file_size_bytes: sandbox.file_size_mib << 20,
            open_files: sandbox.open_files,
        };
        let mut message = serde_json::to_vec(&request).expect("a request always serializes");
        message.push(b'\n');
        self.sources.send(seq, &source(program, verdicts)).map_err(DriverError::Pipe)?;
        let Driver { leader, stdin, stdout, line, .. } = self;
        let exchange = async {
            stdin.write_all(&message).await.map_err(DriverError::Pipe)?;
            stdin.flush().await.map_err(DriverError::Pipe)?;
            read_message::<Response>(stdout, line).await
        };
        tokio::pin!(exchange);
        let response = tokio::select! {
            biased;
            answer = tokio::time::timeout(answer_limit(program, limits.timeout, sandbox.compile_timeout()), &mut exchange) => match answer {
                Ok(answer) => answer?,
                Err(_) => return Err(DriverError::Unresponsive),
            },
            () = cancel.cancelled() => {
                // A stopped driver closes its end of the pipe, so whatever it wrote
                // before, a verdict it had decided, is read to the end.
                leader.interrupt();
                match tokio::time::timeout(STOP_GRACE, &mut exchange).await {
                    Ok(Ok(response)) => response,
                    Ok(Err(_)) | Err(_) => return Err(DriverError::Interrupted),
                }
            }
        };
        if response.judge_lost {
            self.judge.judge_lost();
        }
        let mut verdict = response.verdict;
        self.judge.unseal(seq, &mut verdict).await;
        self.judge.collect_recorded(seq, &mut verdict).await;
        Ok(verdict)
    }

    /// Stops the driver and everything below it.
    pub(crate) async fn stop(mut self) {
        // Closing its input is the driver's cue to clean up and leave; the signals are
        // for a driver that does not.
        drop(self.stdin);
        if tokio::time::timeout(STOP_GRACE, self.leader.wait()).await.is_err() {
            let _ = self.leader.terminate(STOP_GRACE).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::language::Language;
    use crate::program::{Candidate, ProblemCode};
    use crate::toolchain::Toolchain;

    fn function_problem() -> Arc<ProblemCode> {
        Arc::new(ProblemCode {
            prompt: "int f() {\n".into(),
            tests: Tests::check("", "int main() {}", "f", None),
            entry_point: "f".into(),
        })
    }

    fn toolchain(language: &str, compile: &[&str], assembly: Option<&str>) -> Arc<Toolchain> {
        let rule = Language::named(language).unwrap().program.clone().unwrap();
        Arc::new(Toolchain {
            language: language.into(),
            path: "/usr/bin/true".into(),
            version: "1.0".into(),
            runtime: None,
            compile: compile.iter().map(|word| (*word).to_owned()).collect(),
            run: Vec::new(),
            source: rule.source,
            artifact: rule.artifact,
            serve: Vec::new(),
            judge: Vec::new(),
            assembly: assembly.map(str::to_owned),
            serve_compile: Vec::new(),
            judge_compile: Vec::new(),
            judge_run: Vec::new(),
            object_compile: Vec::new(),
            link: Vec::new(),
            resident: Vec::new(),
            libraries: Vec::new(),
            address_limited: Vec::new(),
            prebuilt: None,
            precompiled: Vec::new(),
        })
    }

    /// Regression: a compiled function completion's sample was given its run's time
    /// alone; a build slower than the margin made its driver look stuck, and the sample
    /// was lost as `infrastructure`.
    #[test]
    fn a_samples_builds_count_towards_how_long_its_driver_may_take() {
        let (timeout, compile) = (Duration::from_secs(3), Duration::from_secs(30));
        let program = Program::new(&function_problem(), &Candidate::Completion("return 1; }".into()));
        assert_eq!(answer_limit(&program, timeout, compile), timeout + ANSWER_MARGIN);
        let assembled = program.clone().in_language(toolchain("cpp", &["g++"], Some("cpp_assembly")));
        assert_eq!(answer_limit(&assembled, timeout, compile), timeout + compile * 2 + ANSWER_MARGIN);
        let interpreted = program.in_language(toolchain("javascript", &[], None));
        assert_eq!(answer_limit(&interpreted, timeout, compile), timeout + ANSWER_MARGIN);
    }
}
