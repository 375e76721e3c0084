//! Job definitions: the data, its policies (overlap, catch-up, retry), and
//! the pure validation of user input (`flags.rs`: `add`/`edit` flags into a
//! [`JobInput`]).

mod flags;
mod model;
mod policy;
mod redact;
mod retry;

pub use flags::{
    FallbackZone, JobError, JobInput, is_env_name, parse_env, parse_pass_env, validate_name,
};
pub use model::{Env, Job, JobState, Resources};
pub use policy::{CatchUp, Overlap};
pub use redact::{REDACTED, is_secret, is_secret_name, is_secret_value, redacted_env};
pub use retry::{RetryPolicy, retry_delay};
