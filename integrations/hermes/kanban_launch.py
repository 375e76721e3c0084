"""Launch a kanban worker the way Hermes's kanban dispatcher does, through
`hermes-cron spawn`, and watch it the way the dispatcher watches its pid.

    python kanban_launch.py launch HERMES_CRON HOME TASK LOG WORKSPACE -- CMD...
    python kanban_launch.py alive PID
    python kanban_launch.py stop PID

Hermes 0.19.0's dispatcher (`hermes_cli/kanban_db.py`, `_default_spawn`)
starts `hermes ... chat -q "work kanban task <id>"` with `subprocess.Popen`
(stdin from /dev/null, the task log opened for append as stdout and stderr,
`start_new_session=True`, `cwd` the workspace, `HERMES_KANBAN_*` in the
environment) and keeps `proc.pid`; each tick it asks whether that pid still
lives (`os.kill(pid, 0)`, and not a zombie). Here the launch goes through
`hermes-cron spawn --require-scope --json`, so the worker runs in its own
transient scope and a gateway restart never stops it; without a user
systemd session the launch is refused (fail closed), with exit status 69 and
a JSON error object. `launch` prints what the dispatcher learns, as JSON:
{"code": <spawn's exit status>, "report": <spawn's JSON>}. The reported
`pid` is the command's own, so the dispatcher's stop (`stop`: SIGTERM, up
to 5 s of liveness polls, then SIGKILL, as `_terminate_reclaimed_worker` and the
max-runtime enforcer do) reaches the worker process itself; hermes-cron's
worker records how it ended and kills whatever else the run left.
"""

import json
import os
import subprocess
import sys


def launch(hermes_cron, home, task, log, workspace, cmd):
    env = dict(os.environ)
    argv = [
        hermes_cron, "--home", home, "spawn", "--require-scope", "--json",
        "--name", f"kanban-{task}",
        "--log-file", log,
        "--workdir", workspace,
        "--env", f"HERMES_KANBAN_TASK={task}",
        "--env", f"HERMES_KANBAN_WORKSPACE={workspace}",
        "--", *cmd,
    ]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=env, start_new_session=True, timeout=120)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = {"unparsed_stdout": proc.stdout, "stderr": proc.stderr}
    return {"code": proc.returncode, "report": report}


def alive(pid):
    """The dispatcher's liveness test: signal 0 works and it is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("State:"):
                    return "Z" not in line.split(":", 1)[1].split()[0]
    except OSError:
        return False
    return True


def stop(pid):
    """The dispatcher's stop: SIGTERM, 10 polls 0.5 s apart, then SIGKILL."""
    import signal
    import time
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return {"terminated": True, "sigkill": False}
    for _ in range(10):
        if not alive(pid):
            return {"terminated": True, "sigkill": False}
        time.sleep(0.5)
    sigkill = False
    if alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
            sigkill = True
        except ProcessLookupError:
            pass
    return {"terminated": not alive(pid), "sigkill": sigkill}


def main(argv):
    if len(argv) >= 2 and argv[1] == "alive":
        print(json.dumps({"alive": alive(int(argv[2]))}))
        return 0
    if len(argv) >= 2 and argv[1] == "stop":
        print(json.dumps(stop(int(argv[2]))))
        return 0
    if len(argv) >= 9 and argv[1] == "launch" and argv[7] == "--":
        print(json.dumps(launch(*argv[2:7], argv[8:])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
