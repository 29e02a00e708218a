//! Backoff policies: given the retry number, how long a failed client waits.
//!
//! Each policy is a small value type implementing [`Backoff`], one file each.
//! A policy draws from a [`Draws`] it is handed, so a run's generator is the
//! engine's and a test can script the draws. Per-client memory between retries
//! (the decorrelated walk) is the policy's associated [`Backoff::Walk`] type,
//! carried in each client's pending event, so stateless policies cost no
//! memory and the event loop reads no array indexed by client.
//!
//! Every policy's delay lies in `[0, cap]` but gRPC's two, whose ±20% jitter
//! is applied after their cap, as gRPC specifies (up to `1.2·cap`). The
//! proportional jitter factor of seed 003 ([`ProportionalJitter`]) wraps any
//! policy and is applied after the cap, so it may overshoot by `factor·max/2`.

mod any;
mod aws_standard_2026;
mod constant;
mod decorrelated;
mod decorrelated_attempt;
mod decorrelated_ceiling;
mod decorrelated_v2;
mod envoy;
mod equal;
mod fibonacci;
mod full;
mod grpc_connection;
mod grpc_retry;
mod jitter_factor;
mod linear;
mod memoryless;
mod no_backoff;
mod none;
mod polly_constant_jitter;
mod polly_jitter;
mod polly_linear_jitter;
mod resilience4j_exponential;
mod resilience4j_exponential_randomized;
mod resilience4j_interval;
mod resilience4j_randomized;

pub use any::{AnyPolicy, AnyWalk, WalkBits};
pub use aws_standard_2026::Aws2026;
pub use constant::Constant;
pub use decorrelated::{CapWalk, DecorrelatedJitter};
pub use decorrelated_attempt::DecorrelatedAttempt;
pub use decorrelated_ceiling::DecorrelatedCeiling;
pub use decorrelated_v2::DecorrelatedV2;
pub use envoy::{EnvoyBackoff, envoy_ms};
pub use equal::EqualJitter;
pub use fibonacci::Fibonacci;
pub use full::FullJitter;
pub use grpc_connection::GrpcConnection;
pub use grpc_retry::GrpcRetry;
pub use jitter_factor::ProportionalJitter;
pub use linear::Linear;
pub use memoryless::Memoryless;
pub use no_backoff::NoBackoff;
pub use none::NoJitter;
pub use polly_constant_jitter::PollyConstantJitter;
pub use polly_linear_jitter::PollyLinearJitter;
pub use resilience4j_exponential::Resilience4jExponential;
pub use resilience4j_exponential_randomized::Resilience4jExponentialRandomized;
pub use resilience4j_randomized::Resilience4jRandomized;

/// resilience4j's uncapped exponential interval of retry `retry`, ms, from
/// a base of `base_ms` (for readers that need the longest wait).
pub(crate) fn exponential_ms_of(base_ms: i64, multiplier: f64, retry: u32) -> i64 {
    resilience4j_interval::exponential_ms(base_ms, multiplier, retry, i64::MAX)
}

/// A duration in µs as resilience4j's whole ms (at least 1).
pub(crate) fn millis_of(us: Micros) -> i64 {
    resilience4j_interval::millis(us)
}

use std::fmt;
use std::str::FromStr;

use crate::base::draws::Draws;
use crate::base::error::BaseError;
use crate::base::names::{named, parse_name};
use crate::base::time::Micros;

/// A backoff policy: the delay before each retry of one client.
pub trait Backoff: Clone + Send + Sync + 'static {
    /// What a client remembers between retries under this policy (`()` when
    /// the delay depends on the retry number alone).
    type Walk: WalkBits;

    /// False if the policy never draws: clients with the same retry number
    /// and memory then get the same delay, so a wave of them can move as one
    /// event (see [`crate::sim::wave`]).
    const JITTERED: bool = true;

    /// The memory of a client that has not retried yet.
    fn start(&self) -> Self::Walk;

    /// The delay before retry `retry` (1 for the first retry, after the first
    /// call failed), updating the client's `walk`.
    fn delay<D: Draws + ?Sized>(&self, retry: u32, walk: &mut Self::Walk, draws: &mut D) -> Micros;

    /// [`Self::delay`] when the caller knows why the attempt failed: only a
    /// policy whose schedule depends on it (`aws-2026`) overrides this, so
    /// every other policy draws exactly as it does without a cause.
    #[inline]
    fn delay_after<D: Draws + ?Sized>(
        &self,
        retry: u32,
        _cause: Cause,
        walk: &mut Self::Walk,
        draws: &mut D,
    ) -> Micros {
        self.delay(retry, walk, draws)
    }
}

