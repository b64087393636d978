//! Running each distinct program once. At n = 200 and a low temperature, many samples of
//! a problem are the same text; their program, and so their verdict, is the same.

use std::collections::{HashMap, VecDeque};

use passk_runner::{Program, Tests, Verdict};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// How many verdicts are kept for reuse. Samples of a problem usually sit together, so
/// a bounded memory catches nearly every repeat while keeping the harness's memory flat
/// however many samples there are.
const REMEMBERED: usize = 50_000;

pub type Key = [u8; 32];

pub fn key(program: &Program) -> Key {
    let problem = program.problem();
    let mut hasher = Sha256::new();
    let tests = match &problem.tests {
        Tests::Check(suite) | Tests::Calls(suite) | Tests::Stdio(suite) => suite.id.as_str(),
    };
    let language = program.toolchain().map_or("", |toolchain| toolchain.language.as_str());
    for part in [program.candidate_code(), &problem.prompt, tests, &problem.entry_point, language] {
        // Each part's length first, so that no two programs hash the same parts alike.
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().into()
}

/// A sample waiting for, or given, a verdict.
#[derive(Debug)]
pub struct Sample {
    pub index: usize,
    pub fields: Map<String, Value>,
}

/// What to do with a sample.
#[derive(Debug)]
pub enum Offer {
    /// Run it: no verdict for its program is known or on its way.
    Run(Sample),
    /// Its verdict is already known.
    Known(Sample, Box<Verdict>),
    /// Its program is running for an earlier sample; it gets the same verdict.
    Waiting,
}

#[derive(Debug, Default)]
pub struct Dedup {
    enabled: bool,
    known: HashMap<Key, Verdict>,
    order: VecDeque<Key>,
    waiting: HashMap<Key, Vec<Sample>>,
}

impl Dedup {
    pub fn new(enabled: bool) -> Dedup {
        Dedup { enabled, ..Dedup::default() }
    }

    pub fn offer(&mut self, key: Key, sample: Sample) -> Offer {
        if self.enabled {
            if let Some(verdict) = self.known.get(&key) {
                return Offer::Known(sample, Box::new(verdict.clone()));
            }
            if let Some(waiting) = self.waiting.get_mut(&key) {
                waiting.push(sample);
                return Offer::Waiting;
            }
            self.waiting.insert(key, Vec::new());
        }
        Offer::Run(sample)
    }

    /// The verdict for `key` has come: returns the samples that were waiting for it.
    pub fn settle(&mut self, key: Key, verdict: &Verdict) -> Vec<Sample> {
        if !self.enabled {
            return Vec::new();
        }
        let waiting = self.waiting.remove(&key).unwrap_or_default();
        if self.known.insert(key, verdict.clone()).is_none() {
            self.order.push_back(key);
            if self.order.len() > REMEMBERED {
                if let Some(oldest) = self.order.pop_front() {
                    self.known.remove(&oldest);
                }
            }
        }
        waiting
    }
}

#[cfg(test)]
mod tests {
    use passk_runner::Status;

    use super::*;

    fn sample(index: usize) -> Sample {
        Sample { index, fields: Map::new() }
    }

    fn passed() -> Verdict {
        Verdict { status: Status::Passed, result: "passed".into(), ..Verdict::infrastructure(String::new()) }
    }

    /// The first of identical programs runs; one offered while it runs waits for its
    /// verdict, and one offered after is given it at once.
    #[test]
    fn identical_programs_run_once_and_share_the_verdict() {
        let mut dedup = Dedup::new(true);
        let key = [1; 32];
        assert!(matches!(dedup.offer(key, sample(0)), Offer::Run(Sample { index: 0, .. })));
        assert!(matches!(dedup.offer(key, sample(1)), Offer::Waiting));
        assert!(matches!(dedup.offer([2; 32], sample(2)), Offer::Run(Sample { index: 2, .. })));
        let waited: Vec<usize> = dedup.settle(key, &passed()).into_iter().map(|sample| sample.index).collect();
        assert_eq!(waited, [1]);
        match dedup.offer(key, sample(3)) {
            Offer::Known(Sample { index: 3, .. }, verdict) => assert!(verdict.passed()),
            other => panic!("the verdict is known: {other:?}"),
        }
    }

    #[test]
    fn switched_off_every_sample_runs() {
        let mut dedup = Dedup::new(false);
        for index in 0..3 {
            assert!(matches!(dedup.offer([1; 32], sample(index)), Offer::Run(_)));
        }
        assert!(dedup.settle([1; 32], &passed()).is_empty());
        assert!(matches!(dedup.offer([1; 32], sample(3)), Offer::Run(_)));
    }

    /// Memory stays bounded: past `REMEMBERED` verdicts, the oldest is forgotten and its
    /// program runs again.
    #[test]
    fn the_oldest_verdict_is_forgotten_past_the_bound() {
        let mut dedup = Dedup::new(true);
        let key = |n: usize| {
            let mut key = [0; 32];
            key[..8].copy_from_slice(&(n as u64).to_le_bytes());
            key
        };
        for n in 0..=REMEMBERED {
            assert!(matches!(dedup.offer(key(n), sample(n)), Offer::Run(_)));
            dedup.settle(key(n), &passed());
        }
        assert!(matches!(dedup.offer(key(0), sample(0)), Offer::Run(_)), "the oldest is forgotten");
        assert!(matches!(dedup.offer(key(REMEMBERED), sample(1)), Offer::Known(..)), "the newest is kept");
    }
}
