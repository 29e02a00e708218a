//! Which failed attempts a client retries (server model): gRPC retries only
//! its `retryableStatusCodes`, Envoy only its `retry_on` conditions. A failed
//! attempt whose outcome is not retried ends its request as given up.

use std::fmt;
use std::str::FromStr;

use crate::base::error::BaseError;
use crate::control::Outcome;

/// The outcomes retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryOn {
    /// A server failure (an error reply).
    pub failure: bool,
    /// A rejection at a full queue (a throttling error).
    pub rejected: bool,
    /// A per-attempt timeout.
    pub timeout: bool,
}

/// The words, in the order the value is written.
pub const WORDS: [&str; 3] = ["failure", "rejected", "timeout"];

impl RetryOn {
    /// Every failed attempt is retried (herdsim's default, as before).
    pub const ALL: RetryOn = RetryOn {
        failure: true,
        rejected: true,
        timeout: true,
    };

    /// True if an attempt that ended with `outcome` may be retried.
    #[inline]
    pub fn retries(self, outcome: Outcome) -> bool {
        match outcome {
            Outcome::Success => false,
            Outcome::Failure => self.failure,
            Outcome::Rejected => self.rejected,
            Outcome::Timeout => self.timeout,
        }
    }

    fn flags(self) -> [bool; 3] {
        [self.failure, self.rejected, self.timeout]
    }
}

impl Default for RetryOn {
    fn default() -> Self {
        RetryOn::ALL
    }
}

impl fmt::Display for RetryOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<&str> = WORDS
            .iter()
            .zip(self.flags())
            .filter(|(_, on)| *on)
            .map(|(w, _)| *w)
            .collect();
        if words.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&words.join("+"))
        }
    }
}

impl FromStr for RetryOn {
    type Err = BaseError;

    /// `failure+rejected+timeout` (any of them, in any order), or `none`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let unknown = |word: &str| BaseError::UnknownName {
            what: "retry condition",
            text: word.to_string(),
            expected: "failure, rejected or timeout joined by +, or none".to_string(),
        };
        if text == "none" {
            return Ok(RetryOn {
                failure: false,
                rejected: false,
                timeout: false,
            });
        }
        let mut on = RetryOn {
            failure: false,
            rejected: false,
            timeout: false,
        };
        for word in text.split('+') {
            let slot = match word {
                "failure" => &mut on.failure,
                "rejected" => &mut on.rejected,
                "timeout" => &mut on.timeout,
                other => return Err(unknown(other)),
            };
            if *slot {
                return Err(unknown(&format!("{word} (given twice)")));
            }
            *slot = true;
        }
        Ok(on)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_read_back_as_written_and_say_what_is_retried() {
        for text in [
            "failure+rejected+timeout",
            "failure",
            "rejected+timeout",
            "none",
        ] {
            assert_eq!(text.parse::<RetryOn>().unwrap().to_string(), text);
        }
        let on: RetryOn = "timeout+failure".parse().unwrap();
        assert!(on.retries(Outcome::Failure) && on.retries(Outcome::Timeout));
        assert!(!on.retries(Outcome::Rejected) && !on.retries(Outcome::Success));
        for bad in ["", "5xx", "failure+failure", "failure,timeout"] {
            assert!(bad.parse::<RetryOn>().is_err(), "{bad}");
        }
    }
}