/// Why the attempt before a retry failed, as a policy may care: a policy
/// sits below the controls' [`crate::control::Outcome`], so the simulator
/// maps that onto this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// A throttling error: herdsim's refusal at a full queue.
    Throttle,
    /// Any other failure: an error reply or a timeout.
    Other,
}

/// The capped exponential ceiling of retry `retry` (≥ 1):
/// `min(cap, base·2^(retry−1))`, computed without overflow at any retry number
/// (the doubling stops at the cap; seed 004's edge case).
#[inline]
pub fn exponential_ceiling(base: Micros, cap: Micros, retry: u32) -> Micros {
    let doublings = retry.saturating_sub(1);
    if doublings < 64 && base <= cap >> doublings {
        base << doublings
    } else {
        cap
    }
}

/// The capped ceiling of retry `retry` (≥ 1) growing by `multiplier`:
/// `min(cap, ⌊base·m^(retry−1)⌋)`. A multiplier of 2 is
/// [`exponential_ceiling`]'s integer doubling, bit for bit the ceiling
/// before the multiplier existed; any other computes `m^(retry−1)` by
/// repeated squaring, as Go's `math.Pow` takes a whole exponent (IEEE
/// products, each correctly rounded, so the same on every machine), and an
/// overflow to infinity is the cap.
#[inline]
pub fn multiplied_ceiling(base: Micros, cap: Micros, multiplier: f64, retry: u32) -> Micros {
    if multiplier == 2.0 {
        return exponential_ceiling(base, cap, retry);
    }
    let mut exponent = retry.saturating_sub(1);
    let (mut growth, mut square) = (1.0f64, multiplier);
    while exponent != 0 {
        if exponent & 1 == 1 {
            growth *= square;
        }
        square *= square;
        exponent >>= 1;
    }
    let ceiling = base.ticks() as f64 * growth;
    if ceiling >= cap.ticks() as f64 {
        cap
    } else {
        Micros::from_ticks(ceiling as u64)
    }
}

/// A name that once meant one policy and could mean two: what to choose.
const AMBIGUOUS: [(&str, &str); 1] = [(
    "grpc",
    "grpc-connection (gRPC's connection backoff) or grpc-retry (gRPC's retry policy, gRFC A6)",
)];

/// The policies herdsim knows, by their command-line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    /// Plain capped exponential, no jitter.
    None,
    /// Equal jitter: half the ceiling fixed, half drawn.
    Equal,
    /// Full jitter: the whole ceiling drawn.
    Full,
    /// Decorrelated jitter: a random walk from the previous delay.
    Decorrelated,
    /// Decorrelated jitter with the cap bounding the draw (Polly.Contrib).
    DecorrelatedCeiling,
    /// Polly's DecorrelatedJitterBackoffV2.
    DecorrelatedV2,
    /// Seed 002's decorrelated jitter as its `simulate()` calls it: with the
    /// attempt number where the previous delay belongs.
    DecorrelatedAttempt,
    /// gRPC's connection backoff.
    GrpcConnection,
    /// gRPC's retry policy (gRFC A6).
    GrpcRetry,
    /// Fibonacci backoff.
    Fibonacci,
    /// No delay at all (the AWS simulator's baseline).
    NoBackoff,
    /// The same delay every time.
    Constant,
    /// A delay growing by a fixed step.
    Linear,
    /// Envoy's jittered exponential backoff (route `retry_back_off`).
    Envoy,
    /// resilience4j's exponential interval, truncated to ms at every step.
    Resilience4jExponential,
    /// resilience4j's randomized interval.
    Resilience4jRandomized,
    /// resilience4j's exponential randomized interval (cap after the draw).
    Resilience4jExponentialRandomized,
    /// Polly v8's constant delay with jitter.
    PollyConstantJitter,
    /// Polly v8's linear delay with jitter.
    PollyLinearJitter,
    /// The AWS SDKs' 2026 standard backoff: a base by the failure's cause.
    Aws2026,
    /// Exponential delays of mean base: the retrial orbit.
    Memoryless,
}

