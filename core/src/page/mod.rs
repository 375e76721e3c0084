//! The status page the gateway's HTTP endpoint serves at `/`: the jobs with
//! their next fire, last outcome, mode and failures, a timeline of the last
//! hour, 24 hours or 7 days (`?window=1h|24h|7d`; one lane per job, one bar
//! per ledger row, coloured by state, lateness marked) as inline SVG, and
//! each job's newest runs. A pure function of the rows, the zones, the
//! window and `now` that returns HTML text: no script, no form, no link
//! that changes anything, and nothing secret on the page itself (no
//! command, no environment: names, schedules, states and times); a run's
//! output is a link to its own resource, `runs/ID/output`, behind the same
//! token as the page. Times are in each job's zone, else the page's.
//!
//! - `model.rs`: what the page is made from ([`PageData`], [`PageJob`], [`PageRun`]);
//! - `select.rs`: which jobs get a lane when there are more than fit;
//! - `timeline.rs`: the layout (lanes, bars, lateness) and its SVG;
//! - `jobs_table.rs`: the jobs table (with each job's failures of 24 h and 7 d);
//! - `recent.rs`: each job's newest runs, with a link to each one's output;
//! - `window.rs`: the timeline's zoom (1 h, 24 h, 7 d) and its grid;
//! - `palette.rs`: a colour per state, the legend and the style sheet;
//! - `document.rs`: the whole page; `escape.rs`: text into HTML.

pub mod document;
pub mod escape;
pub mod jobs_table;
pub mod model;
pub mod palette;
pub mod recent;
pub mod select;
pub mod timeline;
pub mod window;

pub use document::render;
pub use model::{JobView, PageData, PageHeader, PageJob, PageRun};
pub use window::Window;
