"""The transcript methods: a directory's transcripts listed, read, renamed, deleted.

``session/history``, ``session/transcript``, ``session/renameHistory`` and
``session/deleteHistory`` read and write the CLI's transcripts (in a thread);
a transcript a live session holds is named by it, and cannot be deleted.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path

import anyio

from bridge.duplex import history
from bridge.jsonrpc import JsonRpcError

from . import wire
from ._errors import invalid_params
from ._events import to_wire
from ._sessions import SessionRegistry

__all__ = ["TranscriptMethods"]


class TranscriptMethods:
    """The transcript methods of one bridge."""

    def __init__(self, sessions: SessionRegistry, base_env: Mapping[str, str] | None) -> None:
        self._sessions = sessions
        self._base_env = base_env

    def _history_dir(self) -> Path:
        return history.config_dir(self._base_env or os.environ)

    async def list_transcripts(
        self, params: wire.ListTranscriptsParams
    ) -> wire.ListTranscriptsResult:
        """``session/history``."""
        await self._sessions.transcripts_written()
        page = await anyio.to_thread.run_sync(
            functools.partial(
                history.list_transcripts_page,
                _expand(params.cwd),
                limit=params.limit,
                offset=params.offset,
                config_dir=self._history_dir(),
            )
        )
        live = self._sessions.held_transcripts()
        return wire.ListTranscriptsResult(
            conversations=[
                wire.TranscriptInfo(
                    claude_session_id=c.claude_session_id,
                    title=c.title,
                    custom_title=c.custom_title,
                    summary=c.summary,
                    first_prompt=c.first_prompt,
                    created_at=c.created_at,
                    last_modified=c.last_modified,
                    message_count=c.message_count,
                    git_branch=c.git_branch,
                    cwd=c.cwd,
                    file_size=c.file_size,
                    live_session_id=live.get(c.claude_session_id),
                )
                for c in page.transcripts
            ],
            total=page.total,
        )

    async def transcript(self, params: wire.TranscriptParams) -> wire.TranscriptResult:
        """``session/transcript``."""
        cwd, config = _expand(params.cwd), self._history_dir()
        await self._sessions.transcripts_written(params.claude_session_id)

        def read() -> list[wire.Event]:
            frames = history.read_messages(cwd, params.claude_session_id, config_dir=config)
            return [event for frame in frames for event in to_wire(frame)]

        events = await anyio.to_thread.run_sync(read)
        return wire.TranscriptResult(claude_session_id=params.claude_session_id, events=events)

    async def rename_transcript(self, params: wire.RenameTranscriptParams) -> wire.Empty:
        """``session/renameHistory``."""
        if not params.title.strip():
            raise invalid_params("session/renameHistory", "the title is blank - at `$.title`")
        await self._sessions.transcripts_written(params.claude_session_id)
        rename = functools.partial(
            history.rename_transcript,
            _expand(params.cwd),
            params.claude_session_id,
            params.title,
            config_dir=self._history_dir(),
        )
        await anyio.to_thread.run_sync(rename)
        return wire.Empty()

    async def delete_transcript(self, params: wire.TranscriptParams) -> wire.Empty:
        """``session/deleteHistory``: refused while a live session holds the transcript."""
        holder = self._sessions.held_transcripts().get(params.claude_session_id)
        if holder is not None:
            raise JsonRpcError(
                wire.ErrorCode.TRANSCRIPT_IN_USE,
                f"transcript {params.claude_session_id} is held by live session {holder}: "
                "close that session first",
                wire.ErrorData(
                    kind="TranscriptInUse",
                    session_id=holder,
                    claude_session_id=params.claude_session_id,
                ),
            )
        delete = functools.partial(
            history.delete_transcript,
            _expand(params.cwd),
            params.claude_session_id,
            config_dir=self._history_dir(),
        )
        await anyio.to_thread.run_sync(delete)
        return wire.Empty()


def _expand(cwd: str) -> str:
    return os.path.abspath(os.path.expanduser(cwd))
