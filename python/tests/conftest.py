# SPDX-License-Identifier: LGPL-2.1-or-later
# The package's tests run against a REAL berth serve ($BERTH, set by
# tests/integration/python.sh to the build's berth) in a private berth home.
import os
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/: berth, hermes_berth
sys.path.insert(0, HERE)  # hermes_double

if not os.environ.get("BERTH"):
    raise pytest.UsageError("set BERTH to the berth command to test (tests/integration/python.sh does)")

_home = tempfile.mkdtemp(prefix="berth-pytest.")
for k in ("STATE", "CONFIG", "CACHE", "DATA", "RUNTIME"):
    os.makedirs(os.path.join(_home, k.lower()), mode=0o700)
    os.environ["XDG_%s_%s" % (k, "DIR" if k == "RUNTIME" else "HOME")] = os.path.join(_home, k.lower())
os.makedirs(os.path.join(_home, "config", "berth"))
CONFIG = os.path.join(_home, "config", "berth", "config.yaml")
with open(CONFIG, "w") as f:
    f.write("terminal:\n  docker_image: berth-test:latest\n  container_memory: 512\n  container_cpu: 1\n")
os.environ.pop("BERTH_CONFIG", None)
os.environ.pop("DOCKER_HOST", None)

import berth  # noqa: E402

MUST_WORK = os.environ.get("CI") == "true" or os.environ.get("BERTH_TEST_MUST_WORK") == "1"
BACKENDS = ["local", "bwrap", "docker"]


def pytest_sessionfinish(session, exitstatus):
    berth._close_default()
    shutil.rmtree(_home, ignore_errors=True)


_status = {}


def require(backend):
    """Skip (fail in CI) when BACKEND is not ready here."""
    if not _status:
        for b in berth.backends():
            _status[b.name] = (b.status, b.reason)
    st, reason = _status.get(backend, ("missing", "berth was built without it"))
    if st != "ready":
        msg = "%s is %s here: %s" % (backend, st, reason)
        if MUST_WORK:
            pytest.fail("cannot run here, and CI requires it: " + msg)
        pytest.skip(msg)


@pytest.fixture(params=BACKENDS)
def backend(request):
    require(request.param)
    return request.param


@pytest.fixture
def env(backend):
    with berth.Environment(backend=backend) as e:
        yield e
