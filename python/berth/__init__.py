# SPDX-License-Identifier: LGPL-2.1-or-later
"""berth: run commands in terminal environments from Python.

A client of ``berth serve`` (berth-serve(7)), standard library only.  One
``berth serve`` child per process serves every :class:`Environment`
(started on first use; the command is ``$BERTH``, else ``berth`` on
PATH)::

    import berth
    with berth.Environment(backend="docker", image="debian:12") as env:
        r = env.execute("echo hello; pwd")
        print(r.exit_code, r.output)

Everything here is thread-safe.  A running :meth:`Environment.execute` is
interrupted by :meth:`Environment.cancel` from another thread, or by
KeyboardInterrupt in the thread running it: the command's tree is killed
where it runs and the result is interrupted, exit code 130.
"""

import atexit
import io
import queue
import shlex
import time
import base64
import itertools
import json
import os
import shutil
import subprocess
import threading

__all__ = [
    "BerthError", "NotSupported", "ScopeError", "Process", "Result", "Backend", "Server", "Environment",
    "Process", "backends", "doctor", "version", "default_server", "SCHEMA_VERSION",
]

SCHEMA_VERSION = 1


class BerthError(Exception):
    """An error reply of berth serve, or the server gone.

    ``code`` is its stable name (berth-serve(7), ERRORS: ``not_found``,
    ``busy``, ``backend``, ...), ``message`` one line that says what to do,
    ``output`` what a command printed before its transport failed (or
    None), ``berth_code`` libberth's numeric code (or None).
    """

    def __init__(self, code, message, output=None, berth_code=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.output = output
        self.berth_code = berth_code

    @classmethod
    def _from_reply(cls, err):
        code = err.get("code", "failed")
        kind = NotSupported if code == "not_supported" else ScopeError if code in ("scope", "hosted") else cls
        return kind(code, err.get("message", code), err.get("output"), err.get("berth_code"))


class ScopeError(BerthError):
    """A handle used under another scope than the one that created it
    ("cross-agent handle refused"), or a backend that cannot serve a
    hosted scope."""


class NotSupported(BerthError):
    """The method is not supported (yet) by this berth: processes, files
    a backend does not have."""


class Result:
    """The result object of an execute: the fields of ``berth exec --json``
    (berth-serve(7), RESULT OBJECT) as attributes: output, exit_code, cwd,
    cwd_changed, timed_out, interrupted, truncated, output_total_bytes,
    full_output_path, environment_recreated, backend, env, duration_ms,
    termination (a dict: kind, signal), transport, schema_version.  Fields
    a newer berth adds are attributes too; ``raw`` is the whole dict."""

    def __init__(self, raw):
        self.raw = raw
        self.__dict__.update(raw)

    def __repr__(self):
        return "Result(exit_code=%r, output=%r)" % (self.exit_code, self.output)

    @property
    def ok(self):
        return self.exit_code == 0


class Backend:
    """One element of berth's registry (``berth backends --json``): name,
    description, origin, status ("ready", "needs_setup", "unavailable"),
    reason, default_cwd, cache_path_base, flags (a dict of every provider
    flag), strip_env_keys (the variable names or globs the provider
    declares, a list) and each flag as an attribute (``b.is_container``)."""

    def __init__(self, raw):
        self.raw = raw
        self.flags = dict(raw.get("flags") or {})
        for k, v in raw.items():
            if k != "flags":
                setattr(self, k, v)

    def __getattr__(self, name):
        flags = self.__dict__.get("flags") or {}
        if name in flags:
            return flags[name]
        raise AttributeError(name)

    @property
    def available(self):
        return self.status == "ready"

    def __repr__(self):
        return "Backend(%r, %r)" % (self.name, self.status)


def _find_berth():
    path = os.environ.get("BERTH") or shutil.which("berth")
    if not path:
        raise BerthError("not_found", "berth is not installed: set BERTH to the berth command, or put berth on PATH")
    return path


class _Call:
    __slots__ = ("event", "reply", "on_event")

    def __init__(self, on_event):
        self.event = threading.Event()
        self.reply = None
        self.on_event = on_event


class Server:
    """A ``berth serve`` child and the connection to it.

    ``path``: the berth command (default ``$BERTH``, else PATH);
    ``config``: a berth configuration file (``berth --config``).  Its own
    session, so a ^C at the terminal reaches Python (which cancels what
    runs), not the server.  Closing it (or the process ending) ends the
    server, which cleans up every throw-away environment.
    """

    def __init__(self, path=None, config=None):
        argv = [path or _find_berth()]
        if config:
            argv += ["--config", config]
        argv.append("serve")
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      start_new_session=True, bufsize=0)
        self._wlock = threading.Lock()
        self._lock = threading.Lock()
        self._pending = {}
        self._ids = itertools.count(1)
        self._dead = None
        self._pid = os.getpid()
        self._reader = threading.Thread(target=self._read_loop, name="berth-serve-reader", daemon=True)
        self._reader.start()

    # -- the wire --
    def _read_loop(self):
        f = self._proc.stdout
        try:
            for line in f:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                cid = msg.get("id")
                with self._lock:
                    call = self._pending.get(cid)
                if call is None:
                    continue
                if "event" in msg:
                    if call.on_event:
                        try:
                            call.on_event(msg)
                        except Exception:  # a callback's bug must not stop the reader
                            pass
                    continue
                with self._lock:
                    self._pending.pop(cid, None)
                call.reply = msg
                call.event.set()
        finally:
            rc = self._proc.poll()
            with self._lock:
                self._dead = "berth serve ended" + ("" if rc is None else " (exit status %d)" % rc)
                pending, self._pending = self._pending, {}
            for call in pending.values():
                call.reply = {"error": {"code": "server_gone", "message": self._dead + "; see its stderr"}}
                call.event.set()

    def _send(self, cid, method, params, on_event=None):
        call = _Call(on_event)
        line = json.dumps({"id": cid, "method": method, "params": params}, separators=(",", ":")).encode() + b"\n"
        with self._lock:
            if self._dead:
                raise BerthError("server_gone", self._dead)
            self._pending[cid] = call
        try:
            with self._wlock:
                self._proc.stdin.write(line)
        except (BrokenPipeError, OSError, ValueError):
            with self._lock:
                self._pending.pop(cid, None)
            raise BerthError("server_gone", "berth serve is gone (cannot write to it)")
        return call

    @staticmethod
    def _result(call):
        reply = call.reply
        if "error" in reply:
            raise BerthError._from_reply(reply["error"])
        return reply.get("result")

    def request(self, method, params=None, on_event=None):
        """Send one request and wait for its reply: the result, or
        BerthError (NotSupported for not_supported)."""
        call = self._send(next(self._ids), method, params or {}, on_event)
        call.event.wait()
        return self._result(call)

    def close(self):
        """End the server (closing its stdin); it cleans up its
        throw-away environments.  Idempotent."""
        p = self._proc
        if p.poll() is None:
            try:
                with self._wlock:
                    p.stdin.close()
            except OSError:
                pass
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._reader.join(timeout=5)
        if p.stdout:
            p.stdout.close()

    @property
    def alive(self):
        return self._proc.poll() is None and not self._dead

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- registry --
    def backends(self):
        return [Backend(b) for b in self.request("backends")]

    def doctor(self, backend=None):
        return self.request("doctor", {"backend": backend} if backend else {})

    def version(self):
        return self.request("version")


