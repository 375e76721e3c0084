//! Append-only schema migrations, the same on both backends: SQLite counts
//! them in `PRAGMA user_version`, PostgreSQL (which has no such pragma) in
//! the one-row table `schema_version`.
//!
//! Never edit a shipped migration: append a new one. Each runs in one
//! transaction together with the version bump (SQLite: exclusive;
//! PostgreSQL: under the advisory lock `LockKey::Migrate`), so a crash leaves
//! either the old or the new schema. A migration is a list of [`Step`]s:
//! portable DDL run on both (PostgreSQL reads `INTEGER` as `BIGINT`, see
//! `dialect::ddl_to_postgres`), or a step only one dialect needs (a
//! trigger), so the SQLite statements of a shipped migration stay exactly
//! what they were.

/// Migration 1: job definitions.
const JOBS: &str = "
CREATE TABLE jobs (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    schedule_text   TEXT NOT NULL,
    schedule        TEXT NOT NULL,
    tz              TEXT,
    argv            TEXT NOT NULL,
    shell           INTEGER NOT NULL DEFAULT 0,
    env             TEXT NOT NULL DEFAULT '[]',
    workdir         TEXT,
    timeout_s       INTEGER,
    overlap         TEXT NOT NULL DEFAULT 'skip',
    catch_up        TEXT,
    retries         INTEGER NOT NULL DEFAULT 0,
    retry_backoff_s INTEGER NOT NULL DEFAULT 30,
    memory_max      INTEGER,
    cpu_weight      INTEGER,
    tasks_max       INTEGER,
    require_scope   INTEGER NOT NULL DEFAULT 0,
    state           TEXT NOT NULL DEFAULT 'active',
    pause_reason    TEXT,
    anchor          INTEGER NOT NULL,
    next_run_at     INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    CHECK (state IN ('active', 'paused', 'completed')),
    CHECK (overlap IN ('skip', 'allow', 'replace'))
);
CREATE INDEX jobs_due ON jobs(next_run_at) WHERE state = 'active' AND next_run_at IS NOT NULL;
CREATE INDEX jobs_name ON jobs(name);
";

/// Migration 2: the execution ledger, one row per occurrence.
const LEDGER: &str = "
CREATE TABLE executions (
    id               TEXT PRIMARY KEY,
    job_id           TEXT,
    job_name         TEXT NOT NULL,
    scheduled_for    INTEGER,
    attempt          INTEGER NOT NULL DEFAULT 1,
    source           TEXT NOT NULL,
    state            TEXT NOT NULL,
    reason_code      TEXT,
    reason           TEXT,
    spec             TEXT NOT NULL,
    owner            TEXT,
    claimed_by       TEXT,
    dispatch_mode    TEXT,
    dispatch_cause   TEXT,
    unit             TEXT,
    pid              INTEGER,
    pid_start        INTEGER,
    claimed_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    heartbeat_at     INTEGER,
    exit_code        INTEGER,
    signal           INTEGER,
    duration_ms      INTEGER,
    max_rss_kb       INTEGER,
    output_path      TEXT,
    output_bytes     INTEGER,
    output_truncated INTEGER,
    UNIQUE (job_id, scheduled_for, attempt),
    CHECK (source IN ('schedule', 'catch_up', 'manual', 'retry', 'spawn', 'reboot')),
    CHECK (state IN ('claimed', 'running', 'succeeded', 'failed', 'timed_out',
                     'cancelled', 'unknown', 'skipped', 'missed', 'refused')),
    CHECK (dispatch_mode IS NULL OR dispatch_mode IN ('scoped', 'degraded', 'in_process'))
);
CREATE INDEX executions_by_job ON executions(job_id, id);
CREATE INDEX executions_active ON executions(state) WHERE state IN ('claimed', 'running');
CREATE INDEX executions_by_finish ON executions(finished_at);
";

/// Migration 2, SQLite: a terminal row never changes; only claimed and
/// running rows may be updated.
const LEDGER_FROZEN_SQLITE: &str = "
CREATE TRIGGER executions_terminal_rows_are_final
BEFORE UPDATE ON executions
WHEN OLD.state NOT IN ('claimed', 'running')
BEGIN
    SELECT RAISE(ABORT, 'terminal execution rows never change');
END;
";

