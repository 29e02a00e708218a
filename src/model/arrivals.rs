//! When clients make their first call.

use std::fmt;
use std::str::FromStr;

use crate::base::draws::Draws;
use crate::base::format::csv_number;
use crate::base::time::{Micros, format_duration, parse_duration};
use crate::model::error::ModelError;

/// How the clients' first calls are spread in time.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Arrivals {
    /// Every first call at t = 0, in client order: the herd after an outage.
    #[default]
    Herd,
    /// First calls uniform on `[0, window]`, each drawn independently.
    Uniform {
        /// The spread, µs.
        window_us: Micros,
    },
    /// First calls as a Poisson process: exponential gaps of mean `1/rate` ms,
    /// client 0 first.
    Poisson {
        /// Arrivals per ms.
        rate_per_ms: f64,
    },
}

/// What `--arrivals` accepts, for error messages.
pub const ARRIVALS_SYNTAX: &str = "expected herd, uniform:<duration> (such as uniform:10s) or poisson:<arrivals per ms> (such as poisson:0.5)";

/// Every client's first-call time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstCalls {
    /// Every client at t = 0 (the herd): no storage per client.
    AllAtZero {
        /// How many clients.
        clients: u32,
    },
    /// Client `c` at `times[c]`, µs.
    At(Vec<Micros>),
}

impl FirstCalls {
    /// How many clients.
    #[inline]
    pub fn clients(&self) -> u32 {
        match self {
            FirstCalls::AllAtZero { clients } => *clients,
            FirstCalls::At(times) => times.len() as u32,
        }
    }

    /// Client `client`'s first call, µs.
    #[inline]
    pub fn of(&self, client: u32) -> Micros {
        match self {
            FirstCalls::AllAtZero { .. } => Micros::ZERO,
            FirstCalls::At(times) => times[client as usize],
        }
    }
}

impl Arrivals {
    /// Each client's first-call time, drawn from the environment's `draws`.
    pub fn first_calls<D: Draws>(&self, clients: u32, draws: &mut D) -> FirstCalls {
        FirstCalls::At(match *self {
            Arrivals::Herd => return FirstCalls::AllAtZero { clients },
            Arrivals::Uniform { window_us } => (0..clients)
                .map(|_| draws.uniform_us(Micros::ZERO, window_us))
                .collect(),
            Arrivals::Poisson { rate_per_ms } => {
                let mean_gap_us = 1_000.0 / rate_per_ms;
                let mut t = 0.0f64;
                (0..clients)
                    .map(|i| {
                        if i > 0 {
                            t += draws.exp1() * mean_gap_us;
                        }
                        Micros::from_ticks(t.round() as u64)
                    })
                    .collect()
            }
        })
    }

    /// True for the herd, whose clients all start at t = 0.
    pub fn is_herd(&self) -> bool {
        matches!(self, Arrivals::Herd)
    }
}

impl FromStr for Arrivals {
    type Err = ModelError;

    fn from_str(text: &str) -> Result<Self, ModelError> {
        let text = text.trim();
        if text == "herd" {
            return Ok(Arrivals::Herd);
        }
        let (kind, value) = text.split_once(':').unwrap_or((text, ""));
        match (kind, value) {
            ("uniform", window) => {
                let window_us = parse_duration(window).map_err(ModelError::UniformWindow)?;
                if window_us == Micros::ZERO {
                    return Err(ModelError::EmptyUniformWindow);
                }
                Ok(Arrivals::Uniform { window_us })
            }
            ("poisson", rate) => match rate.parse::<f64>() {
                Ok(r) if r.is_finite() && r > 0.0 && r <= 1e6 => {
                    Ok(Arrivals::Poisson { rate_per_ms: r })
                }
                _ => Err(ModelError::PoissonRate {
                    rate: rate.to_string(),
                }),
            },
            _ => Err(ModelError::Arrivals {
                text: text.to_string(),
            }),
        }
    }
}

impl fmt::Display for Arrivals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arrivals::Herd => f.write_str("herd"),
            Arrivals::Uniform { window_us } => write!(f, "uniform:{}", format_duration(*window_us)),
            Arrivals::Poisson { rate_per_ms } => write!(f, "poisson:{}", csv_number(*rate_per_ms)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::job_rng;

    #[test]
    fn syntax_round_trips_and_bad_values_say_what_is_accepted() {
        for text in ["herd", "uniform:10s", "uniform:250ms", "poisson:0.5"] {
            assert_eq!(text.parse::<Arrivals>().unwrap().to_string(), text);
        }
        for bad in [
            "storm",
            "poisson:-1",
            "poisson:0",
            "poisson:x",
            "uniform:0",
            "uniform:ten",
            "herd:3",
            "herd:",
        ] {
            let err = bad.parse::<Arrivals>().unwrap_err().to_string();
            assert!(!err.contains('\n') && err.len() > 10, "{bad}: {err}");
        }
    }

    fn times(first_calls: FirstCalls) -> Vec<Micros> {
        (0..first_calls.clients())
            .map(|c| first_calls.of(c))
            .collect()
    }

    #[test]
    fn the_herd_starts_together() {
        let herd = Arrivals::Herd.first_calls(3, &mut job_rng(1));
        assert_eq!(herd.clients(), 3);
        assert_eq!(times(herd), [0, 0, 0].map(Micros::from_ticks));
    }

    #[test]
    fn uniform_arrivals_fill_their_window() {
        let times = times(
            Arrivals::Uniform {
                window_us: Micros::from_s(1),
            }
            .first_calls(10_000, &mut job_rng(1)),
        );
        assert!(times.iter().all(|&t| t <= Micros::from_s(1)));
        let mean = times.iter().sum::<Micros>().ticks() as f64 / 1e4;
        // Uniform on [0, 1 s]: mean 0.5 s, SE 0.289 s/√10,000 = 2.9 ms; 4 SE.
        assert!((mean - 500_000.0).abs() < 4.0 * 2_887.0, "{mean}");
    }

    #[test]
    fn poisson_gaps_have_the_rate_asked_for() {
        // 2 per ms: 10,000 arrivals span about 5 s. The sum of 9,999 exponential
        // gaps of mean 0.5 ms has sd 0.5 ms·√9,999 = 50 ms; 4 SD.
        let times =
            times(Arrivals::Poisson { rate_per_ms: 2.0 }.first_calls(10_000, &mut job_rng(2)));
        assert_eq!(times[0], Micros::ZERO);
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        let span = (*times.last().unwrap()).ticks() as f64;
        assert!((span - 4_999_500.0).abs() < 4.0 * 50_000.0, "{span}");
    }
}