/// What `herdsim policies` and `--help` say of a policy.
struct PolicyInfo {
    kind: PolicyKind,
    name: &'static str,
    formula: &'static str,
    parameters: &'static str,
    summary: &'static str,
}

/// Every policy's description, in [`PolicyKind::ALL`] order.
const POLICIES: [PolicyInfo; 21] = [
    PolicyInfo {
        kind: PolicyKind::None,
        name: "none",
        formula: "d = c_k",
        parameters: "base, cap, multiplier, first-exponent",
        summary: "plain capped exponential; every client that failed together retries together",
    },
    PolicyInfo {
        kind: PolicyKind::Equal,
        name: "equal",
        formula: "d = U[c_k/2, c_k]  (c_k/2 fixed, c_k/2 drawn)",
        parameters: "base, cap, multiplier, first-exponent, cap-mode",
        summary: "equal jitter: a guaranteed wait of half the ceiling, half the spread of full",
    },
    PolicyInfo {
        kind: PolicyKind::Full,
        name: "full",
        formula: "d = U[0, c_k]",
        parameters: "base, cap, multiplier, first-exponent, cap-mode",
        summary: "full jitter: uniform over the whole window (the AWS SDK default; with \
                  --multiplier, gRFC A6's retry policy before 2024)",
    },
    PolicyInfo {
        kind: PolicyKind::Decorrelated,
        name: "decorrelated",
        formula: "d = min(cap, U[base, max(base, 3·prev)]); prev starts at base, then is d",
        parameters: "base, cap",
        summary: "decorrelated jitter: a random walk from the previous delay (Brooker, 2015)",
    },
    PolicyInfo {
        kind: PolicyKind::DecorrelatedCeiling,
        name: "decorrelated-ceiling",
        formula: "d = U[base, min(cap, 3·prev)]; prev starts at base, then is d",
        parameters: "base, cap",
        summary: "Polly.Contrib's AWS variant: the cap bounds the draw, so delays do not bunch at the cap",
    },
    PolicyInfo {
        kind: PolicyKind::DecorrelatedV2,
        name: "decorrelated-v2",
        formula: "t = (k−1) + U[0,1); next = 2^t·tanh(√(4t)); d = min(cap, (next − prev)·base/1.4); prev = next",
        parameters: "base (Polly's median first delay; the formula's own median is 0.897·base), cap",
        summary: "Polly's DecorrelatedJitterBackoffV2: exponential on average, without clustering",
    },
    PolicyInfo {
        kind: PolicyKind::DecorrelatedAttempt,
        name: "decorrelated-attempt",
        formula: "d = min(cap, U between base and 3·(k−1) ms)  (prev replaced by the attempt number)",
        parameters: "base, cap",
        summary: "seed 002's simulate() as written: decorrelated jitter handed the attempt number, not the previous delay",
    },
    PolicyInfo {
        kind: PolicyKind::GrpcConnection,
        name: "grpc-connection",
        formula: "k = 1: d = b = min(base, cap); then b = min(b·1.6, cap), d = b·U[0.8, 1.2]",
        parameters: "base, cap",
        summary: "gRPC's connection backoff (defaults base 1s, cap 120s); the first retry is not \
                  jittered",
    },
    PolicyInfo {
        kind: PolicyKind::GrpcRetry,
        name: "grpc-retry",
        formula: "d = c_k·U[0.8, 1.2], the first retry too",
        parameters: "base (initialBackoff), cap (maxBackoff), multiplier (backoffMultiplier)",
        summary: "gRPC's retry policy (gRFC A6 since 2024; C-core, grpc-go 1.69+, grpc-java 1.80+)",
    },
    PolicyInfo {
        kind: PolicyKind::Fibonacci,
        name: "fibonacci",
        formula: "d = min(cap, base·F_k), F = 1, 1, 2, 3, 5, 8, …",
        parameters: "base, cap",
        summary: "Fibonacci backoff (backon, tokio-retry): grows ~1.618× per retry",
    },
    PolicyInfo {
        kind: PolicyKind::NoBackoff,
        name: "no-backoff",
        formula: "d = 0",
        parameters: "none",
        summary: "retry at once (the AWS simulator's None); needs --max-attempts or --resource occ",
    },
    PolicyInfo {
        kind: PolicyKind::Constant,
        name: "constant",
        formula: "d = min(cap, base)",
        parameters: "base, cap",
        summary: "a fixed delay; no backoff",
    },
    PolicyInfo {
        kind: PolicyKind::Linear,
        name: "linear",
        formula: "d = min(cap, base + (k−1)·step)",
        parameters: "base, step, cap",
        summary: "a delay that grows by a fixed step each retry",
    },
    PolicyInfo {
        kind: PolicyKind::Envoy,
        name: "envoy",
        formula: "d = U{0, …, n_k − 1} ms; n_1 = base, n_(k+1) = 2·n_k if n_k < ⌊cap/2⌋ else cap \
                  (base and cap in whole ms)",
        parameters: "base (base_interval, default 25ms), cap (max_interval, default 10 × base)",
        summary: "Envoy's route retry_back_off as its code runs it \
                  (JitteredExponentialBackOffStrategy): full jitter below a doubling ceiling",
    },
    PolicyInfo {
        kind: PolicyKind::Resilience4jExponential,
        name: "resilience4j-exponential",
        formula: "d = min(cap, i_k) ms, i_1 = base, i_(k+1) = ⌊i_k·m⌋ (truncated at every step)",
        parameters: "base (waitDuration, whole ms), cap (exponentialMaxWaitDuration), \
                     multiplier (exponentialBackoffMultiplier; resilience4j's default is 1.5)",
        summary: "resilience4j's IntervalFunction.ofExponentialBackoff (Spring: \
                  enableExponentialBackoff)",
    },
    PolicyInfo {
        kind: PolicyKind::Resilience4jRandomized,
        name: "resilience4j-randomized",
        formula: "d = min(cap, ⌊max(1, (1−f)·base + U[0,1)·(2f·base + 1))⌋) ms",
        parameters: "base (waitDuration, whole ms), random-factor f (randomizedWaitFactor), \
                     cap (none in resilience4j)",
        summary: "resilience4j's IntervalFunction.ofRandomized (Spring: enableRandomizedWait)",
    },
    PolicyInfo {
        kind: PolicyKind::Resilience4jExponentialRandomized,
        name: "resilience4j-exponential-randomized",
        formula: "d = min(cap, ⌊max(1, (1−f)·i_k + U[0,1)·(2f·i_k + 1))⌋) ms, i_k as \
                  resilience4j-exponential's, uncapped: the cap comes after the draw",
        parameters: "base, cap, multiplier, random-factor f",
        summary: "resilience4j's IntervalFunction.ofExponentialRandomBackoff (Spring: both \
                  enableExponentialBackoff and enableRandomizedWait)",
    },
    PolicyInfo {
        kind: PolicyKind::PollyConstantJitter,
        name: "polly-constant-jitter",
        formula: "d = min(cap, base·U[0.75, 1.25))",
        parameters: "base (Delay), cap (MaxDelay)",
        summary: "Polly v8's Constant backoff with UseJitter (without: constant)",
    },
    PolicyInfo {
        kind: PolicyKind::PollyLinearJitter,
        name: "polly-linear-jitter",
        formula: "d = min(cap, k·base·U[0.75, 1.25))",
        parameters: "base (Delay), cap (MaxDelay)",
        summary: "Polly v8's Linear backoff with UseJitter (without: linear; Exponential \
                  with jitter: decorrelated-v2)",
    },
    PolicyInfo {
        kind: PolicyKind::Aws2026,
        name: "aws-2026",
        formula: "d = U[0, min(cap, b·2^(k−1))], b = throttle-base after a throttle (a full \
                  queue's refusal), else base",
        parameters: "base (non_throttling_base_scale: 50ms, DynamoDB 25ms), throttle-base \
                     (throttling_base_scale: 1s), cap (_MAX_BACKOFF: 20s)",
        summary: "the AWS SDKs' 2026 standard retries (botocore 1.43.67 with \
                  AWS_NEW_RETRIES_2026, botocore/retries/standard.py ExponentialBackoff)",
    },
    PolicyInfo {
        kind: PolicyKind::Memoryless,
        name: "memoryless",
        formula: "d = min(cap, base·E), E ~ Exp(1): exponential of mean base, every retry alike",
        parameters: "base (the mean delay), cap",
        summary: "the retrial queue's orbit: what herdsim exact's Markov chain needs of a retry delay",
    },
];

