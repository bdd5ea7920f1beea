# SPDX-License-Identifier: LGPL-2.1-or-later
"""TEST DOUBLE of the Hermes agent's plugin surface: a stand-in for its
``agent.terminal_env_provider.TerminalEnvironmentProvider`` base class and
for the context ``register(ctx)`` receives, written from the provider guide
(reference/provider-guide.md).  It is not Hermes; it records what a plugin
registers so the tests can drive the real berth through it."""
import sys
import types


class TerminalEnvironmentProvider:
    """Double of the agent's base class: the defaults the guide names."""

    name = None
    display_name = None
    is_remote = False
    is_container = False
    skip_container_guards = False
    supports_streams = False
    session_isolated_when_nonpersistent = False
    serves_hosted_scopes = False

    @property
    def description(self):
        return ""

    @property
    def cache_path_base(self):
        return None

    @property
    def strip_env_keys(self):
        return frozenset()

    @property
    def default_cwd(self):
        return None

    def is_available(self):
        return True

    def create_environment(self, *, cwd, timeout, task_id="default", image=None, container_config=None, **kwargs):
        raise NotImplementedError


RESERVED = {"local", "docker", "modal", "managed_modal", "daytona", "vercel_sandbox", "ssh"}


class RegisterContextDouble:
    """Double of the ``ctx`` passed to register(ctx): the guide's rule that
    a name colliding with a built-in backend is rejected, and a record."""

    def __init__(self):
        self.providers = {}

    def register_terminal_environment_provider(self, provider):
        if not isinstance(provider, TerminalEnvironmentProvider):
            raise TypeError("not a TerminalEnvironmentProvider")
        if provider.name in RESERVED or provider.name in self.providers:
            raise ValueError("backend name %r is reserved or taken" % provider.name)
        self.providers[provider.name] = provider


def install():
    """Make ``agent.terminal_env_provider`` importable (as in the agent)."""
    agent = sys.modules.get("agent") or types.ModuleType("agent")
    mod = types.ModuleType("agent.terminal_env_provider")
    mod.TerminalEnvironmentProvider = TerminalEnvironmentProvider
    agent.terminal_env_provider = mod
    sys.modules["agent"] = agent
    sys.modules["agent.terminal_env_provider"] = mod
