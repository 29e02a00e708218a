//! The foundation every layer stands on: simulated time, random draws and
//! the seeding of one generator per job.

pub mod draws;
pub mod error;
pub mod fingerprint;
pub mod format;
pub mod lookahead;
pub mod names;
pub mod seeding;
pub mod special;
pub mod time;
