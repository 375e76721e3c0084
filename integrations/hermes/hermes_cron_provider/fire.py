"""Fire one Hermes job, inside the scope hermes-cron made for it.

    python fire.py JOB_ID

hermes-cron runs this with Hermes's own interpreter and `HERMES_HOME` set, as
the command of a hermes-cron run. It does what Hermes's own fire path does
(`claim_job_for_fire`, an `executions.db` row, `run_one_job`), so the agent,
its skills, delivery and Hermes's records are exactly Hermes's; only the
process is hermes-cron's, which a Hermes or hermes-cron gateway restart does
not stop. The `executions.db` row names this process, so Hermes's recovery
sees it alive for as long as the run lasts.

Hermes's own limits act first, and hermes-cron's timeouts are backstops
after them. While the agent is active (by Hermes's own measure: API calls,
stream chunks, tool heartbeats) a line is printed at least every
ACTIVITY_EVERY seconds, so the output hermes-cron watches is quiet no
earlier than the agent is. When hermes-cron stops the fire (a backstop, a
`hermes-cron stop`, a stopped scope) its SIGTERM becomes a failure inside
Hermes's own run, so Hermes records it and delivers its failure message.
The fire ends when Hermes's `run_one_job` returns, even while a thread is
still blocked (a model that never answers). Each fire first marks
`unknown`, by Hermes's own recovery, the executions whose process is gone
(a fire killed outright), and a fire claim such a fire left is released.

Exit status (read by hermes-cron):
  0    the job ran and Hermes recorded it completed, and what it had to
       deliver was delivered (or it had nothing to deliver)
  1    the job ran and failed (Hermes's error is printed)
  101  the job ran and Hermes recorded it completed, but Hermes could not
       deliver its answer (its delivery error is printed; Hermes keeps it as
       the job's `last_delivery_error`); hermes-cron records `failed`
       (`delivery_failed`)
  100  Hermes declined the fire: the job is being fired already, is paused
       or disabled, or is gone, or Hermes's built-in ticker is running and
       fires this home's jobs itself. Nothing ran; hermes-cron records
       `skipped`.
  2    usage
Whatever the job delivered is printed on stdout, so it is in the run's output.
"""

import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path

DECLINED = 100
DELIVERY_FAILED = 101
SOURCE = "hermes-cron"
# hermes-cron's idle backstop for agent jobs counts on this (see the core's
# provider/limits.rs).
ACTIVITY_EVERY = 30.0
# A built-in ticker that stamped its heartbeat this recently is running; the
# gateway's `provider/activation.rs` (TICKER_FRESH) uses the same bound.
TICKER_FRESH = 150.0


class Stopped(Exception):
    """hermes-cron stopped this fire (SIGTERM)."""


def _log_to_stderr():
    # Hermes's progress reaches hermes-cron's captured output: it is both the
    # run's log and what hermes-cron's inactivity timeout watches.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _report_activity():
    """Print a line when the agent is active, at most every ACTIVITY_EVERY s."""
    try:
        from run_agent import AIAgent
    except Exception:
        return
    touch = getattr(AIAgent, "_touch_activity", None)
    if touch is None:
        return
    lock = threading.Lock()
    last = [0.0]

    def touched(agent, desc):
        touch(agent, desc)
        now = time.monotonic()
        with lock:
            if now - last[0] < ACTIVITY_EVERY:
                return
            last[0] = now
        print(f"hermes-cron: agent active: {desc}", file=sys.stderr, flush=True)

    AIAgent._touch_activity = touched


def _stop_on_sigterm():
    """The first SIGTERM fails the run where it stands, inside Hermes's own
    error handling; later ones are ignored (the SIGKILL after the grace is
    hermes-cron's last word)."""

    def stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Stopped(
            "stopped by hermes-cron before Hermes finished (a hermes-cron timeout, "
            "`hermes-cron stop`, or its scope was stopped)"
        )

    signal.signal(signal.SIGTERM, stop)


def _watch_delivery():
    """Keep what Hermes's `_deliver_result` returns (None, or its error) or
    raises, in the list returned, one entry per delivery."""
    results = []
    try:
        from cron import scheduler
    except Exception:
        return results
    deliver = getattr(scheduler, "_deliver_result", None)
    if deliver is None:
        return results

    def delivering(*args, **kwargs):
        try:
            error = deliver(*args, **kwargs)
        except Exception as e:
            results.append(str(e) or type(e).__name__)
            raise
        results.append(error)
        return error

    scheduler._deliver_result = delivering
    return results


def _recover():
    """Hermes's own recovery: executions whose process is gone end `unknown`."""
    try:
        from cron.executions import recover_interrupted_executions

        n = recover_interrupted_executions()
    except Exception as e:
        print(f"hermes-cron: Hermes's recovery failed: {e}", file=sys.stderr)
        return
    if n:
        print(f"hermes-cron: marked {n} interrupted Hermes execution(s) unknown",
              file=sys.stderr)


