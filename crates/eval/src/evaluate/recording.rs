//! EvalPlus's expected outputs, computed on the run's own workers (see
//! `expected::Recordings`).
//!
//! Each problem's recording job goes to the workers before any sample. A sample of a
//! problem whose outputs are still being computed waits here; once they are attached
//! (off the run's task: a suite of tens of megabytes takes a second to make), it is made
//! again against the problem's judging tests and joins the queue. So judging starts as
//! soon as the first problem is recorded, and no worker idles while another records the
//! slowest canonical solution, as it would behind a barrier between the two.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use passk_runner::{ProblemCode, Program, Verdict};
use tokio::task::JoinSet;

use super::samples::Pending;
use crate::dedup;
use crate::error::EvalError;
use crate::events::{EventSink, Phase, Progress};
use crate::expected::{Attached, Recordings};
use passk_formats::problems::ProblemSet;

pub struct Recording {
    recordings: Recordings,
    /// The problems whose outputs are being computed.
    waiting: BTreeSet<usize>,
    /// The code each problem recorded in this run is judged with.
    attached: HashMap<usize, Arc<ProblemCode>>,
    /// The samples of problems in `waiting`, by problem.
    held: HashMap<usize, Vec<Pending>>,
    held_count: usize,
    /// Recording jobs whose verdicts have not come.
    running: usize,
    attaching: JoinSet<Result<Attached, EvalError>>,
    progress: Option<Progress>,
    events: EventSink,
}

impl Recording {
    /// The recording of `recordings`, its progress told to `events` beside the samples',
    /// and its jobs, each tagged with its problem's position.
    pub fn new(mut recordings: Recordings, events: &EventSink) -> (Recording, Vec<(usize, Program)>) {
        let jobs = recordings.take_jobs();
        let progress =
            (!jobs.is_empty()).then(|| Progress::new(events, Phase::ComputingExpectedOutputs, jobs.len() as u64, 0));
        let recording = Recording {
            recordings,
            waiting: jobs.iter().map(|(problem, _)| *problem).collect(),
            attached: HashMap::new(),
            held: HashMap::new(),
            held_count: 0,
            running: jobs.len(),
            attaching: JoinSet::new(),
            progress,
            events: events.clone(),
        };
        (recording, jobs)
    }

    /// Whether outputs are still being computed or attached.
    pub fn is_busy(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Whether recording jobs are still running.
    pub fn is_computing(&self) -> bool {
        self.running > 0
    }

    /// Whether a job may go to the pool now, `handed_out` of them there already, with
    /// `workers` workers. While outputs are being computed, a job goes only to a worker
    /// that is free, not to wait for one: the samples of a problem whose outputs come
    /// next must not queue behind it. On a problem set whose canonical solutions take
    /// seconds on a few problems (MBPP+'s Mbpp/599, 20 s), the samples of the one
    /// recorded last are the run's longest path, and go first once recorded. A worker
    /// whose recording is being attached counts as busy until then.
    pub fn may_hand_out(&self, handed_out: usize, workers: usize) -> bool {
        !self.is_busy() || handed_out + self.attaching.len() < workers
    }

    /// Samples held until their problems' outputs are attached.
    pub fn held(&self) -> usize {
        self.held_count
    }

    /// Takes a sample read: holds it while its problem is being recorded, and gives it
    /// back made against its problem's judging tests where they were attached here.
    pub fn admit(&mut self, pending: Pending) -> Option<Pending> {
        if self.waiting.contains(&pending.problem) {
            self.held_count += 1;
            self.held.entry(pending.problem).or_default().push(pending);
            return None;
        }
        Some(match self.attached.get(&pending.problem) {
            Some(code) => retested(pending, code),
            None => pending,
        })
    }

    /// Problem `problem`'s canonical solution ran: its outputs are attached off this task.
    pub fn recorded(&mut self, problems: &Arc<ProblemSet>, problem: usize, verdict: Verdict) {
        let (attacher, problems) = (self.recordings.attacher(), problems.clone());
        self.attaching.spawn_blocking(move || attacher.attach(&problems, problem, &verdict));
        self.running -= 1;
        if let Some(progress) = &mut self.progress {
            progress.done();
        }
        if self.running == 0 {
            self.finish_progress();
        }
    }

    /// The next outputs attached; pending forever when none are being attached, for a
    /// `select!` branch.
    pub async fn next_attached(&mut self) -> Result<Attached, EvalError> {
        match self.attaching.join_next().await {
            Some(attached) => attached.expect("attaching outputs does not panic"),
            None => std::future::pending().await,
        }
    }

    /// Problem `attached.problem` has its tests: its samples held, made against them.
    pub fn attached(&mut self, attached: Attached) -> Vec<Pending> {
        self.recordings.note(&attached);
        self.waiting.remove(&attached.problem);
        let held = self.held.remove(&attached.problem).unwrap_or_default();
        self.held_count -= held.len();
        let held = held.into_iter().map(|pending| retested(pending, &attached.code)).collect();
        self.attached.insert(attached.problem, attached.code);
        held
    }

    /// The run is over: warns of the problems that got no outputs, and gives the code of
    /// each that got its tests here, for the rest of the command.
    pub async fn finish(mut self) -> HashMap<usize, Arc<ProblemCode>> {
        // Outputs being attached as the run stopped are cached all the same.
        while let Some(attached) = self.attaching.join_next().await {
            if let Ok(Ok(attached)) = attached {
                self.recordings.note(&attached);
                self.attached.insert(attached.problem, attached.code);
            }
        }
        self.finish_progress();
        self.recordings.warn(&self.events);
        self.attached
    }

    fn finish_progress(&mut self) {
        if let Some(progress) = self.progress.take() {
            progress.finish();
        }
    }
}

/// `pending` made against `code`, its problem's tests attached after it was read.
fn retested(pending: Pending, code: &Arc<ProblemCode>) -> Pending {
    let program = pending.program.retested(code);
    Pending { key: dedup::key(&program), program, ..pending }
}
