#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Per-command latency through the Python package, as ratios (never bare
times): Environment.execute("true") on local (a named environment opened
once, the way harnesses use it) against subprocess.run(["bash", "-c",
"true"]) and against subprocess.run([berth, "exec", "--json", "--",
"true"]), interleaved in one run from one Python process.

    BERTH=_b/berth python3 tests/bench/python-bench.py [-n ROUNDS] [--json]

Budget (issue 16): execute("true") <= 1.5x the subprocess bash call.
Exit status 1 when the median is over budget."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import berth  # noqa: E402

BUDGET = 1.5


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=200, help="rounds (each runs every case once)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    exe = os.environ.get("BERTH") or "berth"
    # An uninstalled build's berth is a libtool wrapper script, which would
    # charge a shell to every CLI call: time the real binary.
    real = os.path.join(os.path.dirname(exe), ".libs", os.path.basename(exe))
    if os.path.isfile(real) and open(exe, "rb").read(2) == b"#!":
        libs = os.path.dirname(real)
        os.environ["LD_LIBRARY_PATH"] = libs + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
        os.environ["BERTH"] = exe = real
        # ...and its modules and agent, as bench-env.sh finds them (else
        # berth looks where it would be installed: no agent, commands over
        # the exec fallback -- what this bench measured before)
        b = os.path.dirname(libs)
        os.environ.setdefault("BERTH_MODULEDIR", ":".join(os.path.join(b, m, ".libs") for m in ("docker", "bwrap", "local", "ssh", "singularity", "slurm")))
        os.environ.setdefault("BERTH_LIBEXECDIR", ":".join(os.path.join(b, d) for d in ("", "agent", "bwrap", "ssh", "slurm")))
        os.environ.setdefault("BERTH_BINDIR", b)
    name = "pybench-%d" % os.getpid()
    env = berth.Environment(backend="local", name=name)
    tenv = berth.Environment(backend="local")
    srv = berth.default_server()
    cases = {
        "package": lambda: env.execute("true"),
        # for the split: a throw-away environment (no state writes, no
        # lock), and the bare round trip to the server (a version request)
        "package_throwaway": lambda: tenv.execute("true"),
        "round_trip": lambda: srv.request("version"),
        "bash": lambda: subprocess.run(["bash", "-c", "true"]),
        "cli_json": lambda: subprocess.run([exe, "exec", "--json", "--", "true"], stdout=subprocess.DEVNULL),
    }
    for f in cases.values():  # warm up
        f()
    transport = env.execute("true").transport  # what was measured: agent, or the exec fallback
    times = {k: [] for k in cases}
    order = list(cases)
    try:
        for i in range(a.n):
            rot = order[i % len(order):] + order[:i % len(order)]  # interleaved, rotating
            for k in rot:
                t0 = time.perf_counter()
                cases[k]()
                times[k].append(time.perf_counter() - t0)
    finally:
        env.remove()
        tenv.cleanup()
    out = {"schema_version": 1, "rounds": a.n, "budget_package_vs_bash": BUDGET, "transport": transport}
    pairs = (("package", "bash"), ("package", "cli_json"), ("cli_json", "bash"),
             ("package_throwaway", "bash"), ("round_trip", "bash"))
    for num, den in pairs:
        key = "%s_vs_%s" % (num, den)
        out[key] = {
            "min": min(times[num]) / min(times[den]),
            "median": statistics.median(times[num]) / statistics.median(times[den]),
            "p90": pct(times[num], 90) / pct(times[den], 90),
        }
    if a.json:
        print(json.dumps(out))
    else:
        print("%d rounds, interleaved, transport %s; ratios of per-command latency (min / median / p90):" % (a.n, transport))
        for k in ["%s_vs_%s" % p for p in pairs]:
            r = out[k]
            print("  %-30s %.2fx / %.2fx / %.2fx" % (k.replace("_vs_", " vs "), r["min"], r["median"], r["p90"]))
        print("budget: package vs bash <= %.1fx (median): %s" % (BUDGET, "met" if out["package_vs_bash"]["median"] <= BUDGET else "NOT met"))
    return 0 if out["package_vs_bash"]["median"] <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