impl PolicyKind {
    /// Every policy, in the order `herdsim policies` lists them.
    pub const ALL: [PolicyKind; 21] = [
        PolicyKind::None,
        PolicyKind::Equal,
        PolicyKind::Full,
        PolicyKind::Decorrelated,
        PolicyKind::DecorrelatedCeiling,
        PolicyKind::DecorrelatedV2,
        PolicyKind::DecorrelatedAttempt,
        PolicyKind::GrpcConnection,
        PolicyKind::GrpcRetry,
        PolicyKind::Fibonacci,
        PolicyKind::NoBackoff,
        PolicyKind::Constant,
        PolicyKind::Linear,
        PolicyKind::Envoy,
        PolicyKind::Resilience4jExponential,
        PolicyKind::Resilience4jRandomized,
        PolicyKind::Resilience4jExponentialRandomized,
        PolicyKind::PollyConstantJitter,
        PolicyKind::PollyLinearJitter,
        PolicyKind::Aws2026,
        PolicyKind::Memoryless,
    ];

    fn info(self) -> &'static PolicyInfo {
        let info = &POLICIES[self as usize];
        debug_assert_eq!(info.kind, self, "POLICIES is in kind order");
        info
    }

    /// The name used on the command line and in output.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The delay formula for retry k, with c_k = min(cap, base·m^(k−1)).
    pub fn formula(self) -> &'static str {
        self.info().formula
    }

    /// True if the policy reads `--multiplier` (its `c_k` grows by it).
    pub fn uses_multiplier(self) -> bool {
        self.parameters().contains("multiplier")
    }

    /// The parameters the policy reads.
    pub fn parameters(self) -> &'static str {
        self.info().parameters
    }

    /// Where the policy comes from, briefly.
    pub fn summary(self) -> &'static str {
        self.info().summary
    }

    /// Every name, for error messages and `--help`.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|k| k.name()).collect()
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PolicyKind {
    type Err = BaseError;

    fn from_str(name: &str) -> Result<Self, BaseError> {
        if let Some(&(text, instead)) = AMBIGUOUS.iter().find(|(old, _)| *old == name.trim()) {
            return Err(BaseError::AmbiguousName {
                what: "policy",
                text,
                instead,
            });
        }
        parse_name(name, "policy", &Self::ALL, Self::name)
    }
}

