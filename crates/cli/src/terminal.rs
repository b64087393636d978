//! What a run shows on standard error as it goes: its events (`passk_eval::events`) as
//! lines, and each long phase's progress, as a bar on a terminal; anywhere else (a CI
//! log, a file) a plain line now and then, as a bar drawn there is a mess of control
//! characters and none at all is minutes of silence. The plain lines are spaced both by a
//! tenth of the work and by `PLAIN_EVERY`, whichever is rarer, so a quick phase writes
//! none and no log gets more than ten per phase. Two phases at once (EvalPlus's expected
//! outputs computed while samples are judged) show as two bars, the later above.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressState, ProgressStyle};
use passk_eval::events::{Event, Events, Phase};

use crate::error::CommandError;
use crate::say::say;

/// The least time between two plain lines.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// The run's events, shown on standard error; the summary table on standard output.
#[derive(Debug, Default)]
pub struct Terminal {
    state: Mutex<Shown>,
}

#[derive(Debug, Default)]
struct Shown {
    /// Each phase under way, by phase.
    phases: HashMap<Phase, Progress>,
    /// The bars drawn together, once a second phase began beside a first.
    bars: Option<MultiProgress>,
    /// Why the summary table could not be written, for the command's end.
    failed: Option<CommandError>,
}

#[derive(Debug)]
enum Progress {
    Bar(ProgressBar),
    Plain(Plain),
}