/// Migration 2, PostgreSQL: the same trigger, as a function.
const LEDGER_FROZEN_POSTGRES: &str = "
CREATE FUNCTION executions_terminal_rows_are_final() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    RAISE EXCEPTION 'terminal execution rows never change';
END
$fn$;
CREATE TRIGGER executions_terminal_rows_are_final
BEFORE UPDATE ON executions
FOR EACH ROW WHEN (OLD.state NOT IN ('claimed', 'running'))
EXECUTE FUNCTION executions_terminal_rows_are_final();
";

/// Migration 2: retries owed, a failed or timed-out attempt waiting for its
/// backoff.
const RETRY_QUEUE: &str = "
CREATE TABLE retry_queue (
    execution_id TEXT PRIMARY KEY REFERENCES executions(id) ON DELETE CASCADE,
    job_id       TEXT NOT NULL,
    due_at       INTEGER NOT NULL
);
CREATE INDEX retry_queue_due ON retry_queue(due_at);
";

/// Migration 3: what a job brings from elsewhere and what it takes from the
/// caller's environment: the Hermes job it was imported from (its 12-hex id),
/// files of `KEY=VALUE` lines read when it runs, and the names of variables
/// passed through from the process that starts it.
const JOB_ORIGIN_AND_ENV: &str = "
ALTER TABLE jobs ADD COLUMN hermes_id TEXT;
ALTER TABLE jobs ADD COLUMN env_files TEXT NOT NULL DEFAULT '[]';
ALTER TABLE jobs ADD COLUMN pass_env TEXT NOT NULL DEFAULT '[]';
CREATE INDEX jobs_hermes_id ON jobs(hermes_id) WHERE hermes_id IS NOT NULL;
";

/// Migration 4: a job's idle timeout (no output for that long means stuck).
const IDLE_TIMEOUT: &str = "
ALTER TABLE jobs ADD COLUMN idle_timeout_s INTEGER;
";

/// Migration 5: jobs kept by the Hermes provider sync (Hermes is their
/// source of truth); at most one per Hermes job.
const MANAGED: &str = "
ALTER TABLE jobs ADD COLUMN managed INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX jobs_managed_hermes_id ON jobs(hermes_id) WHERE managed = 1;
";

/// Migration 6: alerts. A job's own alert settings (JSON, `JobAlerts`);
/// each job's incident; the outbox of deliveries, written in the
/// transaction of the move that causes them, and every attempt at one.
const ALERTS: &str = "
ALTER TABLE jobs ADD COLUMN alerts TEXT NOT NULL DEFAULT '{}';
CREATE INDEX jobs_with_alerts ON jobs(id) WHERE alerts != '{}';
CREATE TABLE alert_incidents (
    job_id     TEXT PRIMARY KEY,
    failures   INTEGER NOT NULL DEFAULT 0,
    alerted    TEXT,
    since      INTEGER,
    updated_at INTEGER NOT NULL
);
CREATE TABLE alert_deliveries (
    id              TEXT PRIMARY KEY,
    job_id          TEXT,
    job_name        TEXT NOT NULL,
    execution_id    TEXT,
    kind            TEXT NOT NULL,
    destination     TEXT NOT NULL,
    target          TEXT NOT NULL,
    event           TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER,
    delivered_at    INTEGER,
    CHECK (destination IN ('command', 'webhook', 'ping')),
    CHECK (state IN ('pending', 'sending', 'delivered', 'failed'))
);
CREATE INDEX alert_deliveries_due ON alert_deliveries(next_attempt_at) WHERE state = 'pending';
CREATE INDEX alert_deliveries_by_created ON alert_deliveries(created_at);
CREATE TABLE alert_attempts (
    delivery_id  TEXT NOT NULL REFERENCES alert_deliveries(id) ON DELETE CASCADE,
    attempt      INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,
    ended_at     INTEGER,
    ok           INTEGER,
    result       TEXT,
    execution_id TEXT,
    PRIMARY KEY (delivery_id, attempt)
);
CREATE INDEX alert_attempts_by_execution ON alert_attempts(execution_id)
    WHERE execution_id IS NOT NULL;
";

/// Migration 7: staging. A run may be prepared ahead of its instant: its
/// worker holds the row in the new state `staged` until released. The
/// state CHECK is widened in place (`writable_schema`: existing rows satisfy
/// the wider constraint, so nothing is rewritten or copied; SQLite documents
/// this way for relaxing a CHECK), and the trigger that freezes terminal rows
/// and the index of active rows learn the new state (their DDL also bumps
/// the schema cookie, so every connection reloads the schema). `staged_claims`
/// keeps, for each run claimed ahead and not yet started, what its claim did
/// to its job, so taking it back (`withdraw`) can undo exactly that.
const STAGING_SQLITE: &str = "
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, '''missed'', ''refused'')', '''missed'', ''refused'', ''staged'')')
 WHERE type = 'table' AND name = 'executions';
