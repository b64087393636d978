//! A share of a run, `--shard K/N`: so that a run too large for one machine is split
//! among N that need not talk to each other, and `passk merge` joins their results.
//!
//! Shards split by problem, never within one, so that a problem's samples are judged,
//! deduplicated and counted together: the problems the samples answer, in the problem
//! set's order, are dealt out in turn, the first to shard 1, the second to shard 2, and
//! the (N+1)th to shard 1 again. The deal depends only on the samples and the set, so
//! every machine that runs shard K of N runs the same samples.

use std::fmt;
use std::str::FromStr;

/// Shard `index` (from 1) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Whether the problem dealt `rank`th (from 0, among the problems the samples
    /// answer) is this shard's.
    pub fn holds(&self, rank: usize) -> bool {
        rank % self.count == self.index - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N`, with N at least 1 and K from 1 to N; the error says what is wrong and what
    /// is meant.
    fn from_str(text: &str) -> Result<Shard, String> {
        let form = "a shard is K/N, shard K (from 1 to N) of N, such as 2/8";
        let (index, count) = text.split_once('/').ok_or_else(|| format!("{text:?} is not K/N: {form}"))?;
        let whole = |part: &str| part.trim().parse::<usize>().map_err(|_| format!("{text:?} is not K/N: {form}"));
        let (index, count) = (whole(index)?, whole(count)?);
        if count == 0 {
            return Err(format!("{text:?} asks for 0 shards: {form}"));
        }
        if index == 0 || index > count {
            return Err(format!("{text:?}: shards of {count} are numbered 1 to {count} ({form})"));
        }
        Ok(Shard { index, count })
    }
}

impl serde::Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_are_dealt_in_turn() {
        let shards: Vec<Shard> = (1..=3).map(|index| Shard { index, count: 3 }).collect();
        let dealt: Vec<usize> =
            (0..7).map(|rank| shards.iter().position(|shard| shard.holds(rank)).unwrap() + 1).collect();
        assert_eq!(dealt, [1, 2, 3, 1, 2, 3, 1]);
    }

    #[test]
    fn only_k_of_n_with_k_from_1_to_n_reads() {
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        assert_eq!("1/1".parse(), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/3", "4/3", "x", "3", "1/0", "-1/3", "1/3/4"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(
            "4/3".parse::<Shard>().unwrap_err(),
            "\"4/3\": shards of 3 are numbered 1 to 3 (a shard is K/N, shard K (from 1 to N) of N, such as 2/8)"
        );
    }
}