impl Terminal {
    /// The error met writing the summary table, if any: the run went on to keep its
    /// results, and the command fails once it is over.
    pub fn failure(&self) -> Option<CommandError> {
        self.lock().failed.take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shown> {
        // A panic while drawing leaves nothing half-done that matters here.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Events for Terminal {
    fn event(&self, event: Event<'_>) {
        let mut shown = self.lock();
        match event {
            Event::PhaseStarted { phase, total, done } => {
                let progress = if std::io::stderr().is_terminal() {
                    let bar = bar(phase, total, done);
                    let beside = shown.phases.values().find_map(|progress| match progress {
                        Progress::Bar(bar) => Some(bar.clone()),
                        Progress::Plain(_) => None,
                    });
                    match beside {
                        Some(below) => {
                            let bars = shown.bars.get_or_insert_with(|| {
                                let bars = MultiProgress::new();
                                bars.add(below);
                                bars
                            });
                            Progress::Bar(bars.insert(0, bar))
                        }
                        None => Progress::Bar(bar),
                    }
                } else {
                    Progress::Plain(Plain::new(phase, total, done, Instant::now()))
                };
                shown.phases.insert(phase, progress);
            }
            Event::Advanced(phase) => match shown.phases.get_mut(&phase) {
                Some(Progress::Bar(bar)) => bar.inc(1),
                Some(Progress::Plain(plain)) => {
                    if let Some(line) = plain.done(Instant::now()) {
                        say!("{line}");
                    }
                }
                None => {}
            },
            // A bar is cleared, as what follows says how the phase ended.
            Event::PhaseFinished(phase) => {
                if let Some(Progress::Bar(bar)) = shown.phases.remove(&phase) {
                    bar.finish_and_clear();
                }
                if shown.phases.is_empty() {
                    shown.bars = None;
                }
            }
            Event::Info(message) => say!("{message}"),
            Event::Warning(message) => say!("warning: {message}"),
            Event::Summary(report) => {
                if let Err(error) = crate::say::table(report) {
                    shown.failed.get_or_insert(error);
                }
            }
        }
    }
}

fn bar(phase: Phase, total: u64, done: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    let template = match phase {
        Phase::ComputingExpectedOutputs => "{bar:40} {pos}/{len} canonical solutions  ETA {eta}",
        Phase::Judging => "{bar:40} {pos}/{len} samples  {rate}  ETA {eta}",
    };
    let style = ProgressStyle::with_template(template).expect("the template is valid").with_key(
        "rate",
        |state: &ProgressState, out: &mut dyn std::fmt::Write| {
            let _ = write!(out, "{}", rate(state.per_sec()));
        },
    );
    bar.set_style(style);
    bar.set_position(done);
    bar.reset_eta();
    bar
}

/// The plain lines' state: where this run began and where the last line was.
#[derive(Debug)]
struct Plain {
    phase: Phase,
    total: u64,
    position: u64,
    began: (Instant, u64),
    last: (Instant, u64),
}

impl Plain {
    fn new(phase: Phase, total: u64, done: u64, now: Instant) -> Plain {
        Plain { phase, total, position: done, began: (now, done), last: (now, done) }
    }

    /// One more unit done at `now`: the line to write, if one is due.
    fn done(&mut self, now: Instant) -> Option<String> {
        self.position += 1;
        let step = self.total.div_ceil(10).max(1);
        if self.position - self.last.1 < step || now.duration_since(self.last.0) < PLAIN_EVERY {
            return None;
        }
        self.last = (now, self.position);
        let (total, position) = (self.total, self.position.min(self.total));
        let percent = position * 100 / total.max(1);
        let mut line = format!("{}: {position}/{total} {} ({percent}%)", self.phase.name(), self.phase.unit());
        let seconds = now.duration_since(self.began.0).as_secs_f64();
        let per_second = (position - self.began.1.min(position)) as f64 / seconds;
        if let Phase::Judging = self.phase {
            line += &format!(", {}", rate(per_second));
        }
        if position < total && per_second > 0.0 {
            line += &format!(", about {} left", left((total - position) as f64 / per_second));
        }
        Some(line)
    }
}

/// Samples a second, to as many digits as say something: "12.3/s", "250/s", "0.42/s".
fn rate(per_second: f64) -> String {
    if !per_second.is_finite() || per_second <= 0.0 {
        "-/s".to_owned()
    } else if per_second >= 100.0 {
        format!("{per_second:.0}/s")
    } else if per_second >= 1.0 {
        format!("{per_second:.1}/s")
    } else {
        format!("{per_second:.2}/s")
    }
}

/// A time left, as roughly as it is known: "40 s", "12 min", "3.5 h".
fn left(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{:.0} s", seconds.max(1.0))
    } else if seconds < 90.0 * 60.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_have_sensible_precision() {
        assert_eq!(rate(0.0), "-/s");
        assert_eq!(rate(0.4212), "0.42/s");
        assert_eq!(rate(12.3456), "12.3/s");
        assert_eq!(rate(359.87), "360/s");
    }

    /// A plain line comes once both a tenth of the work and ten seconds have passed
    /// since the last: never a line per unit of a quick phase, nor more than ten.
    #[test]
    fn plain_lines_are_spaced_by_a_tenth_of_the_work_and_ten_seconds() {
        let start = Instant::now();
        let mut plain = Plain::new(Phase::Judging, 1000, 200, start);
        let at = |seconds: u64| start + Duration::from_secs(seconds);
        // A resumed run's 200 count toward the tenth only once this run has done 100.
        assert_eq!(plain.done(at(11)), None, "a tenth not done yet");
        for _ in 1..99 {
            assert_eq!(plain.done(at(11)), None);
        }
        assert_eq!(plain.done(at(20)).as_deref(), Some("judging: 300/1000 samples (30%), 5.0/s, about 2 min left"));
        for _ in 0..100 {
            assert_eq!(plain.done(at(25)), None, "a tenth done, but too soon after the last line");
        }
        let line = plain.done(at(30)).unwrap();
        assert!(line.starts_with("judging: 401/1000 samples (40%)"), "{line}");
        let mut lines = 2;
        for second in 31..100_000 {
            if plain.position == 1000 {
                break;
            }
            lines += usize::from(plain.done(at(second)).is_some());
        }
        assert!(lines <= 10, "{lines} lines");
        let mut canonical = Plain::new(Phase::ComputingExpectedOutputs, 20, 0, start);
        let lines: Vec<String> = (1..=20).filter_map(|second| canonical.done(at(second * 6))).collect();
        assert_eq!(lines[0], "computing expected outputs: 2/20 canonical solutions (10%), about 2 min left");
        assert_eq!(lines.len(), 10);
        assert_eq!(lines.last().unwrap(), "computing expected outputs: 20/20 canonical solutions (100%)");
    }
}
