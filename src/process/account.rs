//! The account this process runs as: what a job's `HOME`, `USER`, `LOGNAME`
//! and `SHELL` are, and where a job without `--workdir` runs.

use hermes_cron_core::run::Account;

/// This process's account, from the password database (its own `HOME` only
/// when the database has no entry for it).
pub fn account() -> Account {
    let uid = nix::unistd::getuid();
    if let Ok(Some(u)) = nix::unistd::User::from_uid(uid) {
        return Account {
            user: u.name,
            home: u.dir.display().to_string(),
            shell: u.shell.display().to_string(),
        };
    }
    Account {
        user: uid.to_string(),
        home: std::env::var("HOME").unwrap_or_else(|_| "/".into()),
        shell: "/bin/sh".into(),
    }
}
