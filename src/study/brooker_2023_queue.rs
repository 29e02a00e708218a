//! Brooker 2023, "Open and closed, omission and collapse": the omission
//! model's queue second by second (`brooker-2023-omission-queue.csv`), which
//! shows the replace-on-completion rule's collapse: the queue grows at the
//! arrival rate, without end, once one job has taken more than 15 ms.
//!
//! The workloads are [`crate::study::brooker_2023`]'s with a 1 s window: the
//! reference's state at t = 1000, 2000, … ms is herdsim's at the end of the
//! window before. Waiting jobs (`qwait`) are the queue at the window's end,
//! jobs in the system (`nsys`) that and the one in service.

use crate::measure::server_metrics::Window;
use crate::study::brooker_2023::{horizon, settings};
use crate::study::error::StudyError;
use crate::study::overload::{Study, StudyMetric};
use crate::study::reference::{ReferenceRow, Table, spec_of};

/// The study.
pub static STUDY: Study = Study {
    name: "brooker-2023-omission-queue",
    title: "Brooker 2023, \"Open and closed, omission and collapse\" (omission, queue over time)",
    reference_file: "brooker-2023-omission-queue.csv",
    embedded: include_str!("../../reference/brooker-2023-omission-queue.csv"),
    metrics: &METRICS,
    wide_table: true,
    read,
};

/// The queue and the jobs in the system at each second.
static METRICS: [StudyMetric; 2] = [
    StudyMetric {
        name: "qwait",
        title: "waiting",
        decimals: 1,
        value: |_, _, w| w.map(|w| w.queue as f64),
    },
    StudyMetric {
        name: "nsys",
        title: "in system",
        decimals: 1,
        value: |_, _, w| w.map(|w: &Window| (w.queue + w.busy) as f64),
    },
];

/// The columns read.
const COLUMNS: [&str; 8] = [
    "group",
    "config",
    "t_ms",
    "seeds",
    "qwait_mean",
    "qwait_sd",
    "nsys_mean",
    "nsys_sd",
];

/// Reads `brooker-2023-omission-queue.csv` (or a rerun of the same shape):
/// a row per configuration and checkpoint. The runs last 5 s (20 s for the
/// ρ sweep), as in the summary file.
pub fn read(text: &str) -> Result<Vec<ReferenceRow>, StudyError> {
    let table = Table::read(text, &COLUMNS)?;
    let mut rows = Vec::new();
    for r in table.rows() {
        let (group, config) = (r.text("group")?, r.text("config")?);
        let mut settings =
            settings(group, config).map_err(|(column, why)| r.invalid(column, why))?;
        let run = if group == "rho_sweep" {
            "20000ms"
        } else {
            "5000ms"
        };
        settings.extend([
            ("duration", run.to_string()),
            ("horizon", run.to_string()),
            ("window", "1s".to_string()),
        ]);
        // The checkpoint, a whole second: the state at the end of the window
        // before it.
        let t = horizon(&r, "t_ms")?;
        let t_ms = r.number("t_ms")?;
        if t_ms % 1000.0 != 0.0 {
            return Err(r.invalid("t_ms", format!("{t}: expected whole seconds")));
        }
        let pairs: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let n = r.count("seeds", 1)?;
        rows.push(ReferenceRow {
            key: vec![
                ("group", group.to_string()),
                ("config", config.to_string()),
                ("t_ms", format!("{t_ms}")),
            ],
            spec: spec_of(&pairs),
            window: Some(t_ms as usize / 1000 - 1),
            figures: vec![
                ("qwait", r.estimate("qwait_mean", "qwait_sd", n)?),
                ("nsys", r.estimate("nsys_mean", "nsys_sd", n)?),
            ],
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Micros;

    #[test]
    fn the_checkpoints_are_the_ends_of_one_second_windows() {
        let rows = STUDY.embedded_rows();
        assert_eq!(rows.len(), 5 * 11 + 20 * 9);
        let growth = rows
            .iter()
            .find(|r| r.label() == "group=bimod_timeout config=open_timeout_15 t_ms=5000")
            .unwrap();
        assert_eq!(growth.window, Some(4));
        assert_eq!(growth.spec.server.timeout_us, Some(Micros::from_ms(15)));
        assert_eq!(growth.figure("qwait").unwrap().mean, 33756.15);
    }
}
