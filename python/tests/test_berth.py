# SPDX-License-Identifier: LGPL-2.1-or-later
# The berth package against a real berth serve, on local, bwrap and docker.
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import berth
from conftest import require

FLAGS = {"is_remote", "is_container", "skip_container_guards", "uses_host_filesystem", "supports_streams",
         "session_isolated_when_nonpersistent", "cleanup_stops_processes", "serves_hosted_scopes"}


def test_version():
    v = berth.version()
    assert v["schema_version"] == berth.SCHEMA_VERSION == 1
    assert "execute" in v["methods"] and "start_process" in v["methods"] and v["not_supported"] == []


def test_backends_with_every_flag():
    bs = {b.name: b for b in berth.backends()}
    assert "local" in bs
    for b in bs.values():
        assert set(b.flags) == FLAGS
        assert b.status in ("ready", "needs_setup", "unavailable")
        assert isinstance(b.strip_env_keys, list) and all(isinstance(k, str) for k in b.strip_env_keys)
    if "slurm" in bs:
        assert "SLURM_JOBID" in bs["slurm"].strip_env_keys
    assert bs["local"].strip_env_keys == []
    assert bs["local"].uses_host_filesystem is True and bs["local"].is_remote is False
    assert bs["local"].available


def test_one_server_per_process():
    a = berth.Environment(backend="local")
    b = berth.Environment(backend="local")
    assert a._server is b._server is berth.default_server()
    a.cleanup()
    b.cleanup()


def test_execute(env):
    r = env.execute("echo out; echo err >&2; exit 3")
    assert isinstance(r, berth.Result)
    assert (r.exit_code, r.output) == (3, "out\nerr\n")
    assert r.termination["kind"] == "exited" and r.schema_version == 1 and r.backend == env.backend
    assert not r.timed_out and not r.interrupted and not r.truncated


def test_cwd_persists(env):
    env.execute("mkdir -p /tmp/berth-py && cd /tmp/berth-py && export PYV=kept")
    r = env.execute('pwd; echo "$PYV"')
    assert r.output == "/tmp/berth-py\nkept\n"
    assert env.cwd == "/tmp/berth-py"


def test_stdin_text_and_bytes(env):
    assert env.execute("cat", stdin="fed\n").output == "fed\n"
    assert env.execute("od -An -tx1 | tr -d ' \\n'", stdin=b"\x00\xff\n").output == "00ff0a"


def test_streamed_output(env):
    got = []
    r = env.execute("echo a; sleep 0.3; echo b", on_output=got.append)
    assert "".join(got) == "ab\n".replace("ab", "a\nb") and r.output == "a\nb\n"
    assert len(got) >= 2  # two pieces, as they came


def test_timeout(env):
    t0 = time.monotonic()
    r = env.execute("sleep 30", timeout=1)
    assert r.exit_code == 124 and r.timed_out and r.termination["kind"] == "timeout"
    assert time.monotonic() - t0 < 15


def test_max_bytes(env):
    r = env.execute("seq 1 100000", max_bytes=1000)
    assert r.truncated and len(r.output.encode()) <= 1000


def test_cancel_from_another_thread(env):
    threading.Timer(0.7, env.cancel).start()
    t0 = time.monotonic()
    r = env.execute("echo started; sleep 30")
    assert r.exit_code == 130 and r.interrupted and r.termination["kind"] == "interrupted"
    assert "started" in r.output
    assert time.monotonic() - t0 < 10
    assert env.execute("echo after").output == "after\n"  # the environment goes on
    assert env.cancel() is False  # nothing runs


def test_exec_prefix(env):
    prefix = env.exec_prefix()
    assert isinstance(prefix, list) and all(isinstance(w, str) for w in prefix)
    if env.backend == "local":
        return  # local's prefix runs the words on this host as they are
    out = subprocess.run(prefix + ["bash", "-c", "echo \"$0 inside\"", "word"], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=60)
    assert out.stdout == "word inside\n", out.stderr


def test_context_manager_cleans_up(backend):
    with berth.Environment(backend=backend) as e:
        assert e.execute("true").exit_code == 0
    with pytest.raises(berth.BerthError):
        e.execute("true")
    e.cleanup()  # idempotent


def test_threads_share_one_server(backend):
    envs = [berth.Environment(backend=backend) for _ in range(8)]
    results = [None] * 8

    def run(i):
        results[i] = envs[i].execute("sleep 1; echo %d" % i)

    t0 = time.monotonic()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    assert [r.output for r in results] == ["%d\n" % i for i in range(8)]
    assert took < 6, "8 x sleep 1 from 8 threads took %.1fs" % took
    for e in envs:
        e.cleanup()


