"""The provider plugin inside the real Hermes Agent (the `hermes-agent`
package this interpreter has), each test in a fresh Hermes home.

Run with Hermes's interpreter:
    $VENV/bin/python -m unittest discover -s integrations/hermes/tests
(`tests/run-all.sh` does, with the venv it caches).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

PLUGIN = Path(__file__).resolve().parent.parent / "hermes_cron_provider"
FIRE = PLUGIN / "fire.py"


class Home:
    """A temp Hermes home, with the plugin installed the way `hermes-cron
    hermes install` installs it, unless `install=False`."""

    def __init__(self, install=True, binary=None):
        self.dir = Path(tempfile.mkdtemp(prefix="hermes-home-"))
        (self.dir / "config.yaml").write_text(
            "security: {allow_lazy_installs: false, tirith_enabled: false}\n"
            "cron: {provider: hermes-cron}\n"
        )
        self.plugin = self.dir / "plugins" / "hermes-cron"
        if install:
            shutil.copytree(PLUGIN, self.plugin, ignore=shutil.ignore_patterns("__pycache__"))
            self.write_settings(binary or "/bin/true")

    def write_settings(self, binary, home=None):
        values = {"binary": binary, "home": str(home or self.dir)}
        (self.plugin / "plugin.json").write_text(json.dumps(values))

    def env(self):
        return {
            "HERMES_HOME": str(self.dir),
            "HOME": str(self.dir),
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "TZ": "UTC",
            "HERMES_DISABLE_LAZY_INSTALLS": "1",
            "TIRITH_ENABLED": "false",
        }

    def python(self, code):
        out = subprocess.run([sys.executable, "-c", code], env=self.env(),
                             capture_output=True, text=True, timeout=120)
        return out

    def resolved(self):
        out = self.python(
            "from cron.scheduler_provider import resolve_cron_scheduler\n"
            "p = resolve_cron_scheduler()\n"
            "print(p.name)")
        return out.stdout.strip(), out.stderr

    def script_job(self, name, body):
        scripts = self.dir / "scripts"
        scripts.mkdir(exist_ok=True)
        (scripts / f"{name}.sh").write_text(body)
        out = self.python(
            "import json\n"
            "from cron.jobs import create_job\n"
            f"j = create_job(prompt=None, schedule='every 1h', name={name!r}, "
            f"script={name + '.sh'!r}, no_agent=True, deliver='local')\n"
            "print(j['id'])")
        assert out.returncode == 0, out
        return out.stdout.strip()

    def job(self, job_id):
        out = self.python(
            "import json\nfrom cron.jobs import get_job\n"
            f"print(json.dumps(get_job({job_id!r})))")
        return json.loads(out.stdout)

    def executions(self, job_id):
        out = self.python(
            "import json\nfrom cron.executions import list_executions\n"
            f"print(json.dumps(list_executions(job_id={job_id!r})))")
        return json.loads(out.stdout)

    def fire(self, job_id):
        return subprocess.run([sys.executable, str(FIRE), job_id], env=self.env(),
                              capture_output=True, text=True, timeout=120)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class ProviderTests(unittest.TestCase):
    def home(self, **kw):
        h = Home(**kw)
        self.addCleanup(h.close)
        return h

    def test_hermes_resolves_the_installed_provider(self):
        name, err = self.home().resolved()
        self.assertEqual(name, "hermes-cron", err)

    def test_without_the_plugin_hermes_falls_back_to_its_builtin_ticker(self):
        name, err = self.home(install=False).resolved()
        self.assertEqual(name, "builtin")
        self.assertIn("not found; using built-in ticker", err)

    def test_a_missing_binary_makes_it_unavailable_and_hermes_falls_back(self):
        h = self.home(binary="/nonexistent/hermes-cron")
        name, err = h.resolved()
        self.assertEqual(name, "builtin")
        self.assertIn("not available; using built-in ticker", err)

    def test_installed_for_another_home_is_unavailable_with_the_fix(self):
        h = self.home()
        h.write_settings("/bin/true", home="/nonexistent/home")
        out = h.python(
            "import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('p', {str(h.plugin / '__init__.py')!r})\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "print(m.unavailable_reason())")
        self.assertIn("hermes-cron hermes install", out.stdout, out)
        self.assertEqual(h.resolved()[0], "builtin")

    def test_hooks_poke_without_starting_anything(self):
        h = self.home()
        poke = h.dir / "cron" / ".hermes-cron.poke"
        out = h.python(
            "import threading, time\n"
            "from cron.scheduler_provider import resolve_cron_scheduler\n"
            "p = resolve_cron_scheduler()\n"
            "t0 = time.monotonic()\n"
            "p.start(threading.Event(), adapters={}, loop=None, interval=60)\n"
            "print('returned', threading.active_count())\n")
        self.assertEqual(out.stdout.split(), ["returned", "1"], out)
        self.assertTrue(poke.exists())
        before = poke.stat().st_mtime_ns
        os.utime(poke, ns=(0, 0))
        h.python("from cron.scheduler_provider import resolve_cron_scheduler\n"
                 "resolve_cron_scheduler().on_jobs_changed()")
        self.assertGreater(poke.stat().st_mtime_ns, 0, before)

    def test_hermes_cron_create_pokes_through_on_jobs_changed(self):
        h = self.home()
        poke = h.dir / "cron" / ".hermes-cron.poke"
        h.script_job("warm", "echo warm\n")  # creates cron/
        if poke.exists():
            poke.unlink()
        out = subprocess.run(
            [str(Path(sys.executable).parent / "hermes"), "cron", "create", "--name", "p",
             "--script", "warm.sh", "--no-agent", "every 1h"],
            env=h.env(), capture_output=True, text=True, timeout=120)
        self.assertIn("Created job", out.stdout, out)
        self.assertTrue(poke.exists(), out)

    def test_fire_due_triggers_the_job_for_hermes_cron_to_run(self):
        h = self.home()
        job_id = h.script_job("t", "echo hi\n")
        out = h.python(
            "from cron.scheduler_provider import resolve_cron_scheduler\n"
            f"print(resolve_cron_scheduler().fire_due({job_id!r}))")
        self.assertEqual(out.stdout.strip(), "True", out)
        job = h.job(job_id)
        self.assertEqual(h.executions(job_id), [], "fire_due runs nothing itself")
        self.assertIsNotNone(job["next_run_at"])


class FireTests(unittest.TestCase):
    def home(self):
        h = Home()
        self.addCleanup(h.close)
        return h

    def test_a_script_job_runs_once_recorded_by_hermes(self):
        h = self.home()
        job_id = h.script_job("hello", "echo hello from the script\n")
        out = h.fire(job_id)
        self.assertEqual(out.returncode, 0, out)
        self.assertIn("hello from the script", out.stdout)
        rows = h.executions(job_id)
        self.assertEqual([(r["source"], r["status"]) for r in rows], [("hermes-cron", "completed")])
        self.assertEqual(h.job(job_id)["last_status"], "ok")

    def test_a_failing_script_exits_1_with_hermes_error(self):
        h = self.home()
        job_id = h.script_job("bad", "echo broken >&2\nexit 3\n")
        out = h.fire(job_id)
        self.assertEqual(out.returncode, 1, out)
        self.assertIn("Script exited with code 3", out.stderr)
        self.assertEqual([r["status"] for r in h.executions(job_id)], ["failed"])

    def test_a_paused_or_missing_job_is_declined_and_nothing_runs(self):
        h = self.home()
        job_id = h.script_job("p", "echo ran\n")
        h.python(f"from cron.jobs import pause_job\npause_job({job_id!r})")
        out = h.fire(job_id)
        self.assertEqual(out.returncode, 100, out)
        self.assertIn("paused", out.stderr)
        self.assertEqual(h.executions(job_id), [])
        gone = h.fire("000000000000")
        self.assertEqual(gone.returncode, 100, gone)
        self.assertIn("no job", gone.stderr)

    def test_a_held_fire_claim_declines_the_second_fire(self):
        h = self.home()
        job_id = h.script_job("c", "echo ran\n")
        h.python(f"from cron.jobs import claim_job_for_fire\nassert claim_job_for_fire({job_id!r})")
        out = h.fire(job_id)
        self.assertEqual(out.returncode, 100, out)
        self.assertIn("being fired already", out.stderr)

    def test_while_hermes_builtin_ticker_runs_the_fire_is_declined(self):
        h = self.home()
        job_id = h.script_job("t", "echo ran\n")
        # What a Hermes gateway that fell back to its ticker does before its first tick.
        h.python("from cron.jobs import record_ticker_heartbeat\nrecord_ticker_heartbeat()")
        out = h.fire(job_id)
        self.assertEqual(out.returncode, 100, out)
        self.assertIn("built-in ticker", out.stderr)
        self.assertEqual(h.executions(job_id), [])
        self.assertIsNone(h.job(job_id).get("fire_claim"))
        # A heartbeat gone stale: the ticker stopped, hermes-cron fires.
        (h.dir / "cron" / "ticker_heartbeat").write_text("1000000000.0")
        out = h.fire(job_id)
        self.assertEqual(out.returncode, 0, out)
        self.assertEqual([r["status"] for r in h.executions(job_id)], ["completed"])

    def usage(self, h, job_id, since):
        out = h.python(
            "import importlib.util, json\n"
            f"spec = importlib.util.spec_from_file_location('fire', {str(FIRE)!r})\n"
            "fire = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(fire)\n"
            f"print(json.dumps(fire._usage({job_id!r}, {since!r})))")
        self.assertEqual(out.returncode, 0, out)
        return json.loads(out.stdout)

    def test_usage_sums_this_fires_sessions_and_says_where_the_cost_came_from(self):
        import sqlite3
        h = self.home()
        db = sqlite3.connect(h.dir / "state.db")
        db.execute(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, "
            "started_at REAL, input_tokens INT, output_tokens INT, cache_read_tokens INT, "
            "cache_write_tokens INT, reasoning_tokens INT, api_call_count INT, model TEXT, "
            "estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT)")
        db.executemany("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", [
            # This fire's session, and a sub-agent's under it.
            ("cron_abc123_20261207_080000", None, 1000.0, 100, 10, 5, 1, 2, 1, "m1",
             0.25, None, "estimated"),
            ("20261207_080001_aaaaaa", "cron_abc123_20261207_080000", 1001.0, 50, 5, 0, 0, 0,
             2, "m1", 0.5, None, "estimated"),
            # An earlier fire of the job, and another job's fire.
            ("cron_abc123_20261207_070000", None, 500.0, 999, 999, 0, 0, 0, 9, "m1",
             9.0, None, "estimated"),
            ("cron_abc1234_20261207_080000", None, 1000.0, 7, 7, 0, 0, 0, 1, "m2",
             1.0, None, "estimated"),
        ])
        db.commit()
        usage = self.usage(h, "abc123", 900.0)
        self.assertEqual(
            {k: usage[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                   "cache_write_tokens", "reasoning_tokens", "api_calls")},
            {"input_tokens": 150, "output_tokens": 15, "cache_read_tokens": 5,
             "cache_write_tokens": 1, "reasoning_tokens": 2, "api_calls": 3})
        self.assertEqual((usage["model"], usage["cost_usd"], usage["cost_source"]),
                         ("m1", 0.75, "hermes_estimated"))
        # No price for one of its calls: no cost at all, said so.
        db.execute("UPDATE sessions SET cost_status = 'unknown', estimated_cost_usd = 0 "
                   "WHERE id = '20261207_080001_aaaaaa'")
        db.commit()
        db.close()
        usage = self.usage(h, "abc123", 900.0)
        self.assertEqual((usage["cost_usd"], usage["cost_source"]), (None, "unknown"))
        # A fire with no session (a script job): nothing to report.
        self.assertIsNone(self.usage(h, "abc123", 2000.0))
        self.assertIsNone(self.usage(h, "nosuchjob", 0.0))

    def test_usage(self):
        h = self.home()
        out = subprocess.run([sys.executable, str(FIRE)], env=h.env(),
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)


if __name__ == "__main__":
    unittest.main()