/// A fully parameterised policy, as a run uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PolicySpec {
    /// Which policy.
    pub kind: PolicyKind,
    /// The first retry's delay (and the decorrelated walk's floor), µs.
    pub base_us: Micros,
    /// The largest delay before the jitter factor, µs.
    pub cap_us: Micros,
    /// The linear policy's growth per retry, µs; `None` is the base.
    pub step_us: Option<Micros>,
    /// Seed 003's proportional jitter factor in `[0, 1]`; 0 is off.
    pub jitter_factor: f64,
    /// Added to the exponent of every retry of the exponential family
    /// (none, equal, full): `c_k = min(cap, base·m^(k−1+first_exponent))`.
    pub first_exponent: u32,
    /// The growth m of the ceiling per retry in none, equal, full and
    /// grpc-retry, above 1: `c_k = min(cap, base·m^(k−1))`; 2 by default.
    pub multiplier: f64,
    /// Where equal and full jitter apply the cap.
    pub cap_mode: CapMode,
    /// resilience4j's randomization factor f in `[0, 1]`: its randomized
    /// policies draw from `[(1−f)·d, (1+f)·d + 1 ms)`; 0.5 by default.
    pub randomization_factor: f64,
    /// `aws-2026`'s base after a throttle, µs (botocore's 1 s by default);
    /// `base_us` is its base after any other failure.
    pub throttle_base_us: Micros,
}

/// Where the jittered exponential family (equal, full) applies the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CapMode {
    /// Cap the ceiling, then draw inside it (seed 004's order).
    #[default]
    Before,
    /// Draw from the uncapped ceiling, then clamp to the cap: the bug several
    /// libraries shipped, which puts most late retries exactly on the cap.
    After,
}

named!(CapMode, "cap mode", {
    CapMode::Before => "before",
    CapMode::After => "after",
});

