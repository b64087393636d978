//! What a run tells whoever watches it, as it happens: how far each phase has got, what
//! the user should know (a resumed run, a degraded sandbox), and the summary at the end.
//!
//! The pipeline never prints. A front end implements [`Events`] and decides what each
//! event becomes: the CLI draws progress bars and writes lines on standard error; a
//! service may log them or drop them. Every event comes from one stream, in the order
//! the run produced it, so a front end that shows them in order shows the run as it was.

use std::sync::Arc;

use passk_report::summary::Report;

/// A long phase of a run, whose progress is told unit by unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// The canonical solutions run on every input of HumanEval+ or MBPP+.
    ComputingExpectedOutputs,
    /// The samples run against their tests.
    Judging,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::ComputingExpectedOutputs => "computing expected outputs",
            Phase::Judging => "judging",
        }
    }

    /// What one unit of the phase is.
    pub fn unit(self) -> &'static str {
        match self {
            Phase::ComputingExpectedOutputs => "canonical solutions",
            Phase::Judging => "samples",
        }
    }
}

/// One thing a run tells.
#[derive(Debug)]
pub enum Event<'a> {
    /// A phase of `total` units begins, `done` of them done by an earlier run.
    PhaseStarted { phase: Phase, total: u64, done: u64 },
    /// One more unit of `phase` is done.
    Advanced(Phase),
    /// `phase` is over; what follows says how it ended.
    PhaseFinished(Phase),
    /// Something the user should know about the run.
    Info(String),
    /// Something the user should act on, or that the numbers should be read with.
    Warning(String),
    /// The run's numbers, once decided (a run stopped early has no pass@k in it).
    Summary(&'a Report<'a>),
}

/// Whoever watches a run.
pub trait Events: Send + Sync {
    fn event(&self, event: Event<'_>);
}

/// A shared handle to a run's watcher.
pub type EventSink = Arc<dyn Events>;

/// Watches nothing: for a run nobody follows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unwatched;

impl Events for Unwatched {
    fn event(&self, _: Event<'_>) {}
}

/// A phase's progress, told one unit at a time.
pub struct Progress {
    events: EventSink,
    phase: Phase,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress").field("phase", &self.phase).finish()
    }
}

impl Progress {
    /// `phase` begins over `total` units, `done` of them done before (a resumed run's).
    pub fn new(events: &EventSink, phase: Phase, total: u64, done: u64) -> Progress {
        events.event(Event::PhaseStarted { phase, total, done });
        Progress { events: events.clone(), phase }
    }

    /// One more unit done.
    pub fn done(&mut self) {
        self.events.event(Event::Advanced(self.phase));
    }

    pub fn finish(&self) {
        self.events.event(Event::PhaseFinished(self.phase));
    }
}

/// Says `$($arg)*` as an [`Event::Info`] to `$events`.
macro_rules! info {
    ($events:expr, $($arg:tt)*) => {
        $events.event($crate::events::Event::Info(format!($($arg)*)))
    };
}

/// Says `$($arg)*` as an [`Event::Warning`] to `$events`.
macro_rules! warning {
    ($events:expr, $($arg:tt)*) => {
        $events.event($crate::events::Event::Warning(format!($($arg)*)))
    };
}
pub(crate) use {info, warning};
