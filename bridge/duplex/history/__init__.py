"""History: the CLI's transcripts (its stored conversations), listed, read, renamed, deleted.

The CLI writes every conversation as a transcript, JSONL under its config directory
(``$CLAUDE_CONFIG_DIR``, else ``~/.claude``) in ``projects/<encoded cwd>/<session id>.jsonl``.
This module reads them the way the CLI and the official SDK do:

- :func:`list_transcripts` lists a directory's transcripts, newest first, from a
  stat and a read of each file's head and tail (64 KiB each), like the SDK's
  ``list_sessions``;
- :func:`read_messages` yields one transcript's messages in order as the library's
  typed :class:`UserFrame` / :class:`AssistantFrame`, following the ``parentUuid``
  chain from the newest leaf like the SDK's ``get_session_messages`` (side chains,
  meta entries and what lies before a compaction boundary are left out; a turn that
  ran tools in parallel is returned whole);
- :func:`rename_transcript` appends the CLI's ``custom-title`` entry;
  :func:`delete_transcript` removes the transcript and its subagent transcripts.

When a turn reaches the transcript depends on the CLI: 2.1.332 appends a turn's entries
before it answers the turn; 2.1.257 and 2.1.176 queue them and append the queue every
100 ms, after the answer. On those, a live conversation's transcript may lack the turn that
has just ended (a brand-new conversation may have no file yet) for a moment, and a SIGKILL
loses what was still queued; a graceful exit writes everything
(:func:`bridge.duplex.writes_transcript_behind`; the bridge's history methods
wait out that moment for a transcript a live session holds). The transcripts
themselves are read the same way from every supported CLI.

Transcripts are the CLI's internal format: unknown entry types and fields are skipped
and a corrupt or truncated line is skipped, never fatal. A transcript is read line by
line, twice (an index of the chain, then the messages on it), so memory grows with the
number of entries and the longest line, not with the file.
"""

from ..errors import TranscriptNotFound
from ._chain import read_messages
from ._changes import delete_transcript, rename_transcript
from ._listing import (
    TranscriptInfo,
    TranscriptPage,
    list_transcripts,
    list_transcripts_page,
)
from ._paths import config_dir, encode_cwd, transcript_path

__all__ = [
    "TranscriptInfo",
    "TranscriptNotFound",
    "TranscriptPage",
    "config_dir",
    "delete_transcript",
    "encode_cwd",
    "list_transcripts",
    "list_transcripts_page",
    "read_messages",
    "rename_transcript",
    "transcript_path",
]
