//! Append-only schema migrations, applied by `PRAGMA user_version`.
//!
//! Never edit a shipped migration: append a new one. Each runs in one
//! exclusive transaction together with the `user_version` bump, so a crash
//! leaves either the old or the new schema.

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

-- A terminal row never changes: only claimed and running rows may be updated.
CREATE TRIGGER executions_terminal_rows_are_final
BEFORE UPDATE ON executions
WHEN OLD.state NOT IN ('claimed', 'running')
BEGIN
    SELECT RAISE(ABORT, 'terminal execution rows never change');
END;

-- Retries owed: a failed or timed-out attempt waiting for its backoff.
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
const STAGING: &str = "
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

/// Every migration, in order. Index + 1 is the `user_version` it produces.
pub(crate) const MIGRATIONS: &[&str] = &[
    JOBS,
    LEDGER,
    JOB_ORIGIN_AND_ENV,
    IDLE_TIMEOUT,
    MANAGED,
    ALERTS,
    STAGING,
];

/// The schema version this build writes.
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