/// `min(cap, base·m^(retry−1))`, or with [`CapMode::After`] the uncapped
/// `base·m^(retry−1)` (saturating at `u64::MAX`).
#[inline]
pub(crate) fn ceiling_for(
    base: Micros,
    cap: Micros,
    multiplier: f64,
    retry: u32,
    mode: CapMode,
) -> Micros {
    match mode {
        CapMode::Before => multiplied_ceiling(base, cap, multiplier, retry),
        CapMode::After => multiplied_ceiling(base, Micros::MAX, multiplier, retry),
    }
}

/// Something to do with a concrete policy type: the way a [`PolicySpec`] chosen
/// at run time reaches code that is generic (and so fast) over [`Backoff`].
pub trait PolicyVisitor {
    /// What the visit returns.
    type Output;
    /// Called once with the concrete policy.
    fn visit<P: Backoff>(self, policy: P) -> Self::Output;
}

/// Says whether a policy draws ([`Backoff::JITTERED`]).
struct IsJittered;

impl PolicyVisitor for IsJittered {
    type Output = bool;
    fn visit<P: Backoff>(self, _: P) -> bool {
        P::JITTERED
    }
}

/// Says how many words a policy's memory takes ([`Backoff::Walk`]).
struct WalkWords;

impl PolicyVisitor for WalkWords {
    type Output = usize;
    fn visit<P: Backoff>(self, _: P) -> usize {
        size_of::<P::Walk>().div_ceil(size_of::<u64>())
    }
}

impl PolicySpec {
    /// How many 64-bit words a client's memory takes under this policy (0,
    /// 1 or 2): a loop that carries the memory as [`WalkBits`] of that
    /// width carries exactly what the policy keeps.
    pub fn walk_words(&self) -> usize {
        self.visit(WalkWords)
    }

    /// The linear policy's growth per retry, µs: the step, or the base.
    pub fn step(&self) -> Micros {
        self.step_us.unwrap_or(self.base_us)
    }

    /// True if the delays are drawn; false if clients in the same state get
    /// the same delay (their herd then moves in waves, [`crate::sim::wave`]).
    pub fn is_jittered(&self) -> bool {
        self.visit(IsJittered)
    }

    /// Calls `visitor` with the concrete policy this spec describes, wrapped in
    /// the proportional jitter when the factor is not zero.
    #[inline]
    pub fn visit<V: PolicyVisitor>(&self, visitor: V) -> V::Output {
        let (base, cap, step) = (self.base_us, self.cap_us, self.step());
        let (first_exponent, multiplier) = (self.first_exponent, self.multiplier);
        match self.kind {
            PolicyKind::None => self.with_factor(
                NoJitter {
                    base,
                    cap,
                    first_exponent,
                    multiplier,
                },
                visitor,
            ),
            PolicyKind::Equal => self.with_factor(
                EqualJitter {
                    base,
                    cap,
                    first_exponent,
                    multiplier,
                    cap_mode: self.cap_mode,
                },
                visitor,
            ),
            PolicyKind::Full => self.with_factor(
                FullJitter {
                    base,
                    cap,
                    first_exponent,
                    multiplier,
                    cap_mode: self.cap_mode,
                },
                visitor,
            ),
            PolicyKind::DecorrelatedCeiling => {
                self.with_factor(DecorrelatedCeiling { base, cap }, visitor)
            }
            PolicyKind::DecorrelatedV2 => self.with_factor(DecorrelatedV2 { base, cap }, visitor),
            PolicyKind::GrpcConnection => self.with_factor(GrpcConnection { base, cap }, visitor),
            PolicyKind::GrpcRetry => self.with_factor(
                GrpcRetry {
                    base,
                    cap,
                    multiplier,
                },
                visitor,
            ),
            PolicyKind::Fibonacci => self.with_factor(Fibonacci { base, cap }, visitor),
            PolicyKind::Decorrelated => self.with_factor(DecorrelatedJitter { base, cap }, visitor),
            PolicyKind::DecorrelatedAttempt => {
                self.with_factor(DecorrelatedAttempt { base, cap }, visitor)
            }
            PolicyKind::NoBackoff => self.with_factor(NoBackoff, visitor),
            PolicyKind::Constant => self.with_factor(Constant { base, cap }, visitor),
            PolicyKind::Linear => self.with_factor(Linear { base, step, cap }, visitor),
            PolicyKind::Envoy => self.with_factor(EnvoyBackoff { base, cap }, visitor),
            PolicyKind::Resilience4jExponential => self.with_factor(
                Resilience4jExponential {
                    base,
                    cap,
                    multiplier,
                },
                visitor,
            ),
            PolicyKind::Resilience4jRandomized => self.with_factor(
                Resilience4jRandomized {
                    base,
                    cap,
                    factor: self.randomization_factor,
                },
                visitor,
            ),
            PolicyKind::Resilience4jExponentialRandomized => self.with_factor(
                Resilience4jExponentialRandomized {
                    base,
                    cap,
                    multiplier,
                    factor: self.randomization_factor,
                },
                visitor,
            ),
            PolicyKind::PollyConstantJitter => {
                self.with_factor(PollyConstantJitter { base, cap }, visitor)
            }
            PolicyKind::PollyLinearJitter => {
                self.with_factor(PollyLinearJitter { base, cap }, visitor)
            }
            PolicyKind::Aws2026 => self.with_factor(
                Aws2026 {
                    base,
                    throttle_base: self.throttle_base_us,
                    cap,
                },
                visitor,
            ),
            PolicyKind::Memoryless => self.with_factor(Memoryless { base, cap }, visitor),
        }
    }

