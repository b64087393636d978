//! Workers kept up for as long as a service runs, judging the programs of any number of
//! callers at once.
//!
//! A [`Judge`](crate::judge::Judge) judges one batch at a time, which suits one caller;
//! a service has many, each waiting for its own verdicts. Here the pool runs a single
//! batch for its whole life, fed by one queue that every caller sends to, and each
//! verdict goes back to the caller that asked for it. The queue is bounded by
//! admission: a caller first takes room for all of its programs ([`Served::admit`]) or
//! is told the service is full, so overload is an answer the caller can retry, never a
//! wait without end or a verdict lost. Once the pool has stopped, through a fault of the
//! machine, every program still waiting, and every one sent after, gets an
//! `infrastructure` verdict that says why: never a pass, never a failure of the
//! candidate's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use passk_runner::{error_chain, CancellationToken, Job, JobLimits, Pool, PoolOptions, Program, Verdict};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::task::JoinHandle;

use crate::error::EvalError;

/// Where a program's verdict goes.
type Reply = oneshot::Sender<Verdict>;

/// The pool, running for the life of the service.
#[derive(Debug)]
pub struct Served {
    jobs: mpsc::Sender<Job<Reply>>,
    room: Arc<Semaphore>,
    capacity: usize,
    stopped: Arc<Stopped>,
    running: JoinHandle<()>,
    stop: CancellationToken,
}

/// Why the pool stopped, once it has.
#[derive(Debug, Default)]
struct Stopped {
    yes: AtomicBool,
    why: Mutex<Option<String>>,
}

/// Room in the queue for some programs, taken by [`Served::admit`] and given back when
/// dropped.
#[derive(Debug)]
pub struct Admitted {
    permits: OwnedSemaphorePermit,
}

impl Admitted {
    /// How many programs it holds room for.
    pub fn count(&self) -> usize {
        self.permits.num_permits()
    }
}

/// The queue has no room for a caller's programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full {
    /// Programs queued or running now.
    pub queued: usize,
    pub capacity: usize,
}

impl Served {
    /// Starts the workers, and the batch that runs every program sent from now on, with
    /// room for `capacity` programs queued or running at once.
    pub async fn start(pool: PoolOptions, capacity: usize) -> Result<Served, EvalError> {
        Ok(Served::on(Pool::start(pool).await?, capacity))
    }

    /// Serves on a pool already started (one that has computed expected outputs, say).
    pub fn on(mut pool: Pool, capacity: usize) -> Served {
        let capacity = capacity.max(1);
        let (jobs, queue) = mpsc::channel::<Job<Reply>>(capacity);
        let (verdicts, mut decided) = mpsc::unbounded_channel::<(Reply, Verdict)>();
        let stopped = Arc::new(Stopped::default());
        let stop = CancellationToken::new();
        let running = {
            let stopped = stopped.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let replying = tokio::spawn(async move {
                    while let Some((reply, verdict)) = decided.recv().await {
                        // A caller that went away no longer wants its verdict.
                        let _ = reply.send(verdict);
                    }
                });
                let batch = pool.batch();
                let ended = pool.run(batch, queue, verdicts, stop).await;
                let why = match ended {
                    Ok(()) => "the service is stopping".to_owned(),
                    Err(error) => format!("the workers stopped: {}", error_chain(&error)),
                };
                if let Ok(mut slot) = stopped.why.lock() {
                    *slot = Some(why);
                }
                stopped.yes.store(true, Ordering::SeqCst);
                pool.stop().await;
                let _ = replying.await;
            })
        };
        Served { jobs, room: Arc::new(Semaphore::new(capacity)), capacity, stopped, running, stop }
    }

    /// Takes room for `count` programs, all or none: a caller's batch is never half
    /// queued.
    pub fn admit(&self, count: usize) -> Result<Admitted, Full> {
        let full = || Full { queued: self.queued(), capacity: self.capacity };
        let wanted = u32::try_from(count.max(1)).map_err(|_| full())?;
        if count > self.capacity {
            return Err(full());
        }
        match self.room.clone().try_acquire_many_owned(wanted) {
            Ok(permits) => Ok(Admitted { permits }),
            Err(TryAcquireError::NoPermits | TryAcquireError::Closed) => Err(full()),
        }
    }

    /// Programs queued or running now.
    pub fn queued(&self) -> usize {
        self.capacity - self.room.available_permits()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether the workers are up and taking programs.
    pub fn running(&self) -> bool {
        !self.stopped.yes.load(Ordering::SeqCst)
    }

    /// Runs `program` in room the caller was admitted to (see [`Served::admit`]): the
    /// caller gives the room back by dropping it once its programs' verdicts are in. A
    /// program the workers can no longer run gets an `infrastructure` verdict.
    pub async fn run(&self, program: Program, limits: JobLimits, _admitted: &Admitted) -> Verdict {
        let (reply, verdict) = oneshot::channel();
        let sent = self.jobs.send(Job { program, tag: reply, limits }).await;
        let verdict = match sent {
            Ok(()) => verdict.await.ok(),
            Err(_) => None,
        };
        verdict.unwrap_or_else(|| Verdict::infrastructure(self.why_stopped()))
    }

    fn why_stopped(&self) -> String {
        let why = self.stopped.why.lock().ok().and_then(|why| why.clone());
        why.unwrap_or_else(|| "the workers stopped".to_owned())
    }

    /// Lets the programs queued and running finish, then stops the workers. Nothing sent
    /// after it starts is run.
    pub async fn drain(self) {
        let Served { jobs, running, .. } = self;
        drop(jobs);
        let _ = running.await;
    }

    /// Stops the workers at once: the programs running are killed, and they and those
    /// queued get `infrastructure` verdicts.
    pub async fn stop(self) {
        self.stop.cancel();
        self.drain().await;
    }
}
