"""Fire one Hermes job, inside the scope hermes-cron made for it.

    python fire.py JOB_ID

hermes-cron runs this with Hermes's own interpreter and `HERMES_HOME` set, as
the command of a hermes-cron run. It does what Hermes's own fire path does
(`claim_job_for_fire`, an `executions.db` row, `run_one_job`), so the agent,
its skills, delivery and Hermes's records are exactly Hermes's; only the
process is hermes-cron's, which a Hermes or hermes-cron gateway restart does
not stop. The `executions.db` row names this process, so Hermes's recovery
sees it alive for as long as the run lasts.

Exit status (read by hermes-cron):
  0    the job ran and Hermes recorded it completed
  1    the job ran and failed (Hermes's error is printed)
  100  Hermes declined the fire: the job is being fired already, is paused
       or disabled, or is gone. Nothing ran; hermes-cron records `skipped`.
  2    usage
Whatever the job delivered is printed on stdout, so it is in the run's output.
"""

import logging
import os
import sys
import time
from pathlib import Path

DECLINED = 100
SOURCE = "hermes-cron"


def _log_to_stderr():
    # Hermes's progress reaches hermes-cron's captured output: it is both the
    # run's log and what hermes-cron's inactivity timeout watches.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


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


def fire(job_id):
    from cron.executions import create_execution
    from cron.jobs import claim_job_for_fire, get_job
    from cron.scheduler import run_one_job

    if not claim_job_for_fire(job_id):
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
    run_one_job(job)
    doc = _delivered(job_id, started)
    if doc:
        sys.stdout.write(doc if doc.endswith("\n") else doc + "\n")
        sys.stdout.flush()
    row = _execution(execution_id, job_id) or {}
    status = row.get("status")
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
    return fire(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
