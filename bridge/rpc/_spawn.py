"""``session/create`` params -> the library's spawn options.

Validated before anything is spawned: a NUL character anywhere, an unusable
``cwd``, tool names and modes the CLI would refuse, host tools the CLI could not
offer are InvalidParams. The options carry no permission handler and unbound host
tool handlers: each session gets its own when it is spawned
(:meth:`~bridge.rpc.permissions.PermissionBridge.handler`,
:meth:`~bridge.rpc._tools.ToolBridge.bind`), so the same options name the warm
spares a session may take.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import msgspec

from bridge import duplex
from bridge.jsonrpc import JsonRpcError, find_nul

from . import wire
from ._errors import invalid_params
from ._sessions import BridgeConfig
from ._tools import host_tools

__all__ = ["create_options"]


async def create_options(
    params: wire.CreateParams, config: BridgeConfig
) -> tuple[Path, str, duplex.DuplexOptions]:
    """Validate ``session/create`` params into the CLI, its cwd and the spawn options."""
    try:
        nul = find_nul(msgspec.to_builtins(params))
    except RecursionError:
        raise invalid_params("session/create", "params nested too deeply") from None
    if nul is not None:
        raise JsonRpcError(
            wire.ErrorCode.INVALID_PARAMS,
            f"invalid params for session/create: a NUL character at `{nul}`",
            wire.ErrorData(kind="InvalidParams", path=nul),
        )
    try:
        path = await anyio.Path(params.cwd).expanduser()
        cwd = str(await path.absolute())
        is_dir = await path.is_dir()
    except (OSError, RuntimeError) as exc:  # a name too long, no home to expand
        raise JsonRpcError(
            wire.ErrorCode.INVALID_PARAMS,
            f"invalid params for session/create: cwd is unusable: {exc}",
            wire.ErrorData(kind="InvalidParams", path="$.cwd"),
        ) from None
    if not is_dir:
        raise JsonRpcError(
            wire.ErrorCode.INVALID_PARAMS,
            f"invalid params for session/create: cwd {cwd} is not a directory",
            wire.ErrorData(kind="InvalidParams", path="$.cwd"),
        )
    cli = duplex.find_cli(params.claude_path or config.claude_path)
    tools = host_tools(params.tools)
    try:
        options = duplex.DuplexOptions(
            cli_path=cli,
            cwd=cwd,
            model=params.model,
            system_prompt=params.system_prompt,
            append_system_prompt=params.append_system_prompt,
            allowed_tools=params.allowed_tools or (),
            disallowed_tools=params.disallowed_tools or (),
            permission_mode=params.permission_mode,
            settings=params.settings,
            mcp_config=params.mcp_config,
            add_dirs=params.add_dirs or (),
            resume=params.resume,
            continue_conversation=params.continue_conversation,
            fork_session=params.fork_session,
            include_partial_messages=params.partial_messages,
            effort=params.effort,
            max_turns=params.max_turns,
            extra_args=params.extra_args or (),
            env={**(config.base_env or os.environ), **(params.env or {})},
            inherit_env=False,
            limits=_limits(params.limits),
            host_tools=tools,
            tool_timeout=params.tool_timeout,
            subscriber_capacity=config.subscriber_capacity,
            close_grace=config.close_grace,
            kill_grace=config.kill_grace,
        )
        options.argv(str(cli))  # validates tool names and modes before spawning
    except ValueError as exc:
        raise invalid_params("session/create", str(exc)) from None
    return cli, cwd, options


def _limits(limits: wire.Limits | None) -> duplex.Limits:
    if limits is None:
        return duplex.Limits()
    defaults = duplex.Limits()
    return duplex.Limits(
        max_frame_bytes=limits.max_frame_bytes or defaults.max_frame_bytes,
        max_turn_bytes=limits.max_turn_bytes,
        max_turn_events=limits.max_turn_events,
        turn_timeout=limits.turn_timeout,
        control_timeout=limits.control_timeout,
    )
