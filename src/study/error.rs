//! What the studies refuse: a published table that does not read.

use crate::base::error::BaseError;

/// A published table herdsim cannot read (the embedded ones are tested to
/// read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StudyError {
    /// A row with fewer fields than the table's columns.
    #[error("line {line}: too few fields")]
    TooFewFields {
        /// The row's line.
        line: usize,
    },
    /// A field that should be a number.
    #[error("line {line}: {why}")]
    NotANumber {
        /// The row's line.
        line: usize,
        /// What the number parser said.
        why: String,
    },
    /// An algorithm of the AWS simulator herdsim does not know.
    #[error("line {line}: unknown algorithm '{name}'")]
    UnknownAlgorithm {
        /// The row's line.
        line: usize,
        /// The name given.
        name: String,
    },
    /// A reference file without a column its study needs.
    #[error("no column '{name}' (a reference file of this study has {expected})")]
    MissingColumn {
        /// The column.
        name: String,
        /// The columns the study reads.
        expected: String,
    },
    /// A value the study does not know in a column it reads.
    #[error("line {line}: column '{column}': {why}")]
    Invalid {
        /// The row's line.
        line: usize,
        /// The column.
        column: String,
        /// What is wrong, and what is accepted.
        why: String,
    },
    /// Not CSV.
    #[error("{0}")]
    Csv(String),
    /// A policy name herdsim does not know.
    #[error(transparent)]
    Name(#[from] BaseError),
}