def test_one_environment_from_two_threads_waits():
    with berth.Environment(backend="local") as e:
        out = []
        ts = [threading.Thread(target=lambda: out.append(e.execute("sleep 0.3; echo x").output)) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert out == ["x\n", "x\n"]


def test_named_environment_persists():
    a = berth.Environment(backend="local", name="pyt-named")
    a.execute("cd /tmp")
    a.cleanup()
    b = berth.Environment(backend="local", name="pyt-named")
    assert b.name == "pyt-named" and b.execute("pwd").output == "/tmp\n"
    b.remove()
    listed = subprocess.run([os.environ["BERTH"], "ls"], capture_output=True, text=True).stdout
    assert "pyt-named" not in listed


def test_files(env):
    e = env
    d = e.temp_dir()
    assert d.startswith("/")
    # A directory of our own in the environment: the relative write below
    # lands in the environment's cwd, which on local is the server's (the
    # source tree's python/ under python.sh) until we cd elsewhere.
    work = e.execute("mktemp -d %s/pyt-files.XXXXXX" % shlex.quote(d)).output.strip()
    assert work.startswith(d + "/pyt-files.")
    try:
        e.write_file(work + "/pyt/b.bin", b"a\0b\xff")
        assert e.read_file(work + "/pyt/b.bin") == b"a\0b\xff"
        assert e.execute("cd %s" % shlex.quote(work)).exit_code == 0
        e.write_file("rel.txt", "héllo")
        assert e.execute("cat rel.txt").output == "héllo"
        assert e.read_file(work + "/rel.txt") == "héllo".encode()
        assert e.realpath(work + "/pyt/../pyt/b.bin") == e.realpath(work + "/pyt/b.bin")
        with pytest.raises(berth.BerthError) as exc:
            e.read_file("/no/such/file")
        assert exc.value.code == "not_found"
    finally:
        e.execute("cd / && rm -rf %s" % shlex.quote(work))


def test_processes(backend):
    with berth.Environment(backend=backend, name="pyt-proc-" + backend) as e:
        try:
            p = e.start_process("for i in 1 2 3; do echo line $i; sleep 0.1; done; exit 3")
            assert p.stdout.read() == b"line 1\nline 2\nline 3\n"
            assert p.wait(10) == 3 and p.state()["termination"] == "exited"
            q = e.start_process("while read -r l; do echo got $l; done", stdin=True)
            q.stdin.write(b"x y\n")
            q.stdin.close()
            assert q.stdout.read() == b"got x y\n"
            r = e.start_process("sleep 300")
            assert r.poll() is None
            again = e.attach_process(r.id)
            assert again.stop()["termination"] == "stopped"
            assert {x["process"] for x in e.list_processes()} >= {p.id, q.id, r.id}
        finally:
            e.remove()


def test_scope():
    with pytest.raises(berth.ScopeError) as exc:
        berth.Environment(backend="local", scope={"tenant": "acme", "agent": "a"})
    assert exc.value.code == "hosted"
    with berth.Environment(backend="local", scope={"tenant": "local", "agent": "a"}) as e:
        assert e.scope == {"tenant": "local", "agent": "a"}


def test_errors_are_berth_errors():
    with pytest.raises(berth.BerthError) as exc:
        berth.Environment(backend="nosuchbackend")
    assert exc.value.code == "no_provider" and "local" in exc.value.message


def test_server_gone():
    s = berth.Server()
    e = berth.Environment(backend="local", server=s)
    os.kill(s._proc.pid, signal.SIGKILL)
    with pytest.raises(berth.BerthError) as exc:
        for _ in range(50):
            e.execute("true")
            time.sleep(0.05)
    assert exc.value.code == "server_gone"
    s.close()


def test_closing_the_server_removes_throwaway_containers():
    require("docker")
    s = berth.Server()
    e = berth.Environment(backend="docker", server=s)
    e.execute("true")
    ids = subprocess.run(["docker", "ps", "-aq", "--filter", "label=berth=1", "--filter", "label=berth.env=" + e.execute("true").env],
                         capture_output=True, text=True).stdout.split()
    assert ids, "the throw-away container is listed while it lives"
    s.close()
    left = subprocess.run(["docker", "ps", "-aq", "--filter", "id=" + ids[0]], capture_output=True, text=True).stdout.split()
    assert left == [], "closing the server removed the throw-away container"


def test_keyboard_interrupt_stops_the_command(tmp_path):
    pidfile = tmp_path / "pid"
    script = textwrap.dedent("""
        import sys, time, berth
        env = berth.Environment(backend="local")
        t0 = time.monotonic()
        try:
            env.execute("sleep 60 & echo $! > %s; wait")
        except KeyboardInterrupt:
            print("interrupted after %%.1f" %% (time.monotonic() - t0), flush=True)
            sys.exit(7)
    """ % pidfile)
    p = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         stdout=subprocess.PIPE, text=True)
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 7 and out.startswith("interrupted"), out
    st = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    assert st == "" or st.startswith("Z"), "the command's tree was killed (sleep is %r)" % st
