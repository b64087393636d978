//! The samples read and not yet handed to the workers, those expected to take longest
//! first.
//!
//! A run ends when its last worker does. Where the problems' canonical solutions were
//! timed on their tests (EvalPlus's), a few problems take seconds where the rest take
//! milliseconds: started last, one of them keeps a worker busy while the others idle;
//! started first, the short ones fill in around it. Samples expected to take as long as
//! each other (every sample of a set without timings) go in the order they were read.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::Duration;

pub struct LongestFirst<T> {
    heap: BinaryHeap<Entry<T>>,
    read: u64,
}

impl<T> Default for LongestFirst<T> {
    fn default() -> LongestFirst<T> {
        LongestFirst::new()
    }
}

impl<T> LongestFirst<T> {
    pub fn new() -> LongestFirst<T> {
        LongestFirst { heap: BinaryHeap::new(), read: 0 }
    }

    pub fn push(&mut self, expected: Option<Duration>, item: T) {
        self.heap.push(Entry { rank: (expected.unwrap_or_default(), Reverse(self.read)), item });
        self.read += 1;
    }

    pub fn pop(&mut self) -> Option<T> {
        self.heap.pop().map(|entry| entry.item)
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

struct Entry<T> {
    rank: (Duration, Reverse<u64>),
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.rank == other.rank
    }
}

impl<T> Eq for Entry<T> {}

impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank.cmp(&other.rank)
    }
}

#[cfg(test)]
mod tests {
    use super::LongestFirst;
    use std::time::Duration;

    #[test]
    fn the_longest_expected_go_first_and_equals_in_the_order_read() {
        let mut queue = LongestFirst::new();
        let seconds = |s: f64| Some(Duration::from_secs_f64(s));
        for (name, expected) in
            [("a", None), ("b", seconds(0.5)), ("c", None), ("d", seconds(3.0)), ("e", seconds(0.5))]
        {
            queue.push(expected, name);
        }
        let order: Vec<_> = std::iter::from_fn(|| queue.pop()).collect();
        assert_eq!(order, ["d", "b", "e", "a", "c"]);
        assert!(queue.is_empty());
    }
}