_default = None
_default_lock = threading.Lock()


def default_server():
    """The process's one server, started on first use (again after a fork
    or after it died)."""
    global _default
    with _default_lock:
        if _default is None or _default._pid != os.getpid() or not _default.alive:
            _default = Server()
        return _default


@atexit.register
def _close_default():
    if _default is not None and _default._pid == os.getpid():
        _default.close()


def backends(server=None):
    """Every backend of berth's registry with its status and every flag
    (list of Backend)."""
    return (server or default_server()).backends()


def doctor(backend=None, server=None):
    """``berth doctor --json``: [{backend, checks: [{check, ok, detail, fix}]}]."""
    return (server or default_server()).doctor(backend)


def version(server=None):
    return (server or default_server()).version()


def _scope_dict(scope):
    if scope is None:
        return None
    if isinstance(scope, dict):
        return {"tenant": scope.get("tenant"), "agent": scope.get("agent")}
    return {"tenant": getattr(scope, "tenant", None), "agent": getattr(scope, "agent", None)}


class _ProcessStdout(io.RawIOBase):
    """The process's output as a byte stream: what it printed since its
    start (at most the last 1 MiB replayed), then as it comes, until it
    ends.  Fed by an attach_process stream of the server's reader."""

    def __init__(self, proc):
        self._proc = proc
        self._chunks = queue.Queue()
        self._buf = b""
        self._eof = False
        self._started = False
        self._lock = threading.Lock()

    def _start(self):
        with self._lock:
            if self._started:
                return
            self._started = True

        def on_event(msg):
            if "data" in msg:
                self._chunks.put(msg["data"].encode())
            elif "data_b64" in msg:
                self._chunks.put(base64.b64decode(msg["data_b64"]))

        env = self._proc.env
        srv = env._server
        call = srv._send(next(srv._ids), "attach_process", {"env": env.handle, "process": self._proc.id}, on_event)

        def wait_end():
            call.event.wait()
            self._proc._end = call.reply
            self._chunks.put(None)

        threading.Thread(target=wait_end, name="berth-process-" + self._proc.id, daemon=True).start()

    def readable(self):
        return True

    def readinto(self, b):
        self._start()
        while not self._buf and not self._eof:
            chunk = self._chunks.get()
            if chunk is None:
                self._eof = True
            else:
                self._buf = chunk
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