def _this_host(by):
    """Whether a claim's `by` (Hermes's `_machine_id()`: HERMES_MACHINE_ID, else
    host:pid) names this host."""
    import socket

    explicit = os.getenv("HERMES_MACHINE_ID", "").strip()
    if explicit:
        return by == explicit
    return isinstance(by, str) and by.rsplit(":", 1)[0] == socket.gethostname()


def _release_dead_claim(job_id):
    """Release this host's fire claim on the job when the fire that took it
    is provably over: an execution was made after the claim and none of the
    job's is still claimed or running (a fire killed outright, marked
    `unknown` by the recovery). `mark_job_run` would have released it;
    Hermes's own TTL (300 s) would decline every fire until then."""
    from datetime import datetime

    from cron import jobs as store
    from cron.executions import list_executions

    lock = getattr(store, "_jobs_lock", None)
    aware = getattr(store, "_ensure_aware", None)
    if lock is None or aware is None:
        return False
    job = store.get_job(job_id) or {}
    claim = job.get("fire_claim")
    if not isinstance(claim, dict) or not _this_host(claim.get("by")):
        return False
    try:
        taken = aware(datetime.fromisoformat(claim["at"]))
        rows = list_executions(job_id=job_id, limit=50)
        if any(r.get("status") in ("claimed", "running") for r in rows):
            return False
        if not any(aware(datetime.fromisoformat(r["claimed_at"])) >= taken for r in rows):
            return False
    except (KeyError, TypeError, ValueError):
        return False
    with lock():
        jobs = store.load_jobs()
        for record in jobs:
            if record.get("id") == job_id and record.get("fire_claim") == claim:
                record["fire_claim"] = None
                store.save_jobs(jobs)
                return True
    return False


def _builtin_ticker_age():
    """Seconds since Hermes's built-in ticker stamped its heartbeat, or None."""
    try:
        from cron.jobs import get_ticker_heartbeat_age
    except ImportError:
        return None
    try:
        return get_ticker_heartbeat_age()
    except Exception:
        return None


def _declined_reason(job_id):
    from cron.jobs import get_job

    job = get_job(job_id)
    if job is None:
        return f"Hermes has no job {job_id} (removed?)"
    if not job.get("enabled", True) or job.get("state") == "paused":
        return f"the Hermes job {job_id} is paused or disabled"
    return f"the Hermes job {job_id} is being fired already (its fire claim is held)"


def _execution(execution_id, job_id):
    from cron.executions import list_executions

    for row in list_executions(job_id=job_id, limit=50):
        if row.get("id") == execution_id:
            return row
    return None


def _delivered(job_id, since):
    """The output document this run saved, if any (newest first)."""
    from hermes_constants import get_hermes_home

    folder = Path(get_hermes_home()) / "cron" / "output" / job_id
    try:
        docs = [p for p in folder.glob("*.md") if p.stat().st_mtime >= since]
    except OSError:
        return None
    if not docs:
        return None
    newest = max(docs, key=lambda p: p.stat().st_mtime)
    try:
        return newest.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


# The sessions Hermes recorded for a fire of one job since an instant, and
# their sub-agents' (Hermes names a cron run's session
# `cron_<job id>_<local time>`; it keeps no job id column).
_USAGE_QUERY = """
WITH RECURSIVE run(id) AS (
  SELECT id FROM sessions WHERE id >= :lo AND id < :hi AND started_at >= :since
  UNION SELECT s.id FROM sessions s JOIN run ON s.parent_session_id = run.id)
SELECT s.input_tokens, s.output_tokens, s.cache_read_tokens, s.cache_write_tokens,
       s.reasoning_tokens, s.api_call_count, s.model, s.estimated_cost_usd,
       s.actual_cost_usd, s.cost_status
  FROM sessions s JOIN run USING (id) ORDER BY s.started_at
"""


def _usage(job_id, since):
    """This fire's model usage as Hermes recorded it in state.db (read
    only), summed over its sessions; None when it has none (a script job,
    a run that never reached the model)."""
    import sqlite3
    from hermes_constants import get_hermes_home

    db = Path(get_hermes_home()) / "state.db"
    if not db.exists():
        return None
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = conn.execute(_USAGE_QUERY, {
            "lo": f"cron_{job_id}_", "hi": f"cron_{job_id}`", "since": since,
        }).fetchall()
    finally:
        conn.close()
    if not rows:
        return None
    total = [sum(int(r[i] or 0) for r in rows) for i in range(6)]
    usage = dict(zip(("input_tokens", "output_tokens", "cache_read_tokens",
                      "cache_write_tokens", "reasoning_tokens", "api_calls"), total))
    usage["model"] = next((r[6] for r in rows if r[6]), None)
    statuses = {r[9] for r in rows if r[5]}
    if not statuses:
        usage["cost_usd"], usage["cost_source"] = None, "none"
    elif statuses <= {"actual"} and all(r[8] is not None for r in rows if r[5]):
        usage["cost_usd"], usage["cost_source"] = sum(r[8] for r in rows if r[5]), "hermes_actual"
    elif statuses <= {"actual", "estimated", "included"}:
        usage["cost_usd"] = sum((r[8] if r[8] is not None else r[7] or 0.0) for r in rows if r[5])
        usage["cost_source"] = "hermes_estimated"
    else:
        # Hermes knows no price for the model (a custom or local endpoint).
        usage["cost_usd"], usage["cost_source"] = None, "unknown"
    return usage


