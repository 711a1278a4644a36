//! `--shard i/n`: the part of a set of recordings one machine of a CI farm replays.
//!
//! The split: the recordings are sorted by their path relative to the root they were found
//! under (the directory or the `s3://` prefix given; a file given by itself counts as its
//! path as given), and the one at position `p` in that order (from 0) belongs to shard
//! `p mod n + 1`. So every machine that sees the same set makes the same split, whatever
//! order its file system or bucket lists them in and wherever the root sits; shards differ
//! in size by at most one; the union of shards 1..n is the whole set and no recording is in
//! two. Adding a recording moves the ones sorted after it to another shard, which is fine
//! for a farm that splits one checkout's set at a time. Decision 0060.

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count` (both from 1: `2/3` is the second of three).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: usize,
    count: usize,
}

/// Why a `--shard` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not `i/n` with two whole numbers.
    #[error("shard `{given}`: expected i/n with whole numbers, such as 1/3")]
    Syntax {
        /// The value given.
        given: String,
    },
    /// `n` is 0.
    #[error("shard `{given}`: the number of shards must be at least 1")]
    NoShards {
        /// The value given.
        given: String,
    },
    /// `i` is 0: shards are numbered from 1.
    #[error("shard `{given}`: shards are numbered from 1, so i must be at least 1")]
    IndexZero {
        /// The value given.
        given: String,
    },
    /// `i` is above `n`.
    #[error("shard `{given}`: shard {index} of {count} does not exist (i must be at most {count})")]
    IndexAboveCount {
        /// The value given.
        given: String,
        /// i.
        index: usize,
        /// n.
        count: usize,
    },
}

impl Shard {
    /// Shard `index` of `count`, checked as [`FromStr`] checks it.
    pub fn new(index: usize, count: usize) -> Result<Shard, ShardError> {
        let given = format!("{index}/{count}");
        if count == 0 {
            return Err(ShardError::NoShards { given });
        }
        if index == 0 {
            return Err(ShardError::IndexZero { given });
        }
        if index > count {
            return Err(ShardError::IndexAboveCount {
                given,
                index,
                count,
            });
        }
        Ok(Shard { index, count })
    }

    /// The shard's number, from 1.
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many shards there are.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The positions in `keys` (each recording's path relative to its root) that belong to
    /// this shard, in the keys' sorted order (see the module docs). Equal keys keep their
    /// order in `keys`.
    pub fn select(&self, keys: &[String]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|a, b| keys[*a].cmp(&keys[*b]));
        order
            .into_iter()
            .enumerate()
            .filter(|(position, _)| position % self.count == self.index - 1)
            .map(|(_, at)| at)
            .collect()
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(given: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax {
            given: given.to_owned(),
        };
        let (index, count) = given.split_once('/').ok_or_else(syntax)?;
        let number = |text: &str| {
            // Digits only: `+1` and ` 1` are not what a CI matrix writes.
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            text.parse::<usize>().map_err(|_| syntax())
        };
        let (index, count) = (number(index)?, number(count)?);
        Shard::new(index, count).map_err(|error| match error {
            ShardError::NoShards { .. } => ShardError::NoShards {
                given: given.to_owned(),
            },
            ShardError::IndexZero { .. } => ShardError::IndexZero {
                given: given.to_owned(),
            },
            ShardError::IndexAboveCount { index, count, .. } => ShardError::IndexAboveCount {
                given: given.to_owned(),
                index,
                count,
            },
            other => other,
        })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn refuses_bad_values_with_their_reason() {
        let error = |s: &str| s.parse::<Shard>().unwrap_err().to_string();
        assert_eq!(
            error("0/3"),
            "shard `0/3`: shards are numbered from 1, so i must be at least 1"
        );
        assert_eq!(
            error("4/3"),
            "shard `4/3`: shard 4 of 3 does not exist (i must be at most 3)"
        );
        assert_eq!(
            error("x/y"),
            "shard `x/y`: expected i/n with whole numbers, such as 1/3"
        );
        assert_eq!(
            error("1/0"),
            "shard `1/0`: the number of shards must be at least 1"
        );
        assert_eq!(
            error("2"),
            "shard `2`: expected i/n with whole numbers, such as 1/3"
        );
        assert_eq!("2/3".parse::<Shard>().unwrap(), Shard::new(2, 3).unwrap());
    }

    #[test]
    fn shards_cover_the_set_once_whatever_the_listing_order() {
        let names: Vec<String> = (0..23)
            .map(|i| format!("calls/{i:02}.wire.jsonl"))
            .collect();
        let mut reversed = names.clone();
        reversed.reverse();
        let mut seen = Vec::new();
        for index in 1..=4 {
            let shard = Shard::new(index, 4).unwrap();
            let picked: Vec<&String> = shard.select(&names).iter().map(|i| &names[*i]).collect();
            let picked_rev: Vec<&String> = shard
                .select(&reversed)
                .iter()
                .map(|i| &reversed[*i])
                .collect();
            assert_eq!(
                picked, picked_rev,
                "shard {shard} depends on the listing order"
            );
            assert!(picked.len() == 5 || picked.len() == 6);
            seen.extend(picked.into_iter().cloned());
        }
        seen.sort();
        assert_eq!(
            seen, names,
            "the shards' union is not the whole set, once each"
        );
        assert_eq!(
            Shard::new(2, 3)
                .unwrap()
                .select(&keys(&["c", "a", "b", "d"])),
            vec![2]
        );
    }
}
