#!/usr/bin/env python3
"""Independent oracle for tests/suite/dst_oracles.rs: the fires of cron expressions
in one zone, computed by Python croniter.

stdin:  {"zone": "Europe/Berlin",
         "exprs": [{"expr": "30 2 * * *", "windows": [[<from>, <until>], ...]}, ...]}
        (instants in unix seconds; each window is (from, until])
stdout: {"croniter": "<version>", "fires": {"30 2 * * *": [<unix s>, ...], ...}}
        or, for an expression croniter refuses, {"error": "..."} in its place.

Each window is croniter's own walk: get_next from a zone-aware `from`, then
from each fire it returned, while <= until. Nothing here knows our policy.
Exit 3 when croniter is not installed.
"""
import json
import sys
from datetime import datetime, timezone
from importlib.metadata import version
from zoneinfo import ZoneInfo

try:
    from croniter import croniter
except ImportError:
    sys.stderr.write("croniter is not installed: pip install croniter\n")
    sys.exit(3)


def fires(expr, zone, start, end):
    base = datetime.fromtimestamp(start, timezone.utc).astimezone(zone)
    it = croniter(expr, base)
    out = []
    while True:
        at = it.get_next(float)
        if at > end:
            return out
        out.append(int(round(at)))


def main():
    req = json.load(sys.stdin)
    zone = ZoneInfo(req["zone"])
    result = {}
    for item in req["exprs"]:
        expr = item["expr"]
        try:
            found = []
            for start, end in item["windows"]:
                found.extend(fires(expr, zone, start, end))
            result[expr] = found
        except Exception as err:  # reported per expression
            result[expr] = {"error": f"{type(err).__name__}: {err}"}
    json.dump({"croniter": version("croniter"), "fires": result}, sys.stdout)


if __name__ == "__main__":
    main()