PRAGMA writable_schema = RESET;

DROP TRIGGER executions_terminal_rows_are_final;
CREATE TRIGGER executions_terminal_rows_are_final
BEFORE UPDATE ON executions
WHEN OLD.state NOT IN ('claimed', 'staged', 'running')
BEGIN
    SELECT RAISE(ABORT, 'terminal execution rows never change');
END;
";

/// Migration 7, PostgreSQL: the same, with its own DDL (a named CHECK
/// constraint replaced in the same transaction; the trigger's condition).
const STAGING_POSTGRES: &str = "
ALTER TABLE executions DROP CONSTRAINT executions_state_check;
ALTER TABLE executions ADD CONSTRAINT executions_state_check
    CHECK (state IN ('claimed', 'running', 'succeeded', 'failed', 'timed_out',
                     'cancelled', 'unknown', 'skipped', 'missed', 'refused', 'staged'));
DROP TRIGGER executions_terminal_rows_are_final ON executions;
CREATE TRIGGER executions_terminal_rows_are_final
BEFORE UPDATE ON executions
FOR EACH ROW WHEN (OLD.state NOT IN ('claimed', 'staged', 'running'))
EXECUTE FUNCTION executions_terminal_rows_are_final();
";

/// Migration 7, both: the active index and `staged_claims`.
const STAGING: &str = "
DROP INDEX executions_active;
CREATE INDEX executions_active ON executions(state)
    WHERE state IN ('claimed', 'staged', 'running');

CREATE TABLE staged_claims (
    execution_id   TEXT PRIMARY KEY REFERENCES executions(id) ON DELETE CASCADE,
    job_id         TEXT NOT NULL,
    -- the slot: the job's next_run_at before the claim
    slot           INTEGER NOT NULL,
    -- what the claim left on the job: its next slot and anchor, and whether
    -- it completed a one-shot
    next_run_at    INTEGER,
    anchor         INTEGER NOT NULL,
    completed      INTEGER NOT NULL,
    -- the job's updated_at at the claim: edit, pause and resume change it
    job_updated_at INTEGER NOT NULL
);
";

/// Migration 8: several hosts on one ledger (PostgreSQL; on SQLite the one
/// host fills the same columns). `executions.host` names the host that
/// claimed a row (its worker runs there and writes the outcome); `jobs.run_on`
/// pins a job to a host name or host label (NULL: any host). `hosts` holds
/// each gateway's lease: renewed every few seconds, judged by a survivor
/// once `lease_until` has passed. `late_outcomes` keeps what a worker on a
/// host declared lost reports after the survivors recorded its run
/// `unknown` (`host_lost`): the terminal row stays as they decided.
/// `alert_attempts.host` names the host whose gateway makes an attempt: at
/// its start a gateway ends only its own host's unanswered attempts, and a
/// survivor those of a host it declares lost.
const HOSTS: &str = "
ALTER TABLE executions ADD COLUMN host TEXT;
ALTER TABLE jobs ADD COLUMN run_on TEXT;
CREATE INDEX executions_active_by_host ON executions(host)
    WHERE state IN ('claimed', 'staged', 'running');
CREATE TABLE hosts (
    host        TEXT PRIMARY KEY,
    labels      TEXT NOT NULL DEFAULT '',
    gateway     TEXT,
    state       TEXT NOT NULL,
    lease_until INTEGER NOT NULL,
    renewed_at  INTEGER NOT NULL,
    started_at  INTEGER NOT NULL,
    lost_at     INTEGER,
    lost_by     TEXT,
    version     TEXT NOT NULL DEFAULT '',
    CHECK (state IN ('live', 'lost', 'stopped'))
);
CREATE TABLE late_outcomes (
    execution_id TEXT PRIMARY KEY REFERENCES executions(id) ON DELETE CASCADE,
    host         TEXT,
    state        TEXT NOT NULL,
    reason_code  TEXT,
    reason       TEXT,
    exit_code    INTEGER,
    signal       INTEGER,
    duration_ms  INTEGER,
    finished_at  INTEGER NOT NULL
);
ALTER TABLE alert_attempts ADD COLUMN host TEXT;
";

