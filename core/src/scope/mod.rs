//! Transient scopes as data: unit names and descriptions systemd accepts
//! verbatim (`escape.rs`), and the properties a scope is created with
//! (`properties.rs`). The D-Bus calls are the main crate's `systemd` edge.

mod escape;
mod properties;

pub use escape::{
    DESCRIPTION_MAX, UNIT_NAME_MAX, escape_unit_component, sanitize_description, scope_unit_glob,
    scope_unit_name,
};
pub use properties::{PropValue, ScopeSpec, scope_properties};
