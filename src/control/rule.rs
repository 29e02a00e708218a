//! A control's rule as text: `name:value,field:value,…`, such as
//! `earned:3000,cost:100,deposit:10`. Every control reads its fields through
//! [`Rule`], so each bad field gets the same one-line error naming the key,
//! the field and its range.

use crate::base::time::Micros;
use crate::base::time::{format_duration, parse_duration};
use crate::control::Nanos;
use crate::control::error::ControlError;

/// A rule split into its name, its first value and its named fields.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The scenario key it was given to.
    pub key: &'static str,
    /// The whole rule, for errors.
    pub text: String,
    /// The first field's name: the control.
    pub name: String,
    /// The first field's value.
    pub first: String,
    /// The other fields, in order.
    pub fields: Vec<(String, String)>,
}

impl Rule {
    /// Splits `text` given to `key`.
    pub fn read(key: &'static str, text: &str) -> Result<Rule, ControlError> {
        let bad = || ControlError {
            key,
            text: text.trim().to_string(),
            why: "expected NAME:VALUE,FIELD:VALUE,… (see `herdsim controls`)".to_string(),
        };
        let mut fields = text.trim().split(',').map(|f| {
            f.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        });
        let (name, first) = fields.next().flatten().ok_or_else(bad)?;
        let fields = fields.collect::<Option<Vec<_>>>().ok_or_else(bad)?;
        Ok(Rule {
            key,
            text: text.trim().to_string(),
            name,
            first,
            fields,
        })
    }

    /// The error for a rule whose name is none of `names`.
    pub fn unknown(&self, names: &[&str]) -> ControlError {
        ControlError {
            key: self.key,
            text: self.text.clone(),
            why: format!(
                "expected one of {}, or none (see `herdsim controls`)",
                names.join(", ")
            ),
        }
    }

    /// Checks the fields are `required` (all of them) and `optional` ones,
    /// each at most once; else the error shows `syntax`.
    pub fn expect(
        &self,
        required: &[&str],
        optional: &[&str],
        syntax: &'static str,
    ) -> Result<(), ControlError> {
        let known = |k: &str| required.contains(&k) || optional.contains(&k);
        let once = |k: &str| self.fields.iter().filter(|(f, _)| f == k).count() <= 1;
        if self.fields.iter().all(|(k, _)| known(k) && once(k))
            && required
                .iter()
                .all(|r| self.fields.iter().any(|(k, _)| k == r))
        {
            Ok(())
        } else {
            Err(ControlError {
                key: self.key,
                text: self.text.clone(),
                why: format!("expected {syntax}"),
            })
        }
    }

    /// The value of `field` (the rule's name for its first value), if given.
    fn raw(&self, field: &str) -> Option<&str> {
        if field == self.name {
            return Some(&self.first);
        }
        self.fields
            .iter()
            .find(|(k, _)| k == field)
            .map(|(_, v)| v.as_str())
    }

    fn range_error(&self, field: &str, range: &str) -> ControlError {
        let what = if field == self.name {
            format!("the value of {field}")
        } else {
            field.to_string()
        };
        ControlError {
            key: self.key,
            text: self.text.clone(),
            why: format!("{what} must be {range}"),
        }
    }

    /// A whole number of `field` in `lo..=hi`, if given.
    pub fn count_or(&self, field: &str, lo: u64, hi: u64) -> Result<Option<u64>, ControlError> {
        let range = || self.range_error(field, &format!("a whole number from {lo} to {hi}"));
        self.raw(field)
            .map(|v| {
                v.replace('_', "")
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (lo..=hi).contains(n))
                    .ok_or_else(range)
            })
            .transpose()
    }

    /// A whole number of `field` in `lo..=hi`.
    pub fn count(&self, field: &str, lo: u64, hi: u64) -> Result<u64, ControlError> {
        self.count_or(field, lo, hi)?
            .ok_or_else(|| self.range_error(field, "given"))
    }

    /// A finite number of `field` in `lo..=hi`.
    pub fn number(&self, field: &str, lo: f64, hi: f64) -> Result<f64, ControlError> {
        let range = || self.range_error(field, &format!("a number from {lo} to {hi}"));
        self.raw(field)
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|x| x.is_finite() && (lo..=hi).contains(x))
            .ok_or_else(range)
    }

    /// A number of `field` in `lo..=hi` if given, else `default`.
    pub fn number_or(
        &self,
        field: &str,
        lo: f64,
        hi: f64,
        default: f64,
    ) -> Result<f64, ControlError> {
        match self.raw(field) {
            Some(_) => self.number(field, lo, hi),
            None => Ok(default),
        }
    }

    /// The word `field` is given as, one of `choices`, else `default`.
    pub fn word_or(
        &self,
        field: &str,
        choices: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str, ControlError> {
        match self.raw(field) {
            None => Ok(default),
            Some(v) => {
                choices.iter().copied().find(|c| *c == v).ok_or_else(|| {
                    self.range_error(field, &format!("one of {}", choices.join(", ")))
                })
            }
        }
    }

    /// True if `field` is given.
    pub fn has(&self, field: &str) -> bool {
        self.raw(field).is_some()
    }

    /// A duration of `field` from `lo` to `hi` µs, in ns.
    pub fn duration(&self, field: &str, lo_us: u64, hi_us: u64) -> Result<Nanos, ControlError> {
        let (lo, hi) = (Micros::from_ticks(lo_us), Micros::from_ticks(hi_us));
        let range = || {
            self.range_error(
                field,
                &format!(
                    "a duration from {} to {}",
                    format_duration(lo),
                    format_duration(hi)
                ),
            )
        };
        self.raw(field)
            .and_then(|v| parse_duration(v).ok())
            .filter(|us| (lo..=hi).contains(us))
            .map(Nanos::of_us)
            .ok_or_else(range)
    }
}

/// A duration in ns as a rule shows it (whole µs, as rules give them).
pub fn show_duration(ns: Nanos) -> String {
    format_duration(ns.whole_us())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_checked_and_refused_in_one_line() {
        let rule = Rule::read("budget", " envoy:0.2, min:3 ").unwrap();
        assert_eq!((rule.name.as_str(), rule.first.as_str()), ("envoy", "0.2"));
        assert!(rule.expect(&["min"], &[], "envoy:P,min:N").is_ok());
        assert!(
            rule.expect(&["min", "x"], &[], "s").is_err(),
            "missing field"
        );
        assert!(rule.expect(&[], &[], "s").is_err(), "unknown field");
        assert_eq!(rule.number("envoy", 0.0, 1.0), Ok(0.2));
        assert_eq!(rule.count("min", 0, 10), Ok(3));
        let err = rule.count("min", 5, 10).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid budget 'envoy:0.2, min:3': min must be a whole number from 5 to 10"
        );
        for bad in ["", "envoy", "envoy:1,min", ",min:3"] {
            let err = Rule::read("budget", bad).unwrap_err().to_string();
            assert!(
                err.starts_with("invalid budget") && !err.contains('\n'),
                "{err}"
            );
        }
        let twice = Rule::read("budget", "envoy:0.2,min:3,min:4").unwrap();
        assert!(
            twice.expect(&["min"], &[], "s").is_err(),
            "a field given twice"
        );
        let window = Rule::read("breaker", "windowed:0.1,window:200ms").unwrap();
        assert_eq!(
            window.duration("window", 1, 60_000_000),
            Ok(Nanos::from_ms(200))
        );
        assert!(window.duration("window", 1, 1_000).is_err());
        assert_eq!(show_duration(Nanos::from_ms(200)), "200ms");
    }
}
