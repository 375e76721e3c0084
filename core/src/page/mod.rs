//! The status page the gateway's HTTP endpoint serves at `/`: the jobs with
//! their next fire, last outcome and mode, and a timeline of the last 24
//! hours (one lane per job, one bar per ledger row, coloured by state,
//! lateness marked) as inline SVG. A pure function of the rows, the zone and
//! `now` that returns HTML text: no script, no form, no link that changes
//! anything, and nothing secret (no command, no environment, no output:
//! names, schedules, states and times only).
//!
//! - `model.rs`: what the page is made from ([`PageData`], [`PageJob`], [`PageRun`]);
//! - `select.rs`: which jobs get a lane when there are more than fit;
//! - `timeline.rs`: the layout (lanes, bars, lateness) and its SVG;
//! - `jobs_table.rs`: the jobs table;
//! - `palette.rs`: a colour per state, the legend and the style sheet;
//! - `document.rs`: the whole page; `escape.rs`: text into HTML.

pub mod document;
pub mod escape;
pub mod jobs_table;
pub mod model;
pub mod palette;
pub mod select;
pub mod timeline;

pub use document::render;
pub use model::{JobView, PageData, PageHeader, PageJob, PageRun};
