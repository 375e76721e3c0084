"""hermes-cron as the Hermes Agent's cron provider.

`hermes-cron hermes install` copies this directory to
`$HERMES_HOME/plugins/hermes-cron/`, writes `plugin.json` next to it (where the
hermes-cron binary is, which home it serves) and sets `cron.provider:
hermes-cron` in the Hermes config. Hermes then loads this module instead of
starting its built-in ticker in its gateway.

The provider holds no state and starts nothing: the hermes-cron gateway
watches `cron/jobs.json` itself and runs every fire in a transient systemd
scope (see `fire.py`). Each hook here only *pokes* hermes-cron, by touching
`cron/.hermes-cron.poke`, so that it reads `jobs.json` at once. Hermes calls
these hooks in whatever process changed a job (the CLI, the gateway, the
dashboard), on a fresh instance each time, so a file event is the one signal
that reaches the hermes-cron gateway from all of them. No hook uses the
network.
"""

import json
import os
from pathlib import Path

# Hermes finds a provider by the class name `CronScheduler` in this file.
from cron.scheduler_provider import CronScheduler

NAME = "hermes-cron"
PLUGIN_DIR = Path(__file__).resolve().parent
SETTINGS = PLUGIN_DIR / "plugin.json"
POKE = ".hermes-cron.poke"


def settings():
    """What `hermes-cron hermes install` wrote, or None when it is unreadable."""
    try:
        value = json.loads(SETTINGS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def hermes_home():
    from hermes_constants import get_hermes_home

    return Path(get_hermes_home())


def _same_dir(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def unavailable_reason(values=None, home=None):
    """Why hermes-cron cannot take this home's jobs, or None when it can.

    Cheap and offline: Hermes asks several times per CLI command.
    """
    values = settings() if values is None else values
    if values is None:
        return f"{SETTINGS} is missing or unreadable; run `hermes-cron hermes install`"
    binary = values.get("binary")
    if not isinstance(binary, str) or not os.access(binary, os.X_OK):
        return f"the hermes-cron binary {binary!r} is not there; reinstall hermes-cron"
    home = hermes_home() if home is None else home
    installed_for = values.get("home")
    if not isinstance(installed_for, str) or not _same_dir(installed_for, home):
        return (
            f"installed for the home {installed_for!r}, not {str(home)!r}; "
            f"run `hermes-cron hermes install` with HERMES_HOME={home}"
        )
    return None


def poke(home=None):
    """Make the hermes-cron gateway read `cron/jobs.json` now."""
    cron = (hermes_home() if home is None else home) / "cron"
    try:
        cron.mkdir(parents=True, exist_ok=True)
        path = cron / POKE
        with open(path, "a", encoding="utf-8"):
            pass
        os.utime(path)
    except OSError:
        # hermes-cron also watches jobs.json itself; a lost poke only
        # means it notices a change by that route.
        pass


class HermesCronScheduler(CronScheduler):
    """Hermes's cron, fired by hermes-cron in restart-safe scopes."""

    @property
    def name(self):
        return NAME

    def is_available(self):
        return unavailable_reason() is None

    def start(self, stop_event, *, adapters=None, loop=None, interval=60, **_extra):
        # No ticker in the Hermes gateway: hermes-cron's gateway fires the jobs.
        # Hermes's recovery on start, as its built-in ticker does.
        self.recover_interrupted()
        poke()

    def stop(self):
        return None

    def on_jobs_changed(self):
        poke()

    def reconcile(self):
        poke()

    # recover_interrupted: Hermes's own. An execution fired by hermes-cron
    # names its fire.py process, which Hermes's recovery judges rightly from
    # any process; every fire.py runs it too.

    def fire_due(self, job_id, *, adapters=None, loop=None):
        # The dashboard's and the API's "fire": make the job due now; the
        # hermes-cron gateway claims and runs it like any other fire.
        from cron.jobs import trigger_job

        fired = trigger_job(job_id) is not None
        poke()
        return fired


def register(ctx):
    hook = getattr(ctx, "register_cron_scheduler", None)
    if hook is not None:
        hook(HermesCronScheduler())