    #[inline(always)]
    fn with_factor<P: Backoff, V: PolicyVisitor>(&self, policy: P, visitor: V) -> V::Output {
        if self.jitter_factor > 0.0 {
            visitor.visit(ProportionalJitter::new(policy, self.jitter_factor))
        } else {
            visitor.visit(policy)
        }
    }

    /// The largest delay this spec can produce: the cap (gRPC's: 1.2·cap),
    /// plus the jitter factor's documented overshoot.
    pub fn max_delay_us(&self) -> Micros {
        let policy_max = match self.kind {
            PolicyKind::GrpcConnection | PolicyKind::GrpcRetry => self.cap_us.saturating_mul(6) / 5,
            _ => self.cap_us,
        };
        policy_max + jitter_factor::half_width(policy_max, self.jitter_factor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`super::exponential_ceiling`] on bare µs, for the tables below.
    fn exponential_ceiling(base: u64, cap: u64, retry: u32) -> Micros {
        super::exponential_ceiling(Micros::from_ticks(base), Micros::from_ticks(cap), retry)
    }

    /// [`super::multiplied_ceiling`] on bare µs.
    fn multiplied_ceiling(base: u64, cap: u64, multiplier: f64, retry: u32) -> Micros {
        super::multiplied_ceiling(
            Micros::from_ticks(base),
            Micros::from_ticks(cap),
            multiplier,
            retry,
        )
    }

    #[test]
    fn ceiling_doubles_then_stops_at_the_cap() {
        let got: Vec<_> = (1..=10)
            .map(|k| exponential_ceiling(100, 20_000, k))
            .collect();
        assert_eq!(
            got,
            [
                100, 200, 400, 800, 1_600, 3_200, 6_400, 12_800, 20_000, 20_000
            ]
            .map(Micros::from_ticks)
        );
    }

    #[test]
    fn ceiling_never_overflows() {
        for k in [63, 64, 65, 1_000, 10_000, 100_000, u32::MAX] {
            assert_eq!(exponential_ceiling(100, 20_000_000, k), Micros::from_s(20));
        }
        assert_eq!(
            exponential_ceiling(1, u64::MAX, 64),
            Micros::from_ticks(1 << 63)
        );
        assert_eq!(
            exponential_ceiling(1, u64::MAX, 65),
            Micros::from_ticks(u64::MAX)
        );
        assert_eq!(
            exponential_ceiling(u64::MAX, u64::MAX, 2),
            Micros::from_ticks(u64::MAX)
        );
    }

    #[test]
    fn a_cap_below_the_base_is_every_ceiling() {
        for k in 1..20 {
            assert_eq!(exponential_ceiling(10_000, 3_000, k), Micros::from_ms(3));
        }
    }

    /// Visits a policy and says whether it claims to draw nothing; if it
    /// does, makes it compute 200 delays from a script of no draws, which
    /// panics at the first draw.
    struct ClaimsNoJitter;

    impl PolicyVisitor for ClaimsNoJitter {
        type Output = bool;
        fn visit<P: Backoff>(self, policy: P) -> bool {
            if P::JITTERED {
                return false;
            }
            let mut walk = policy.start();
            let mut nothing = crate::base::draws::ScriptedDraws::new(&[]);
            for retry in 1..=200 {
                policy.delay(retry, &mut walk, &mut nothing);
            }
            true
        }
    }

    #[test]
    fn the_policies_without_jitter_draw_nothing() {
        let spec = |kind, jitter_factor| PolicySpec {
            jitter_factor,
            ..crate::RunSpec::seed_002(kind, 1).policy
        };
        let unjittered: Vec<_> = PolicyKind::ALL
            .into_iter()
            .filter(|&kind| spec(kind, 0.0).visit(ClaimsNoJitter))
            .collect();
        assert_eq!(
            unjittered,
            [
                PolicyKind::None,
                PolicyKind::Fibonacci,
                PolicyKind::NoBackoff,
                PolicyKind::Constant,
                PolicyKind::Linear,
                PolicyKind::Resilience4jExponential,
            ]
        );
        // A jitter factor makes any policy draw.
        assert!(
            PolicyKind::ALL
                .into_iter()
                .all(|kind| !spec(kind, 0.1).visit(ClaimsNoJitter))
        );
        for kind in PolicyKind::ALL {
            assert_eq!(spec(kind, 0.0).is_jittered(), !unjittered.contains(&kind));
            assert!(spec(kind, 0.1).is_jittered());
        }
    }

    #[test]
    fn the_description_table_is_in_kind_order() {
        for (i, kind) in PolicyKind::ALL.into_iter().enumerate() {
            assert_eq!(kind as usize, i);
            assert_eq!(POLICIES[i].kind, kind);
        }
    }

    #[test]
    fn names_parse_back() {
        for kind in PolicyKind::ALL {
            assert_eq!(kind.name().parse::<PolicyKind>(), Ok(kind));
        }
        let err = "jittery".parse::<PolicyKind>().unwrap_err().to_string();
        assert!(err.contains(
            "none, equal, full, decorrelated, decorrelated-ceiling, decorrelated-v2, decorrelated-attempt, grpc-connection, grpc-retry, fibonacci, no-backoff, constant, linear, envoy, resilience4j-exponential, resilience4j-randomized, resilience4j-exponential-randomized, polly-constant-jitter, polly-linear-jitter, aws-2026"
        ));
    }

    #[test]
    fn the_bare_grpc_name_says_which_two_it_could_mean() {
        let err = " grpc ".parse::<PolicyKind>().unwrap_err().to_string();
        assert_eq!(
            err,
            "policy 'grpc' is ambiguous: choose grpc-connection (gRPC's connection backoff) or \
             grpc-retry (gRPC's retry policy, gRFC A6)"
        );
        assert!("grpc-connection".parse::<PolicyKind>().is_ok());
    }

    #[test]
    fn a_multiplier_of_2_is_the_integer_doubling_and_others_are_powers() {
        for (base, cap) in [(100, 20_000), (1, u64::MAX), (7, 3), (100_000, 20_000_000)] {
            for k in (0..=70).chain([1_000, u32::MAX]) {
                assert_eq!(
                    multiplied_ceiling(base, cap, 2.0, k),
                    exponential_ceiling(base, cap, k)
                );
            }
        }
        // 1.5^(k−1) exactly (dyadic), floored to whole µs, then the cap.
        let got: Vec<_> = (1..=9)
            .map(|k| multiplied_ceiling(1_000, 20_000, 1.5, k))
            .collect();
        assert_eq!(
            got,
            [
                1_000, 1_500, 2_250, 3_375, 5_062, 7_593, 11_390, 17_085, 20_000
            ]
            .map(Micros::from_ticks)
        );
        // Huge retry numbers overflow to infinity, which is the cap; the
        // uncapped ceiling saturates.
        assert_eq!(
            multiplied_ceiling(1, 5_000, 1.01, u32::MAX),
            Micros::from_ms(5)
        );
        assert_eq!(
            multiplied_ceiling(1, u64::MAX, 100.0, 20),
            Micros::from_ticks(u64::MAX)
        );
        // Retry 0 and 1 are the base.
        assert_eq!(multiplied_ceiling(300, 5_000, 3.0, 0), Micros::from_us(300));
        assert_eq!(multiplied_ceiling(300, 5_000, 3.0, 1), Micros::from_us(300));
        assert_eq!(
            multiplied_ceiling(300, 5_000, 3.0, 3),
            Micros::from_us(2700)
        );
    }
}
