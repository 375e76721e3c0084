//! The rows of the table, one file per measurement, and the sections the
//! command line selects.

mod breakdown;
mod claim;
mod cluster;
mod common;
mod dispatch;
mod e2e;
mod fanout;
mod gateway;
mod lateness;
mod ledger;
mod memory;
mod previous;
mod staged_memory;
mod stamps;
mod timer_manager;

use crate::ready::Ready;
use crate::setup::Setup;
use crate::table::Row;

/// A part of the benchmark a subcommand selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Section {
    /// Rows 1a, 1b, 1c.
    Scoped,
    /// Row 2.
    Degraded,
    /// Rows 3a, 3b.
    Fanout,
    /// Rows 4a, 4b.
    Lateness,
    /// Rows 5a, 5b.
    Claim,
    /// Rows 6a, 6b.
    Memory,
    /// Rows 7a, 7b.
    Ledger,
    /// Rows 8a, 8b, 8c: the PostgreSQL ledger, several gateways.
    Cluster,
    /// Diagnostics only (stderr): where a scoped dispatch spends its time.
    Breakdown,
}

impl Section {
    pub(crate) const ALL: [Section; 8] = [
        Section::Scoped,
        Section::Degraded,
        Section::Fanout,
        Section::Lateness,
        Section::Claim,
        Section::Memory,
        Section::Ledger,
        Section::Cluster,
    ];

    pub(crate) fn parse(name: &str) -> Option<Section> {
        Some(match name {
            "scoped" | "1" => Section::Scoped,
            "degraded" | "2" => Section::Degraded,
            "fanout" | "3" => Section::Fanout,
            "lateness" | "4" => Section::Lateness,
            "claim" | "5" => Section::Claim,
            "memory" | "6" => Section::Memory,
            "ledger" | "7" => Section::Ledger,
            "cluster" | "8" => Section::Cluster,
            "breakdown" => Section::Breakdown,
            _ => return None,
        })
    }
}

fn or_failed(id: &'static str, what: &str, r: Result<Vec<Row>, String>) -> Vec<Row> {
    r.unwrap_or_else(|e| {
        eprintln!("bench: {what} failed: {e}");
        vec![Row::failed(id, what, &e)]
    })
}

/// Run `sections` in the table's order; a failed measurement becomes a
/// failed row and the others still run.
pub(crate) async fn run(setup: &Setup, sections: &[Section]) -> Vec<Row> {
    let ready = match setup.take_ready_socket().map(Ready::new) {
        Some(Ok(r)) => r,
        Some(Err(e)) => return vec![Row::failed("-", "report socket", &e.to_string())],
        None => return vec![Row::failed("-", "report socket", "already taken")],
    };
    let want = |s| sections.contains(&s);
    let mut rows = Vec::new();
    if want(Section::Breakdown)
        && let Err(e) = breakdown::run(setup, &ready).await
    {
        rows.push(Row::failed("-", "breakdown", &e));
    }
    if want(Section::Scoped) || want(Section::Degraded) {
        let r = dispatch::measure(setup, &ready).await.map(|s| {
            let mut v = Vec::new();
            if want(Section::Scoped) {
                v.push(dispatch::row_1a(&s));
                v.push(dispatch::row_1b(&s));
            }
            if want(Section::Degraded) {
                v.push(dispatch::row_2(&s));
            }
            v
        });
        rows.extend(or_failed("1", "dispatch cost", r));
    }
    if want(Section::Scoped) {
        let r = e2e::measure(setup, &ready)
            .await
            .map(|s| vec![e2e::row_1c(&s)]);
        rows.extend(or_failed("1c", "end-to-end dispatch", r));
    }
    // Keep the table in row order: 1a, 1b, 1c, 2.
    rows.sort_by_key(|r| r.id);
    if want(Section::Fanout) {
        let r = fanout::measure(setup, &ready)
            .await
            .map(|f| vec![fanout::row_3a(&f), fanout::row_3b(&f)]);
        rows.extend(or_failed("3", "fan-out", r));
    }
    if want(Section::Lateness) {
        let r = lateness::measure(setup).await.map(|l| lateness::rows(&l));
        rows.extend(or_failed("4", "start lateness", r));
    }
    if want(Section::Claim) {
        let r = claim::measure(setup).await.map(|c| claim::rows(&c));
        rows.extend(or_failed("5", "claim pass cost", r));
    }
    if want(Section::Memory) {
        let r = memory::measure(setup).await;
        let running = r.as_ref().map(|m| m.worker_rss.median()).ok();
        rows.extend(or_failed("6", "memory", r.map(|m| memory::rows(&m))));
        let r = staged_memory::measure(setup)
            .await
            .map(|s| vec![staged_memory::row(&s, running.unwrap_or(f64::NAN))]);
        rows.extend(or_failed("6c", "staged worker memory", r));
    }
    if want(Section::Ledger) {
        let r = ledger::measure(setup).await.map(|f| ledger::rows(&f));
        rows.extend(or_failed("7", "ledger", r));
    }
    if want(Section::Cluster) {
        let r = cluster::measure(setup).await.map(|c| cluster::rows(&c));
        rows.extend(or_failed("8", "cluster", r));
    }
    rows
}
