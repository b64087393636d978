//! How far a long phase of `passk evaluate` has got, on standard error: a bar on a
//! terminal; anywhere else (a CI log, a file) a plain line now and then, as a bar drawn
//! there is a mess of control characters and none at all is minutes of silence. The plain
//! lines are spaced both by a tenth of the work and by `PLAIN_EVERY`, whichever is
//! rarer, so a quick phase writes none and no log gets more than ten per phase.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressState, ProgressStyle};

use crate::say::say;

/// The least time between two plain lines.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// The phase whose progress is shown.
#[derive(Debug, Clone, Copy)]
pub enum Phase {
    /// The canonical solutions run on every input of HumanEval+ or MBPP+.
    ComputingExpectedOutputs,
    /// The samples run against their tests.
    Judging,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::ComputingExpectedOutputs => "computing expected outputs",
            Phase::Judging => "judging",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Phase::ComputingExpectedOutputs => "canonical solutions",
            Phase::Judging => "samples",
        }
    }
}

/// A phase's progress, told one unit of work at a time (`done`).
pub struct Progress {
    shown: Shown,
}

enum Shown {
    Bar(ProgressBar),
    Plain(Plain),
}

impl Progress {
    /// The progress of `phase` over `total` units, `done` of them done before it began (a
    /// resumed run's); its rate and time left count only what this run does.
    pub fn new(phase: Phase, total: u64, done: u64) -> Progress {
        let shown = if std::io::stderr().is_terminal() {
            Shown::Bar(bar(phase, total, done))
        } else {
            Shown::Plain(Plain::new(phase, total, done, Instant::now()))
        };
        Progress { shown }
    }

    /// The progress of `phase` over `total` units, shown above `below`'s while both go
    /// on: EvalPlus's expected outputs computed while samples are judged.
    pub fn above(below: &Progress, phase: Phase, total: u64) -> Progress {
        let shown = match &below.shown {
            Shown::Bar(below) => {
                let bars = MultiProgress::new();
                bars.add(below.clone());
                Shown::Bar(bars.insert(0, bar(phase, total, 0)))
            }
            Shown::Plain(_) => Shown::Plain(Plain::new(phase, total, 0, Instant::now())),
        };
        Progress { shown }
    }

    /// One more unit done.
    pub fn done(&mut self) {
        match &mut self.shown {
            Shown::Bar(bar) => bar.inc(1),
            Shown::Plain(plain) => {
                if let Some(line) = plain.done(Instant::now()) {
                    say!("{line}");
                }
            }
        }
    }

    /// The phase is over: a bar is cleared, as what follows says how it ended.
    pub fn finish(&self) {
        if let Shown::Bar(bar) = &self.shown {
            bar.finish_and_clear();
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
