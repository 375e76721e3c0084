//! A PostgreSQL server of one test's own (`tests/support/pg-server.sh`), for
//! what the suite's shared server must not suffer: listening on a test
//! network's address, running out of connections, going away and coming
//! back. Stopped and removed when dropped.

use std::process::Command;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/pg-server.sh");

/// A server of this test's own.
pub(crate) struct PgServer {
    dir: String,
}

fn script(args: &[&str], env: &[(&str, String)]) -> String {
    let out = Command::new(SCRIPT)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run pg-server.sh");
    assert!(
        out.status.success(),
        "pg-server.sh {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl PgServer {
    /// A durable server on its Unix socket, accepting at most
    /// `max_connections` (default 400): fsync and synchronous commits on,
    /// unlike the suite's, so what it acknowledged survives
    /// [`PgServer::pause`], as on a real server.
    pub(crate) fn durable(max_connections: Option<u32>) -> PgServer {
        let env: Vec<(&str, String)> = max_connections
            .map(|n| ("PG_MAX_CONNECTIONS", n.to_string()))
            .into_iter()
            .collect();
        PgServer::start(None, &env, true)
    }

    /// A server on its Unix socket, and on `addr` too when given, with the
    /// script's settings in `env` (`PG_SSL_CERT`, `PG_SSL_KEY`, `PG_SSL_CA`,
    /// `PG_MAX_CONNECTIONS`: see `pg-server.sh`); `durable` or, as the
    /// suite's, fast.
    pub(crate) fn start(addr: Option<&str>, env: &[(&str, String)], durable: bool) -> PgServer {
        let durable = if durable { "durable" } else { "fast" };
        let text = script(&["start", addr.unwrap_or(""), durable], env);
        let dir = text
            .lines()
            .find_map(|l| l.strip_prefix("export PG_TEST_DIR="))
            .expect("the server's directory")
            .to_string();
        PgServer { dir }
    }

    /// A connection string to its `postgres` database over its socket.
    pub(crate) fn url(&self) -> String {
        format!("host={} user=postgres dbname=postgres", self.dir)
    }

    /// The server goes away (an immediate shutdown: as if it crashed).
    pub(crate) fn pause(&self) {
        script(&["pause", &self.dir], &[]);
    }

    /// It comes back, as it was started.
    pub(crate) fn resume(&self) {
        script(&["resume", &self.dir], &[]);
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = Command::new(SCRIPT).args(["stop", &self.dir]).output();
    }
}
