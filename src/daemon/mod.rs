//! The gateway daemon: the long-running process that claims due occurrences,
//! dispatches them, and watches them, plus its heartbeat, watchdog and
//! lifecycle record.

mod dump;
mod event_loop;
mod farewell;
mod gateway;
mod heartbeat;
mod instance;
mod lifecycle;
mod monitor;
mod notify;
mod runs;
mod signals;
mod stall;
mod state;
mod upkeep;
mod watchdog;

pub use gateway::{Deps, WEDGE_ENV, run, run_with};
pub use heartbeat::{HEARTBEAT_PERIOD_ENV, Heartbeat, STALL_PERIODS, read as read_heartbeat};
pub use lifecycle::{LifecycleLine, read_all as read_lifecycle};
pub use state::{Capability, TickSummary};
pub use watchdog::WATCHDOG_REASON;