def _report_usage(job_id, since):
    """Write this fire's usage where hermes-cron's worker reads it into the
    run's row (HERMES_CRON_USAGE_FILE, hermes-cron's own file)."""
    target = os.environ.get("HERMES_CRON_USAGE_FILE")
    if not target:
        return
    try:
        usage = _usage(job_id, since)
    except Exception as e:  # noqa: BLE001 - a usage record must not fail the fire
        print(f"hermes-cron: cannot read Hermes's usage records: {e}", file=sys.stderr)
        return
    if usage is None:
        return
    partial = f"{target}.partial"
    try:
        with open(partial, "w", encoding="utf-8") as f:
            json.dump(usage, f)
        os.replace(partial, target)
    except OSError as e:
        print(f"hermes-cron: cannot write the usage report {target}: {e}", file=sys.stderr)


def fire(job_id):
    from cron.executions import create_execution
    from cron.jobs import claim_job_for_fire, get_job
    from cron.scheduler import run_one_job

    _recover()
    # The hand-over is exact: a Hermes gateway that fell back to its built-in
    # ticker (the plugin gone, or a gateway started before the switch) stamps
    # its heartbeat before its first tick, and that tick advances the job
    # without a fire claim, so a claim here would run the slot twice.
    age = _builtin_ticker_age()
    if age is not None and age < TICKER_FRESH:
        print(f"hermes-cron: not run: Hermes's built-in ticker ran {age:.0f}s ago "
              "(cron/ticker_heartbeat) and fires this home's jobs itself",
              file=sys.stderr)
        return DECLINED
    claimed = claim_job_for_fire(job_id)
    if not claimed and _release_dead_claim(job_id):
        print(f"hermes-cron: released the fire claim of a fire of {job_id} that was killed",
              file=sys.stderr)
        claimed = claim_job_for_fire(job_id)
    if not claimed:
        print(f"hermes-cron: not run: {_declined_reason(job_id)}", file=sys.stderr)
        return DECLINED
    job = get_job(job_id)
    if job is None:
        print(f"hermes-cron: not run: Hermes has no job {job_id} (removed?)", file=sys.stderr)
        return DECLINED
    execution_id = create_execution(job_id, source=SOURCE)["id"]
    job["execution_id"] = execution_id
    started = time.time() - 1  # output names have 1 s resolution
    print(f"hermes-cron: firing Hermes job {job_id} ({job.get('name') or 'unnamed'}), "
          f"Hermes execution {execution_id}", file=sys.stderr, flush=True)
    deliveries = _watch_delivery()
    run_one_job(job)
    _report_usage(job_id, started)
    doc = _delivered(job_id, started)
    if doc:
        sys.stdout.write(doc if doc.endswith("\n") else doc + "\n")
        sys.stdout.flush()
    row = _execution(execution_id, job_id) or {}
    status = row.get("status")
    undelivered = [e for e in deliveries if e]
    if status == "completed" and undelivered:
        print(f"hermes-cron: the job ran, but Hermes could not deliver its answer "
              f"(deliver: {job.get('deliver') or 'local'}): {'; '.join(undelivered)}",
              file=sys.stderr)
        return DELIVERY_FAILED
    if status == "completed":
        return 0
    print(f"hermes-cron: Hermes recorded {status or 'nothing'}: {row.get('error') or ''}".rstrip(),
          file=sys.stderr)
    return 1


def main(argv):
    if len(argv) != 2 or not argv[1]:
        print("usage: fire.py JOB_ID", file=sys.stderr)
        return 2
    if not os.environ.get("HERMES_HOME"):
        print("fire.py: HERMES_HOME is not set; hermes-cron sets it for the job", file=sys.stderr)
        return 2
    _log_to_stderr()
    _stop_on_sigterm()
    _report_activity()
    return fire(argv[1])


if __name__ == "__main__":
    try:
        code = main(sys.argv)
    except Stopped as e:
        # Stopped outside Hermes's run (its claim, or after it returned).
        print(f"hermes-cron: {e}", file=sys.stderr)
        code = 143
    sys.stdout.flush()
    sys.stderr.flush()
    # Not sys.exit: a thread still blocked (on a model that never answers)
    # would hold the interpreter, and the scope, until it gives up.
    os._exit(code)
