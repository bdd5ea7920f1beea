# SPDX-License-Identifier: LGPL-2.1-or-later
# The Hermes provider plugin (python/hermes_berth) through the agent's
# contract, with the agent's base classes replaced by a named test double
# (hermes_double.py) and the real berth underneath.
import os
import time

import pytest

import hermes_double

hermes_double.install()

import berth  # noqa: E402
import hermes_berth  # noqa: E402
from conftest import require  # noqa: E402

PLUGIN_DIR = os.path.dirname(hermes_berth.__file__)


@pytest.fixture(scope="module")
def ctx():
    c = hermes_double.RegisterContextDouble()
    hermes_berth.register(c)
    return c


def test_plugin_yaml_is_a_backend_plugin():
    text = open(os.path.join(PLUGIN_DIR, "plugin.yaml")).read().splitlines()
    fields = dict(line.split(": ", 1) for line in text if ": " in line)
    assert fields["kind"] == "backend" and fields["name"] == "hermes_berth" and fields["version"]


def test_one_provider_per_backend(ctx):
    for n in ("berth_local", "berth_bwrap", "berth_docker", "berth_ssh", "berth_singularity"):
        assert n in ctx.providers
        assert isinstance(ctx.providers[n], hermes_double.TerminalEnvironmentProvider)


def test_flags_come_from_berths_registry(ctx):
    for b in berth.backends():
        p = ctx.providers["berth_" + b.name]
        for flag in ("is_remote", "is_container", "skip_container_guards", "supports_streams",
                     "session_isolated_when_nonpersistent"):
            assert getattr(p, flag) is b.flags[flag], (p.name, flag)
        assert p.cache_path_base == b.cache_path_base
        assert isinstance(p.strip_env_keys, frozenset)
        assert set(b.strip_env_keys) <= p.strip_env_keys, p.name
        assert p.is_available() is (b.status == "ready")
        assert p.description == b.description


def test_strip_env_keys_are_berths(ctx, monkeypatch):
    # berth's registry value, not an empty set: slurm declares what Slurm
    # sets for a job (globs too), the others none.
    assert "slurm" in {b.name for b in berth.backends()}, "berth was built without slurm"
    p = ctx.providers["berth_slurm"]
    assert {"SLURM_JOB_*", "SLURM_JOBID", "SLURM_STEP_*"} <= p.strip_env_keys
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    assert "SLURM_JOB_ID" in p.strip_env_keys  # a glob's match, for an agent that strips by name
    assert "SLURM_CONF" not in p.strip_env_keys
    assert ctx.providers["berth_local"].strip_env_keys == frozenset()


def test_is_available_and_probe_are_cheap(ctx):
    t0 = time.monotonic()
    for _ in range(1000):
        for p in ctx.providers.values():
            p.is_available()
            p.probe()
    assert time.monotonic() - t0 < 1.0  # no process, no network: berth's listing


def test_default_cwd(ctx):
    assert ctx.providers["berth_local"].default_cwd is None
    if ctx.providers["berth_docker"].is_container:
        assert ctx.providers["berth_docker"].default_cwd in ("~",) or ctx.providers["berth_docker"].default_cwd.startswith("/")


def _provider(ctx, backend):
    require(backend)
    return ctx.providers["berth_" + backend]


@pytest.mark.parametrize("backend", ["local", "bwrap", "docker"])
def test_environment_contract(ctx, backend):
    p = _provider(ctx, backend)
    env = p.create_environment(cwd="/tmp", timeout=30, task_id="t1", image="", container_config=None,
                               some_future_key=1, another={"x": 1})
    try:
        r = env.execute("echo hi; exit 4")
        assert r == {"output": "hi\n", "exit_code": 4}
        env.execute("mkdir -p /tmp/hb && cd /tmp/hb")
        assert env.cwd == "/tmp/hb"
        assert env.execute("pwd")["output"] == "/tmp/hb\n"
        r = env.execute("sleep 30", timeout=1)
        assert r["exit_code"] == 124 and "timed out" in r["output"].lower()
        # the agent's cap: 50000 bytes, notices inside
        r = env.execute("seq 1 100000")
        assert len(r["output"].encode()) <= 50000 and "truncated" in r["output"].lower()
        prefix = env.exec_prefix(user=None, interactive=True)
        assert isinstance(prefix, list)
        tmp = env.get_temp_dir()
        assert tmp.startswith("/") and env.execute("test -d %s" % tmp)["exit_code"] == 0
        assert env.uses_host_filesystem is (backend == "local")
        assert isinstance(env.cleanup_stops_processes, bool)
        assert env.execute("cat", stdin_data="in\n")["output"] == "in\n"
    finally:
        env.cleanup()
    env.cleanup()  # idempotent


def test_jail_does_not_use_the_host_filesystem(ctx):
    p = _provider(ctx, "bwrap")
    env = p.create_environment(cwd="/tmp", timeout=30)
    try:
        assert env.uses_host_filesystem is False
    finally:
        env.cleanup()


@pytest.mark.parametrize("backend", ["local", "docker"])
def test_home_resolution(ctx, backend):
    p = _provider(ctx, backend)
    env = p.create_environment(cwd="~", timeout=30, task_id="home")
    try:
        home = env.execute("cd ~ && pwd")["output"].strip()
        assert env.cwd == home and home.startswith("/")
        if backend == "docker":
            assert home == "/root"  # the container's home, not the host's
        assert env.execute("pwd", cwd="~")["output"].strip() == home
    finally:
        env.cleanup()


def test_persistent_container_config_names_the_environment(ctx):
    p = _provider(ctx, "local")
    env = p.create_environment(cwd="/tmp", timeout=30, task_id="task 7", container_config={"container_persistent": True})
    try:
        assert env._env.name == "hermes-task-7"
    finally:
        env._env.remove()


def test_hosted_scope_is_refused_clearly(ctx):
    p = _provider(ctx, "local")
    with pytest.raises(berth.ScopeError) as exc:
        p.create_environment(cwd="/tmp", timeout=30, scope={"tenant": "acme", "agent": "a1"})
    assert "cannot serve a hosted scope" in exc.value.message
    env = p.create_environment(cwd="/tmp", timeout=30, scope={"tenant": "local", "agent": "a1"})
    try:
        assert env.execute("true")["exit_code"] == 0
    finally:
        env.cleanup()
