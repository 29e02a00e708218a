//! What the reports refuse or fail at: a picture plotters could not draw, a
//! table without the asked-for column, shard files that do not make a sweep.

/// Why a report could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// plotters could not draw the picture.
    #[error("{0}")]
    Plot(String),
    /// No rows with numbers to draw.
    #[error("nothing to plot: no rows with numeric x and y")]
    NothingToPlot,
    /// A log axis over values that are not all positive.
    #[error(
        "--log-{axis}: the {axis} axis ({label}) reaches {lowest}, and a log axis needs every \
         value above 0 (for y, less its 95% CI band)"
    )]
    LogOfNonPositive {
        /// `x` or `y`.
        axis: &'static str,
        /// The axis's column.
        label: String,
        /// Its lowest value, as shown.
        lowest: String,
    },
    /// A table with two columns of one name.
    #[error("the table has two columns named '{name}'")]
    ColumnTwice {
        /// The name.
        name: String,
    },
    /// A named column is not in the table.
    #[error("no column '{name}' (for --{flag}); the table has {}", columns.join(", "))]
    NoColumn {
        /// The option that named it (`x`, `y`, `by`, `where`).
        flag: &'static str,
        /// The name given.
        name: String,
        /// The table's columns.
        columns: Vec<String>,
    },
    /// The table is not readable CSV (at a row, numbered from 2 after the
    /// header, where known).
    #[error("unreadable table: {why}")]
    Unreadable {
        /// The row.
        row: Option<usize>,
        /// What is wrong.
        why: String,
    },
    /// Map shard files that do not make one whole map.
    #[error("{0}")]
    MapShards(String),
    /// An empty shard file.
    #[error("'{file}' is empty: not a sweep file")]
    EmptyShard {
        /// The file.
        file: String,
    },
    /// A shard whose header is not the first file's.
    #[error("'{file}' has another header than '{first}': not shards of one sweep")]
    OtherHeader {
        /// The file.
        file: String,
        /// The first file given.
        first: String,
    },
    /// Not a sweep file at all.
    #[error("'{file}' is not a herdsim sweep file")]
    NotSweepFile {
        /// The file.
        file: String,
    },
    /// A sweep file of an earlier format, whose rows carry no sweep id.
    #[error(
        "'{file}' has no sweep_id column: it was written by an earlier herdsim, so the sweep it \
         belongs to is unknown; run that sweep again"
    )]
    NoSweepId {
        /// The file.
        file: String,
    },
    /// A shard whose last line was cut off.
    #[error("'{file}' ends in a cut-off line: finish that shard with --resume first")]
    CutOff {
        /// The file.
        file: String,
    },
    /// A line that is not a sweep row.
    #[error("'{file}' line {line}: not a sweep row")]
    NotARow {
        /// The file.
        file: String,
        /// Its line.
        line: usize,
    },
    /// A row whose checksum does not match its text.
    #[error(
        "'{file}' line {line}: the row was changed after herdsim wrote it (its row_checksum \
         does not match); run that shard again"
    )]
    ChangedRow {
        /// The file.
        file: String,
        /// Its line.
        line: usize,
    },
    /// A row of another sweep than the first file's first row.
    #[error("'{file}' line {line} is from another sweep than '{first}': {what}")]
    OtherSweep {
        /// The file.
        file: String,
        /// Its line.
        line: usize,
        /// The first file given.
        first: String,
        /// What differs.
        what: String,
    },
    /// No file has a row, so the sweep is unknown.
    #[error("no file has a row, so the sweep they belong to is unknown: give its other shards")]
    NoRows,
    /// A point in two shards.
    #[error(
        "point {point} is in {first} and in {second}: the files overlap (a shard given twice?)"
    )]
    Overlap {
        /// The point.
        point: u64,
        /// Where it is first found.
        first: String,
        /// Where again.
        second: String,
    },
    /// Points in no shard.
    #[error(
        "{} of the sweep's {points} {} missing: a shard file was not given",
        if from == to { format!("point {from}") } else { format!("points {from} to {to}") },
        if from == to { "is" } else { "are" }
    )]
    Missing {
        /// The first missing point.
        from: u64,
        /// The last of the first run of missing points.
        to: u64,
        /// The sweep's points.
        points: u64,
    },
}
