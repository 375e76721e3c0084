//! Job definitions: the data, its policies, and the pure validation of user input.

mod model;
mod policy;
mod redact;
mod spec;

pub use model::{Env, Job, JobState, Resources};
pub use policy::{CatchUp, Overlap};
pub use redact::{is_secret_name, redacted_env};
pub use spec::{JobError, JobInput, parse_bytes, parse_env, validate_name};
