//! The systemd/D-Bus edge: transient user scopes for workers.
//!
//! The dispatcher uses [`UnitManager`] (implemented by [`ZbusUnitManager`]); nothing else
//! in the crate sees zbus. Unit names and scope properties are pure data, in
//! `hermes_cron_core::scope`.
//!
//! One start, as the dispatcher drives it: fork the worker blocked on a pipe,
//! `scope_unit_name(job, execution)`, `start_scope(&ScopeSpec { pids: vec![child], .. })`,
//! then release the worker only on `Ok` (its pid is then in the scope's cgroup). On `Err`,
//! [`BusCause::is_unavailable`] tells "degrade" (no manager) from "this request failed".

mod bus;
mod cause;
mod cgroups;
mod job_watch;
mod manager;
mod map_error;
mod proxy;
pub mod unit_files;
mod zbus_manager;

pub use bus::{AddressSource, BusAddress, BusEnv, locate_bus};

pub use cause::BusCause;
pub(crate) use cause::{FIX_TEXT, NOT_BOOTED_FIX_TEXT};
pub use cgroups::{Delegation, delegation, unenforced};
pub use hermes_cron_core::scope::{
    DESCRIPTION_MAX, ScopeSpec, UNIT_NAME_MAX, escape_unit_component, sanitize_description,
    scope_unit_glob, scope_unit_name,
};
pub use manager::{UnitFuture, UnitManager, UnitProcess};
pub use zbus_manager::{ZbusTimeouts, ZbusUnitManager, session_manager};
