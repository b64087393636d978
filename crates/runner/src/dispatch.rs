//! How a batch's jobs are handed to its slots. A slot's judge keeps what it prepared
//! for the problems it judged last: their suites, and for a compiled language the
//! tests' program and the candidates' serving object, each a build of up to a second.
//! A problem's samples handed out in turn to every slot would have every slot build
//! them; here a slot takes, from the jobs queued so far, one of the problem it ran last,
//! else one of a problem no slot has run, else the next: no slot waits while there is
//! work, and the order within a problem stays the queue's.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::program::Program;

/// One candidate to run, with whatever the caller needs to match the verdict to it.
#[derive(Debug)]
pub struct Job<T> {
    pub program: Program,
    pub tag: T,
    pub limits: JobLimits,
}

/// A job's own limits, where they differ from the pool's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobLimits {
    /// The wall-clock limit of each run.
    pub timeout: Option<Duration>,
    /// The wall-clock limit of the program's build.
    pub compile_timeout: Option<Duration>,
    /// Memory, in MiB, below the pool's: a job may ask for less than the pool gives,
    /// never more, since the pool's control groups were set at its start.
    pub memory_mib: Option<u64>,
}

impl JobLimits {
    /// The pool's limits but for the wall-clock limit of each run, where one is given.
    pub fn timeout(timeout: Option<Duration>) -> JobLimits {
        JobLimits { timeout, ..JobLimits::default() }
    }
}

/// How many queued jobs a slot looks through for one of its problem's.
const LOOKAHEAD: usize = 256;

pub struct Dispatch<T> {
    jobs: mpsc::Receiver<Job<T>>,
    /// Jobs taken off the queue ahead of their turn, in the queue's order.
    ahead: VecDeque<Job<T>>,
    /// The slot that last took a job of each problem, by its suite's id.
    owners: HashMap<String, usize>,
    /// Whether slots choose at all: one slot takes the queue in its order.
    choosing: bool,
}

impl<T> Dispatch<T> {
    pub fn new(jobs: mpsc::Receiver<Job<T>>, slots: usize) -> Dispatch<T> {
        Dispatch { jobs, ahead: VecDeque::new(), owners: HashMap::new(), choosing: slots > 1 }
    }

    /// The next job for `slot`; None once the queue is closed and drained.
    pub async fn next(&mut self, slot: usize) -> Option<Job<T>> {
        if !self.choosing {
            return match self.ahead.pop_front() {
                Some(job) => Some(job),
                None => self.jobs.recv().await,
            };
        }
        while self.ahead.len() < LOOKAHEAD {
            match self.jobs.try_recv() {
                Ok(job) => self.ahead.push_back(job),
                Err(_) => break,
            }
        }
        if self.ahead.is_empty() {
            self.ahead.push_back(self.jobs.recv().await?);
        }
        let owner = |job: &Job<T>| self.owners.get(job.program.problem().tests.suite_id()).copied();
        let at = (self.ahead.iter().position(|job| owner(job) == Some(slot)))
            .or_else(|| self.ahead.iter().position(|job| owner(job).is_none()))
            .unwrap_or(0);
        let job = self.ahead.remove(at)?;
        self.owners.insert(job.program.problem().tests.suite_id().to_owned(), slot);
        Some(job)
    }

    /// No more jobs are sent; those queued are still handed out.
    pub fn close(&mut self) {
        self.jobs.close();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::program::{Candidate, ProblemCode, Tests};

    fn job(problem: &Arc<ProblemCode>, tag: &'static str) -> Job<&'static str> {
        Job { program: Program::new(problem, &Candidate::Completion(tag.into())), tag, limits: JobLimits::default() }
    }

    fn problem(name: &str) -> Arc<ProblemCode> {
        let test = format!("def check(candidate):\n    assert candidate() == {name:?}\n");
        Arc::new(ProblemCode {
            prompt: String::new(),
            tests: Tests::check("", &test, name, None),
            entry_point: name.into(),
        })
    }

    /// Regression: with the slots taking the queue in turn, every slot judged every
    /// problem, and built a compiled problem's tests and serving object once each.
    #[tokio::test]
    async fn a_problems_jobs_go_to_the_slot_that_ran_it_while_others_take_new_problems() {
        let (a, b) = (problem("a"), problem("b"));
        let (send, receive) = mpsc::channel(16);
        for queued in [job(&a, "a1"), job(&a, "a2"), job(&a, "a3"), job(&b, "b1"), job(&b, "b2")] {
            send.send(queued).await.unwrap();
        }
        drop(send);
        let mut dispatch = Dispatch::new(receive, 2);
        let mut taken = Vec::new();
        for slot in [0, 1, 0, 1, 1, 0] {
            taken.push((slot, dispatch.next(slot).await.map(|job| job.tag)));
        }
        // Slot 1 takes the new problem, then, with b's done, a's last job.
        assert_eq!(
            taken,
            [(0, Some("a1")), (1, Some("b1")), (0, Some("a2")), (1, Some("b2")), (1, Some("a3")), (0, None)]
        );
    }

    #[tokio::test]
    async fn one_slot_takes_the_queue_in_its_order() {
        let (a, b) = (problem("a"), problem("b"));
        let (send, receive) = mpsc::channel(16);
        for queued in [job(&a, "a1"), job(&b, "b1"), job(&a, "a2")] {
            send.send(queued).await.unwrap();
        }
        drop(send);
        let mut dispatch = Dispatch::new(receive, 1);
        let mut taken = Vec::new();
        while let Some(job) = dispatch.next(0).await {
            taken.push(job.tag);
        }
        assert_eq!(taken, ["a1", "b1", "a2"]);
    }
}