/// What retention deletes of the runs' usage, per job and kind (each token
/// kind, `cost_usd`), so that `hermes_cron_job_tokens_total` and
/// `hermes_cron_job_cost_usd_total` are over every run a job ever had.
const PRUNED_USAGE: &str = "
CREATE TABLE pruned_usage_totals (
    job_id  TEXT NOT NULL,
    kind    TEXT NOT NULL,
    amount  REAL NOT NULL,
    PRIMARY KEY (job_id, kind)
);";

/// The model usage a run reported (a JSON object: tokens of each kind, API
/// calls, model, cost and where it came from); NULL when it reported none.
const USAGE: &str = "ALTER TABLE executions ADD COLUMN usage TEXT;";

/// What retention deletes is folded into `pruned_run_totals` first, per job
/// and final state: how many runs, the latest start and the latest success,
/// so the per-job metrics (`hermes_cron_job_runs_total`, last start, last
/// success) are over every run a job ever had, not only the retained rows.
const PRUNED_TOTALS: &str = "
CREATE TABLE pruned_run_totals (
    job_id            TEXT NOT NULL,
    state             TEXT NOT NULL,
    runs              INTEGER NOT NULL,
    last_started_at   INTEGER,
    last_succeeded_at INTEGER,
    PRIMARY KEY (job_id, state)
);
";

/// Migration 10: runs Hermes made by itself. A Hermes job that Hermes ran
/// outside hermes-cron (`hermes cron run`, its built-in ticker) is recorded
/// from Hermes's `cron/executions.db` with the new source `hermes`: the
/// source CHECK is widened in place as migration 7 widened the state CHECK
/// (existing rows satisfy the wider constraint), and the index the import
/// reads its own earlier rows by (its DDL also bumps SQLite's schema cookie).
const HERMES_SOURCE_SQLITE: &str = "
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, '''spawn'', ''reboot'')', '''spawn'', ''reboot'', ''hermes'')')
 WHERE type = 'table' AND name = 'executions';
PRAGMA writable_schema = RESET;
";

/// Migration 10, PostgreSQL: the named CHECK constraint replaced.
const HERMES_SOURCE_POSTGRES: &str = "
ALTER TABLE executions DROP CONSTRAINT executions_source_check;
ALTER TABLE executions ADD CONSTRAINT executions_source_check
    CHECK (source IN ('schedule', 'catch_up', 'manual', 'retry', 'spawn', 'reboot', 'hermes'));
";

/// Migration 10, both.
const HERMES_SOURCE: &str = "
CREATE INDEX executions_from_hermes ON executions(claimed_at) WHERE source = 'hermes';
";

/// One statement list of a migration, and which dialects run it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Step {
    /// Portable DDL: both.
    Both(&'static str),
    Sqlite(&'static str),
    Postgres(&'static str),
}

impl Step {
    /// The statements `dialect` runs for this step, if any.
    pub(crate) fn sql_for(self, dialect: super::Dialect) -> Option<String> {
        use super::Dialect;
        match (self, dialect) {
            (Step::Both(sql), Dialect::Sqlite) | (Step::Sqlite(sql), Dialect::Sqlite) => {
                Some(sql.to_string())
            }
            (Step::Both(sql), Dialect::Postgres) => Some(super::dialect::ddl_to_postgres(sql)),
            (Step::Postgres(sql), Dialect::Postgres) => Some(sql.to_string()),
            _ => None,
        }
    }
}

/// Every migration, in order. Index + 1 is the schema version it produces.
pub(crate) const MIGRATIONS: &[&[Step]] = &[
    &[Step::Both(JOBS)],
    &[
        Step::Both(LEDGER),
        Step::Sqlite(LEDGER_FROZEN_SQLITE),
        Step::Postgres(LEDGER_FROZEN_POSTGRES),
        Step::Both(RETRY_QUEUE),
    ],
    &[Step::Both(JOB_ORIGIN_AND_ENV)],
    &[Step::Both(IDLE_TIMEOUT)],
    &[Step::Both(MANAGED)],
    &[Step::Both(ALERTS)],
    &[
        Step::Sqlite(STAGING_SQLITE),
        Step::Postgres(STAGING_POSTGRES),
        Step::Both(STAGING),
    ],
    &[Step::Both(HOSTS)],
    &[Step::Both(PRUNED_TOTALS)],
    &[
        Step::Sqlite(HERMES_SOURCE_SQLITE),
        Step::Postgres(HERMES_SOURCE_POSTGRES),
        Step::Both(HERMES_SOURCE),
    ],
    &[Step::Both(USAGE)],
    &[Step::Both(PRUNED_USAGE)],
];

/// The schema version this build writes.
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
