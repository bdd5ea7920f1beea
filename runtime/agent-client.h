/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* agent-client.h: the agent transport -- every command of an environment
   as a channel of one berth-agent stream (agent/proto.h), the agent
   placed and started once per environment through the environment's
   fallback transport (transport.h).  Where the agent cannot run (no
   executable location, a foreign architecture, an upload that fails)
   the environment falls back to exec-per-command and the reason is kept
   (berth_agent_status).  */
#ifndef BERTH_AGENT_CLIENT_H
#define BERTH_AGENT_CLIENT_H

#include "transport.h"

struct berth_agent_mux;

BERTH_INTERNAL extern const berth_transport_ops berth_agent_transport;

/* True unless the agent is switched off: BERTH_TRANSPORT=exec in the
   environment, or terminal.agent: off.  */
BERTH_INTERNAL bool berth_agent_wanted (berth_env *env);
/* Let go of ENV's agent stream (the agent exits once no controller and
   no detached process is left).  */
BERTH_INTERNAL void berth_agent_env_free (berth_env *env);
/* What the agent of ENV does: "agent" (running), "exec: <why>" (not
   used, why), or NULL (not tried yet).  */
BERTH_INTERNAL const char *berth_agent_status (berth_env *env);

/* `berth doctor`: whether commands of BACKEND run through the agent and,
   where they cannot, why: when the backend is READY and runs commands
   on this host (not REMOTE), one throw-away environment runs `true` and
   its transport is the answer; elsewhere (a container, a connection, an
   allocation to make) and when not ready: its program is there, it is
   not switched off, the first command decides.  */
BERTH_INTERNAL void berth_agent_doctor (berth_ctx *ctx, const char *backend, bool ready, bool remote, berth_check_fn fn, void *userdata);

/* The one-line error of an environment without bash (berth runs every
   command with bash), naming the image and its key when it has one.  */
BERTH_INTERNAL int berth_no_bash_error (berth_env *env, berth_error **reterr);
/* True when sh in ENV says it has no bash (a probe through the exec
   transport, for a command that could not start).  */
BERTH_INTERNAL bool berth_env_lacks_bash (berth_env *env);

/* agent-reach.c: a named environment's serving agent, reached with no
   command through the transport.  */
/* A socket connected to ENV's agent as recorded for TAG (its path inside
   the environment in *RET_AT), else -errno.  */
BERTH_INTERNAL int berth_agent_reach (berth_env *env, const char *tag, char **ret_at);
/* The stream to the agent at AT ended under a command: true with the
   backend's words in *RETERR when the transport saw why (the container,
   master or jail is gone); false when it still reaches the socket.  */
BERTH_INTERNAL bool berth_agent_lost_why (berth_env *env, const char *at, berth_error **reterr);
/* Record that ENV's agent of TAG serves PATH (inside the environment),
   when the backend can reach it from this host.  */
BERTH_INTERNAL void berth_agent_record (berth_env *env, const char *tag, const char *path);
/* Drop the record (it led to no agent).  */
BERTH_INTERNAL void berth_agent_forget (berth_env *env);
/* Stop ENV's serving agent (the environment is being removed), when it
   is reachable; quietly nothing else.  */
BERTH_INTERNAL void berth_agent_quit (berth_env *env);

/* agent-place.c */
/* SHA-256 of LEN bytes at DATA as 64 hex digits and a NUL in HEX.  */
/* The scripts that find (and start) or upload the agent inside an
   environment (see agent-place.c).  */
/* SERVE: the agent serves a named environment (--serve); the script
   then prints "BERTH-AGENT-AT:<socket path>" before the agent starts.  */
BERTH_INTERNAL char *berth_agent_start_script (const char *arch, const char *hash, const char *dir_tag, const char *sock_name, bool serve);
BERTH_INTERNAL char *berth_agent_upload_script (const char *hash, const char *dir_tag);

#endif