class _ProcessStdin(io.RawIOBase):
    """The process's stdin (started with stdin=True): write, then close
    for its EOF."""

    def __init__(self, proc):
        self._proc = proc

    def writable(self):
        return True

    def write(self, b):
        data = bytes(b)
        self._proc.env._req("write", {"process": self._proc.id, "data_b64": base64.b64encode(data).decode("ascii")})
        return len(data)

    def close(self):
        if not self.closed:
            self._proc.env._req("close_stdin", {"process": self._proc.id})
        super().close()


class Process:
    """A background process in an environment: it runs there in a session
    of its own until it ends or is stopped, whatever happens to this
    Python process; ``Environment.attach_process(id)`` reaches it again.

    stdout: its output as a byte stream (replayed from its start);
    stdin: a writable byte stream when started with stdin=True;
    poll(): None while it runs, else its exit code; state(): the whole
    state dict (state, exit_code, termination); stop(): kill its tree.
    """

    def __init__(self, env, pid, has_stdin=False):
        self.env = env
        self.id = pid
        self._end = None
        self.stdout = io.BufferedReader(_ProcessStdout(self))
        self.stdin = io.BufferedWriter(_ProcessStdin(self)) if has_stdin else None

    def __repr__(self):
        return "<berth.Process %s in %s>" % (self.id, self.env.handle)

    def state(self):
        return dict(self.env._req("poll", {"process": self.id}))

    def poll(self):
        st = self.state()
        return None if st["state"] == "running" else st["exit_code"]

    def wait(self, timeout=None):
        """Wait for its end (polling); its exit code, or None on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            code = self.poll()
            st = None if code is None else code
            if code is not None or (self.state()["state"] != "running"):
                return st
            if deadline is not None and time.monotonic() > deadline:
                return None
            time.sleep(0.1)

    def stop(self):
        return dict(self.env._req("stop_process", {"process": self.id}))


class Environment:
    """An environment of a berth backend, opened at construction.

    backend: None is terminal.backend; name: None is a throw-away
    environment (removed by cleanup() or when the server ends), else a
    persistent named one (kept until remove()); cwd, image: as
    ``berth exec -C / --image``; scope: a hosted scope ({"tenant",
    "agent"} or an object with those attributes): only the "local" tenant
    for now (another raises NotSupported).

    Attributes: handle, backend, name, cwd (updated by every execute),
    flags (dict), default_cwd, cache_path_base, scope.
    """

    def __init__(self, backend=None, name=None, cwd=None, image=None, scope=None, server=None,
                 setup_timeout=None, task_id=None):
        self._server = server or default_server()
        params = {k: v for k, v in (("backend", backend), ("name", name), ("cwd", cwd), ("image", image),
                                    ("scope", _scope_dict(scope)), ("setup_timeout", setup_timeout),
                                    ("task_id", task_id)) if v is not None}
        info = self._server.request("open", params)
        self.handle = info["env"]
        self.backend = info.get("backend")
        self.name = info.get("name")
        self.cwd = info.get("cwd")
        self.scope = info.get("scope")
        self.flags = dict(info.get("flags") or {})
        self.default_cwd = info.get("default_cwd")
        self.cache_path_base = info.get("cache_path_base")
        self._lock = threading.Lock()  # one execute at a time: others wait
        self._running = None
        self._closed = False

    def __repr__(self):
        return "Environment(%r, backend=%r, name=%r)" % (self.handle, self.backend, self.name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()

    def _req(self, method, params=None, **kw):
        if self._closed:
            raise BerthError("not_found", "environment %s was cleaned up; open a new one" % self.handle)
        p = {"env": self.handle}
        p.update(params or {})
        return self._server.request(method, p, **kw)

    def execute(self, command, timeout=None, stdin=None, on_output=None, cwd=None, max_bytes=None):
        """Run COMMAND (one shell string, run by bash) and return its Result.

        timeout: seconds (None: terminal.timeout; 0: none).  stdin: str or
        bytes fed to the command (then closed).  on_output(text): called
        from the server's reader thread with the output as it arrives
        (output that is not UTF-8 is decoded with replacement characters);
        without it no output events are sent.  cwd: for this command.
        max_bytes: the output cap, notices included.

        A non-zero exit, a timeout (124) or an interrupt (130) is a Result,
        never an exception; BerthError is berth's own failure.  Calls from
        several threads run one after another.
        """
        params = {"command": command, "stream": on_output is not None}
        if timeout is not None:
            params["timeout"] = timeout
        if cwd is not None:
            params["cwd"] = cwd
        if max_bytes is not None:
            params["max_bytes"] = max_bytes
        if stdin is not None:
            if isinstance(stdin, str):
                params["stdin"] = stdin
            else:
                params["stdin_b64"] = base64.b64encode(bytes(stdin)).decode("ascii")
        on_event = None
        if on_output is not None:
            def on_event(msg):
                if "data" in msg:
                    on_output(msg["data"])
                elif "data_b64" in msg:
                    on_output(base64.b64decode(msg["data_b64"]).decode("utf-8", "replace"))
        srv = self._server
        with self._lock:
            if self._closed:
                raise BerthError("not_found", "environment %s was cleaned up; open a new one" % self.handle)
            p = {"env": self.handle}
            p.update(params)
            cid = next(srv._ids)
            call = srv._send(cid, "execute", p, on_event)
            self._running = cid
            try:
                try:
                    call.event.wait()
                except KeyboardInterrupt:
                    # ^C: stop the command where it runs, wait for it, re-raise
                    self._cancel_id(cid)
                    call.event.wait(30)
                    raise
            finally:
                self._running = None
            res = Result(srv._result(call))
        if res.cwd:
            self.cwd = res.cwd
        return res

    def _cancel_id(self, cid):
        try:
            self._server.request("cancel", {"id": cid})
            return True
        except BerthError:
            return False

    def cancel(self):
        """Interrupt the running execute (from any thread): it returns an
        interrupted Result, exit code 130.  False when nothing runs."""
        cid = self._running
        return cid is not None and self._cancel_id(cid)

    def exec_prefix(self, user=None, interactive=True):
        """A local argv (list of str) that runs the words after it inside
        the environment with stdin and stdout open."""
        return list(self._req("exec_prefix", {"user": user, "interactive": interactive})["argv"])

    def cleanup(self):
        """Release the environment (a throw-away one is removed, a named
        one kept).  Idempotent."""
        if self._closed:
            return
        with self._lock:
            if self._closed:
                return
            if self._server.alive:
                self._server.request("cleanup", {"env": self.handle})
            self._closed = True

    def remove(self):
        """Remove a named environment for good (``berth rm``)."""
        if not self.name:
            return self.cleanup()
        with self._lock:
            self._server.request("remove", {"name": self.name})
            self._closed = True

    # -- background processes --
    def start_process(self, command, cwd=None, stdin=False, pty=False):
        """Start COMMAND (one shell string) as a background process
        (-> Process), with the environment's cwd and exported state; with
        pty=True on a terminal of its own (needs berth-agent there)."""
        if not isinstance(command, str):
            command = " ".join(shlex.quote(str(w)) for w in command)
        r = self._req("start_process", {"command": command, "cwd": cwd, "stdin": bool(stdin), "pty": bool(pty)})
        return Process(self, r["process"], has_stdin=bool(stdin))

    def attach_process(self, pid):
        """The process PID of this environment again (-> Process), from
        any berth; BerthError (not_found) when it is not there."""
        self._req("poll", {"process": pid})
        return Process(self, pid, has_stdin=True)

    def stop_process(self, pid):
        """Kill the whole tree of process PID where it runs."""
        return dict(self._req("stop_process", {"process": pid}))

    def list_processes(self):
        """Every process of this environment: dicts of process, state,
        exit_code, termination, started, command."""
        return list(self._req("list_processes")["processes"])

    # -- files, as the environment's commands see them --
    def read_file(self, path, max_bytes=None):
        """The bytes of PATH (relative: the environment's cwd)."""
        params = {"path": path}
        if max_bytes is not None:
            params["max_bytes"] = max_bytes
        r = self._req("read_file", params)
        return base64.b64decode(r["data_b64"]) if "data_b64" in r else r["data"].encode()

    def fetch_file(self, path, max_bytes=None):
        """read_file of a regular file only (media to deliver elsewhere)."""
        params = {"path": path, "regular_only": True}
        if max_bytes is not None:
            params["max_bytes"] = max_bytes
        r = self._req("read_file", params)
        return base64.b64decode(r["data_b64"]) if "data_b64" in r else r["data"].encode()

    def write_file(self, path, data, mode=None):
        """Replace PATH with DATA (str or bytes), atomically where the
        target allows, its parent directories made."""
        if isinstance(data, str):
            data = data.encode()
        params = {"path": path, "data_b64": base64.b64encode(data).decode("ascii")}
        if mode is not None:
            params["mode"] = mode
        self._req("write_file", params)

    def realpath(self, path):
        """PATH with every link resolved, in the environment."""
        return self._req("realpath", {"path": path})["path"]

    def temp_dir(self):
        """The environment's own temporary directory."""
        return self._req("temp_dir")["path"]

    def stop_idle(self):
        """Suspend the environment while idle, keeping its workspace; the
        next call resumes it."""
        self._req("stop_idle")
