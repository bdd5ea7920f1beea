# SPDX-License-Identifier: LGPL-2.1-or-later
"""hermes_berth: berth's backends as terminal backends of the Hermes agent.

A backend plugin (plugin.yaml ``kind: backend``): ``register(ctx)``
registers one provider per berth backend -- ``berth_local``,
``berth_bwrap``, ``berth_docker``, ``berth_ssh``, ``berth_singularity``
(and any berth plugin backend) -- selected with
``terminal.backend: berth_docker``.  Each provider's flags come from
berth's registry (``berth backends``); its environments run through the
``berth`` Python package (one ``berth serve`` per process).
"""

import fnmatch
import os
import re

import berth

try:  # the agent's base class; the plugin also works without it
    from agent.terminal_env_provider import TerminalEnvironmentProvider as _ProviderBase
except ImportError:  # pragma: no cover - outside the agent
    _ProviderBase = object

__all__ = ["register", "BerthProvider", "BerthEnvironment", "KNOWN_BACKENDS"]

# Registered even when berth cannot list them (then unavailable, saying why).
KNOWN_BACKENDS = ("local", "bwrap", "docker", "ssh", "singularity")

_FLAG_DEFAULTS = {
    "is_remote": False,
    "is_container": False,
    "skip_container_guards": False,
    "uses_host_filesystem": False,
    "supports_streams": False,
    "session_isolated_when_nonpersistent": False,
    "cleanup_stops_processes": True,
    "serves_hosted_scopes": False,
}


class BerthEnvironment:
    """The environment object Hermes drives (BaseEnvironment's duck-typed
    contract): execute -> {"output", "exit_code"}, cleanup, exec_prefix,
    cwd, get_temp_dir, uses_host_filesystem, cleanup_stops_processes."""

    def __init__(self, provider, *, cwd, timeout, task_id="default", image=None, name=None, server=None, scope=None):
        self.provider = provider
        self.timeout = timeout
        self.task_id = task_id
        flags = provider._flags
        self.uses_host_filesystem = bool(flags.get("uses_host_filesystem"))
        self.cleanup_stops_processes = bool(flags.get("cleanup_stops_processes", True))
        home = cwd == "~"
        self._env = berth.Environment(backend=provider.berth_backend, name=name,
                                      cwd=None if home or not cwd else cwd,
                                      image=image or None, task_id=task_id, server=server, scope=scope)
        self.cwd = self._env.cwd
        self._temp_dir = None
        if home:
            # "~": the home the sandbox has, resolved there, never on the host
            r = self._env.execute("cd ~ && pwd", timeout=60)
            if r.exit_code == 0 and r.output.strip().startswith("/"):
                self.cwd = r.output.strip().splitlines()[-1]

    def execute(self, command, timeout=None, cwd=None, stdin_data=None, **kwargs):
        """Run COMMAND; {"output": str, "exit_code": int}.  The output is
        capped as the agent's (tool_output.max_bytes, default 50000),
        notices of truncation, timeout (124) and interrupt (130) inside the
        cap.  Unknown keywords are ignored."""
        t = self.timeout if timeout is None else timeout
        if cwd == "~":
            command = "cd ~ && " + command
            cwd = None
        r = self._env.execute(command, timeout=t if t else None, cwd=cwd or None,
                              stdin=stdin_data if stdin_data is not None else None)
        if r.cwd:
            self.cwd = r.cwd
        return {"output": r.output, "exit_code": r.exit_code}

    def cleanup(self, **kwargs):
        """Release the sandbox; idempotent (a second call does nothing)."""
        self._env.cleanup()

    def exec_prefix(self, *, user=None, interactive=True, **kwargs):
        """A local argv running what follows it inside the environment
        with stdin and stdout open, or None when it cannot right now."""
        try:
            return self._env.exec_prefix(user=user, interactive=interactive)
        except berth.BerthError:
            return None

    def get_temp_dir(self):
        """The environment's temporary directory ($TMPDIR there, else /tmp)."""
        if self._temp_dir is None:
            r = self._env.execute('printf %s "${TMPDIR:-/tmp}"', timeout=60)
            self._temp_dir = r.output.strip() if r.exit_code == 0 and r.output.startswith("/") else "/tmp"
        return self._temp_dir

    def cancel(self):
        return self._env.cancel()


class BerthProvider(_ProviderBase):
    """One berth backend as a Hermes terminal environment provider."""

    def __init__(self, info, server=None):
        self._info = info  # a berth.Backend, or a dict for one berth could not list
        raw = info.raw if isinstance(info, berth.Backend) else info
        self.berth_backend = raw["name"]
        self._flags = dict(_FLAG_DEFAULTS)
        self._flags.update(raw.get("flags") or {})
        self._raw = raw
        self._server = server

    # Read-only properties (they override whatever the base class declares).
    name = property(lambda self: "berth_" + self.berth_backend)
    display_name = property(lambda self: "berth " + self.berth_backend)
    is_remote = property(lambda self: bool(self._flags["is_remote"]))
    is_container = property(lambda self: bool(self._flags["is_container"]))
    skip_container_guards = property(lambda self: bool(self._flags["skip_container_guards"]))
    supports_streams = property(lambda self: bool(self._flags["supports_streams"]))
    session_isolated_when_nonpersistent = property(lambda self: bool(self._flags["session_isolated_when_nonpersistent"]))
    serves_hosted_scopes = property(lambda self: bool(self._flags["serves_hosted_scopes"]))

    @property
    def description(self):
        return self._raw.get("description") or "berth backend " + self.berth_backend

    @property
    def env_description(self):
        return self.description

    @property
    def cache_path_base(self):
        return self._raw.get("cache_path_base")

    @property
    def strip_env_keys(self):
        """The keys berth's provider declares (``strip_env_keys`` of
        ``berth backends --json``): variable names, or narrow globs
        (``SLURM_JOB_*``) which come with the names of this process's
        environment they match, for an agent that strips by name.  berth
        itself strips the union of every provider's (and its credential
        list) from what it spawns."""
        keys = [k for k in self._raw.get("strip_env_keys") or () if isinstance(k, str) and k]
        out = set(keys)
        globs = [k for k in keys if any(c in k for c in "*?[")]
        if globs:
            out.update(n for n in os.environ if any(fnmatch.fnmatchcase(n, g) for g in globs))
        return frozenset(out)

    @property
    def default_cwd(self):
        cwd = self._raw.get("default_cwd")
        if cwd and cwd.startswith("/"):
            return cwd
        if self.is_container or self.is_remote:
            return "~"  # resolved inside the sandbox when it is up
        return None

    def is_available(self):
        """berth's probe, as listed at registration: no network."""
        return self._raw.get("status") == "ready"

    def probe(self):
        return {"available": self.is_available(), "status": self._raw.get("status", "unavailable"),
                "reason": self._raw.get("reason")}

    def setup_instructions(self):
        return self._raw.get("reason") or "see: berth doctor -b " + self.berth_backend

    def doctor_checks(self):
        try:
            res = berth.doctor(self.berth_backend, server=self._server)
        except berth.BerthError as e:
            return [{"check": self.name, "ok": False, "detail": e.message, "fix": "see berth doctor"}]
        return [c for b in res for c in b.get("checks", [])]

    def create_environment(self, *, cwd=None, timeout=None, task_id="default", image=None,
                           container_config=None, **kwargs):
        """A BerthEnvironment; unknown keywords are ignored.  With
        container_config {"container_persistent": True} the environment is
        a named one (hermes-<task_id>), kept between sessions."""
        name = None
        if isinstance(container_config, dict) and container_config.get("container_persistent"):
            name = "hermes-" + (re.sub(r"[^A-Za-z0-9_.-]", "-", str(task_id)) or "default")
        # a hosted scope (scope=, tenant other than "local") makes it the
        # agent's own sandbox; a backend that cannot serve one is refused
        # by berth (ScopeError, code "hosted") before anything is made
        return BerthEnvironment(self, cwd=cwd, timeout=timeout, task_id=task_id, image=image,
                                name=name, server=self._server, scope=kwargs.get("scope"))


def providers(server=None):
    """One BerthProvider per berth backend (those berth lists, and the
    known five even when it cannot list them)."""
    found = {}
    try:
        for b in berth.backends(server):
            found[b.name] = b
    except berth.BerthError as e:
        reason = e.message
    else:
        reason = "berth does not list this backend (built without it?)"
    out = [BerthProvider(found[n], server) for n in found]
    for n in KNOWN_BACKENDS:
        if n not in found:
            out.append(BerthProvider({"name": n, "status": "unavailable", "reason": reason, "flags": {}}, server))
    return out


def register(ctx):
    """The plugin's entry point: register every berth backend."""
    for p in providers():
        ctx.register_terminal_environment_provider(p)
