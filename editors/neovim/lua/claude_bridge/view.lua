--- Draws a chat into its transcript buffer, in batches (never per delta), and
--- owns the chat's windows (the transcript above, the prompt below), their bars,
--- and the keys of both buffers: keys become the controller's actions.
---
--- Per chat the view keeps `chat.ui`: {buf, prompt_buf, win, prompt_win, drawn,
--- bar, render_timer, last_render}.

local model = require("claude_bridge.model")
local permission = require("claude_bridge.permission")
local mention = require("claude_bridge.mention")
local config = require("claude_bridge.config")

local uv = vim.uv or vim.loop
local api = vim.api

local M = {}

local ns = api.nvim_create_namespace("claude_bridge")
local mention_ns = api.nvim_create_namespace("claude_bridge_mentions")
M.ns = ns

local BATCH_MS = 20 -- draw at most every 20 ms while events stream
local MAX_RESULT_LINES = 200
local MAX_INLINE_DIFF = 30
local TOOL_PREFIX = "  │ "
local THINK_PREFIX = "  ┊ "
local CARD = "┃ "
M.TOOL_PREFIX = TOOL_PREFIX

local group = api.nvim_create_augroup("claude_bridge_view", { clear = true })

local function hl_defaults()
  local set = function(name, link)
    api.nvim_set_hl(0, name, { link = link, default = true })
  end
  set("ClaudeBridgeUser", "Title")
  set("ClaudeBridgeAssistant", "Title")
  set("ClaudeBridgeTool", "Function")
  set("ClaudeBridgeToolResult", "Comment")
  set("ClaudeBridgeThinking", "Comment")
  set("ClaudeBridgeDone", "NonText")
  set("ClaudeBridgeError", "DiagnosticError")
  set("ClaudeBridgeInfo", "DiagnosticInfo")
  set("ClaudeBridgeNotice", "Comment")
  set("ClaudeBridgeContext", "Special")
  set("ClaudeBridgeMention", "Underlined")
  set("ClaudeBridgeAsk", "DiagnosticWarn")
  set("ClaudeBridgeChoice", "Identifier")
  set("ClaudeBridgeAnswered", "DiagnosticOk")
end
hl_defaults()
api.nvim_create_autocmd("ColorScheme", { group = group, callback = hl_defaults })

--- What keys and clicks do: set by the controller (init.lua).
---@type table<string, fun(...)>
M.actions = {}

local function split(text)
  return vim.split(text, "\n", { plain = true })
end

local function prefixed(text, prefix)
  local out = {}
  for _, l in ipairs(split(text)) do
    out[#out + 1] = prefix .. l
  end
  return out
end

local function fmt_cost(c)
  return ("$%.4f"):format(c or 0)
end

local function fmt_tokens(n)
  if not n then
    return "?"
  end
  if n >= 1000000 then
    return ("%.1fM"):format(n / 1000000)
  elseif n >= 1000 then
    return ("%.1fk"):format(n / 1000)
  end
  return tostring(n)
end

-- Blocks ------------------------------------------------------------------

local TODO_MARKS = { completed = "✔", in_progress = "◐", pending = "○" }

local function ask_title(card)
  local p = card.params
  local tool = p.displayName or p.toolName
  if card.what == "question" then
    return "Claude asks you"
  elseif card.what == "plan" then
    return "Claude's plan: approve it?"
  elseif card.what == "edit" then
    return ("Claude wants to %s %s"):format(
      p.toolName == "Write" and "write" or "edit",
      vim.fn.fnamemodify(p.input and p.input.file_path or "?", ":~:.")
    )
  end
  return ("Claude wants to run %s"):format(tool)
end

--- A pending prompt: its lines and the rows of its choices (relative to the block).
local function ask_lines(card, cwd)
  local p = card.params
  local lines = { "╭─ " .. ask_title(card) }
  local actions = {}
  local function add(l)
    lines[#lines + 1] = CARD .. l
  end
  if card.what == "question" then
    local questions = (p.input or {}).questions or {}
    for i = 1, card.question - 1 do
      local q = questions[i]
      if q then
        add(("%s → %s"):format(q.question or "?", tostring(card.answers[q.question] or "")))
      end
    end
    local q = questions[card.question] or {}
    add((q.header and (q.header .. ": ") or "") .. (q.question or ""))
    if #questions > 1 then
      add(("(question %d of %d%s)"):format(card.question, #questions, q.multiSelect and ", several answers" or ""))
    elseif q.multiSelect then
      add("(several answers: tick them, then Submit)")
    end
  elseif card.what == "plan" then
    for _, l in ipairs(split(card.plan or "")) do
      add(l)
    end
  elseif card.what == "edit" and config.options.diff then
    local path, before, after = permission.proposed_change(p.toolName, p.input or {})
    if path then
      local diff = vim.diff(before, after, { ctxlen = 1 }) or ""
      local dl = split(diff)
      if dl[#dl] == "" then
        dl[#dl] = nil
      end
      for i = 1, math.min(#dl, MAX_INLINE_DIFF) do
        add(dl[i])
      end
      if #dl > MAX_INLINE_DIFF then
        add(("… %d more lines: review the change to see them all"):format(#dl - MAX_INLINE_DIFF))
      end
    end
  else
    local input = p.input or {}
    local what = input.command or model.tool_summary(p.toolName, input, cwd)
    for _, l in ipairs(split(tostring(what))) do
      add(l)
    end
    if p.description and p.description ~= "" and p.description ~= what then
      add("(" .. p.description .. ")")
    end
    local blocked = p.blockedPath
    if type(blocked) == "string" and blocked ~= "" and not (cwd and vim.startswith(blocked, cwd .. "/")) then
      add("outside the project: " .. vim.fn.fnamemodify(blocked, ":~"))
    end
  end
  add("")
  for i, choice in ipairs(permission.choices(card)) do
    actions[#lines] = { kind = "choice", index = i }
    add(" › " .. choice.label)
  end
  lines[#lines + 1] = "╰─ Enter on a choice picks it"
  return lines, actions
end

local function settled_lines(card)
  local p = card.params
  local mark = card.state == "withdrawn" and "⊘" or "✓"
  local what = card.what == "question" and "Question"
    or card.what == "plan" and "Plan"
    or (p.displayName or p.toolName)
  if card.state == "withdrawn" then
    return { ("%s %s: withdrawn (%s)"):format(mark, what, card.outcome or "no longer asked") }
  end
  if card.outcome and (card.outcome:find("^Denied") or card.outcome:find("^Rejected")) then
    mark = "✗"
  end
  return { ("%s %s: %s"):format(mark, what, card.outcome or "answered") }
end

--- The lines of one block, the highlight of its first line, and its actions
--- (relative row -> {kind, ...}) for Enter.
---@return string[] lines, string? header_hl, table? actions
local function block_lines(block, cwd)
  local kind = block.kind
  if kind == "user" then
    local lines = { block.live and "## You (while Claude works)" or "## You", "" }
    vim.list_extend(lines, split(block.text))
    return lines, "ClaudeBridgeUser"
  elseif kind == "text" then
    local lines = split(model.text(block))
    if block.aborted then
      lines[#lines] = lines[#lines] .. " ⏹"
    end
    return lines
  elseif kind == "thinking" then
    local lines = { block.done and "✻ Thought" or "✻ Thinking…" }
    vim.list_extend(lines, prefixed(model.text(block), THINK_PREFIX))
    return lines, "ClaudeBridgeThinking"
  elseif kind == "tool" then
    local mark = "⋯"
    if block.result ~= nil then
      mark = block.is_error and "✗" or "✓"
    end
    local lines = {
      ("%s %s  %s"):format(mark, block.name, model.tool_summary(block.name, block.input, cwd)),
    }
    if block.result ~= nil then
      local result = split(block.result)
      local n = #result
      for i = 1, math.min(n, MAX_RESULT_LINES) do
        lines[#lines + 1] = TOOL_PREFIX .. result[i]
      end
      if n > MAX_RESULT_LINES then
        lines[#lines + 1] = TOOL_PREFIX .. ("… %d more lines"):format(n - MAX_RESULT_LINES)
      end
    end
    return lines, block.is_error and "ClaudeBridgeError" or "ClaudeBridgeTool", { [0] = { kind = "tool" } }
  elseif kind == "todo" then
    local lines = { (block.is_error and "✗" or "☰") .. " Todos" }
    for _, t in ipairs(block.items or {}) do
      local label = t.status == "in_progress" and (t.activeForm or t.content) or t.content
      lines[#lines + 1] = ("  %s %s"):format(TODO_MARKS[t.status] or "○", tostring(label))
    end
    return lines, "ClaudeBridgeTool"
  elseif kind == "ask" then
    if block.state == "pending" then
      local lines, actions = ask_lines(block, cwd)
      return lines, "ClaudeBridgeAsk", actions
    end
    return settled_lines(block), block.state == "withdrawn" and "ClaudeBridgeNotice" or "ClaudeBridgeAnswered"
  elseif kind == "done" then
    local parts = {}
    if block.interrupted then
      parts[#parts + 1] = "interrupted"
    elseif block.is_error then
      parts[#parts + 1] = "failed"
    else
      parts[#parts + 1] = "done"
    end
    parts[#parts + 1] = fmt_cost(block.cost)
    if block.duration then
      parts[#parts + 1] = ("%.1f s"):format(block.duration / 1000)
    end
    if block.context and block.context.percentage then
      parts[#parts + 1] = ("context %s%% (%s/%s)"):format(
        tostring(block.context.percentage),
        fmt_tokens(block.context.total),
        fmt_tokens(block.context.max)
      )
    end
    return { "─── " .. table.concat(parts, " · ") .. " ───" }, "ClaudeBridgeDone"
  elseif kind == "exit" then
    local lines = split("✗ " .. block.text)
    if block.restart then
      lines[#lines + 1] = "  ↻ Restart (Enter here, or send a prompt)"
      return lines, "ClaudeBridgeError", { [#lines - 1] = { kind = "restart" } }
    end
    return lines, "ClaudeBridgeError"
  elseif kind == "error" then
    return split("✗ Error: " .. block.text), "ClaudeBridgeError"
  elseif kind == "notice" then
    return split("· " .. block.text), "ClaudeBridgeNotice"
  else
    return split("ℹ " .. block.text), "ClaudeBridgeInfo"
  end
end

local function streaming_prefix(block)
  if block.kind == "text" then
    return ""
  elseif block.kind == "thinking" then
    return THINK_PREFIX
  end
end

--- Append `suffix` (streamed text) at the end of the buffer, continuing its last
--- line (`last_len` bytes long); returns the new last line's length.
local function append_text(buf, suffix, prefix, last_len)
  local last = api.nvim_buf_line_count(buf) - 1
  local pieces = split(suffix)
  for i = 2, #pieces do
    pieces[i] = prefix .. pieces[i]
  end
  api.nvim_buf_set_text(buf, last, last_len, last, last_len, pieces)
  if #pieces == 1 then
    return last_len + #pieces[1]
  end
  return #pieces[#pieces]
end

local function valid_buf(b)
  return b and api.nvim_buf_is_valid(b) and api.nvim_buf_is_loaded(b)
end

local function valid_win(w)
  return w and api.nvim_win_is_valid(w)
end

--- Draw what changed in the chat since the last draw.
function M.render(chat)
  local ui = chat.ui
  local buf = ui.buf
  M.update_bars(chat)
  local dirty = chat.dirty
  if not dirty or not valid_buf(buf) then
    return
  end
  chat.dirty = nil
  local drawn = ui.drawn -- per block: {start=row, count=n, parts, nparts, last_len, done, actions}
  local blocks = chat.blocks
  local wins = vim.fn.win_findbuf(buf)
  local follow = {}
  local old_count = api.nvim_buf_line_count(buf)
  for _, w in ipairs(wins) do
    follow[w] = api.nvim_win_get_cursor(w)[1] >= old_count
  end

  vim.bo[buf].modifiable = true
  local block = blocks[dirty]
  local d = drawn[dirty]
  local prefix = block and streaming_prefix(block)
  if
    dirty == #blocks
    and #drawn == #blocks
    and d
    and prefix
    and d.parts == block.parts
    and not block.done
    and not d.done
  then
    -- Streaming: deltas were added to the last block; draw only them (no copy
    -- of the text drawn so far, however long it is).
    local parts = block.parts
    if #parts > d.nparts then
      local suffix = table.concat(parts, "", d.nparts + 1, #parts)
      d.last_len = append_text(buf, suffix, prefix, d.last_len)
      d.nparts = #parts
      d.count = api.nvim_buf_line_count(buf) - d.start
    end
    vim.bo[buf].modifiable = false
    M._follow(wins, follow, buf)
    return
  end

  local start = 0
  if drawn[dirty] then
    start = drawn[dirty].start
  elseif dirty > 1 and drawn[dirty - 1] then
    start = drawn[dirty - 1].start + drawn[dirty - 1].count
  end
  local lines = {}
  local highlights = {}
  local to_fold = {} -- rows of the folds drawn: closed, as foldlevel says
  local row = start
  for i = dirty, #blocks do
    local b = blocks[i]
    local blines, hl, actions = block_lines(b, chat.cwd)
    local offset = 0
    if b.header then
      table.insert(blines, 1, "")
      table.insert(blines, 1, "## Claude")
      highlights[#highlights + 1] = { row + (i > 1 and 1 or 0), "ClaudeBridgeAssistant" }
      offset = 2
    end
    if i > 1 then
      table.insert(blines, 1, "")
      offset = offset + 1
    end
    local foldable = (b.kind == "tool" and b.result ~= nil) or (b.kind == "thinking" and b.done)
    if foldable and #blines > offset + 1 then
      to_fold[#to_fold + 1] = row + #blines - 1
    end
    if hl then
      highlights[#highlights + 1] = { row + offset, hl }
    end
    local shifted
    if actions then
      shifted = {}
      for r, a in pairs(actions) do
        shifted[r + offset] = a
      end
    end
    drawn[i] = {
      start = row,
      count = #blines,
      parts = b.parts, -- block_lines joined them: one part, the text drawn
      nparts = b.parts and #b.parts or 0,
      last_len = #blines[#blines],
      done = b.done,
      actions = shifted,
    }
    vim.list_extend(lines, blines)
    row = row + #blines
  end
  for i = #blocks + 1, #drawn do
    drawn[i] = nil
  end
  api.nvim_buf_clear_namespace(buf, ns, start, -1)
  if start == 0 and #lines == 0 then
    lines = { "" }
  end
  api.nvim_buf_set_lines(buf, start, -1, false, lines)
  if #blocks == 0 then
    M.empty_hint(buf)
  end
  for _, h in ipairs(highlights) do
    api.nvim_buf_set_extmark(buf, ns, h[1], 0, { line_hl_group = h[2], priority = 90 })
  end
  vim.bo[buf].modifiable = false
  M._follow(wins, follow, buf)
  -- A fold made where the cursor is starts open: close the ones drawn (za opens them).
  if #to_fold > 0 then
    for _, w in ipairs(wins) do
      if vim.wo[w].foldmethod == "expr" then
        api.nvim_win_call(w, function()
          for _, r in ipairs(to_fold) do
            pcall(vim.cmd, ("silent! %dfoldclose"):format(r + 1))
          end
        end)
      end
    end
  end
end

--- What an empty transcript says (virtual text: not part of the conversation).
function M.empty_hint(buf)
  local keys = config.options.keymaps
  api.nvim_buf_set_extmark(buf, ns, 0, 0, {
    virt_lines = {
      { { (keys.send or ":ClaudeSend") .. " sends the prompt below", "ClaudeBridgeNotice" } },
      { { "@ mentions a file, / a command", "ClaudeBridgeNotice" } },
      { { (keys.answer or ":ClaudePermissions") .. " answers Claude", "ClaudeBridgeNotice" } },
    },
  })
end

function M._follow(wins, follow, buf)
  local count = api.nvim_buf_line_count(buf)
  for _, w in ipairs(wins) do
    -- Moving the cursor makes Neovim measure the (wrapped) line: only when it changed.
    if follow[w] and api.nvim_win_is_valid(w) and api.nvim_win_get_cursor(w)[1] ~= count then
      api.nvim_win_set_cursor(w, { count, 0 })
    end
  end
end

--- Draw soon: events of the next BATCH_MS are drawn together.
function M.schedule(chat)
  local ui = chat.ui
  if ui.render_timer then
    return
  end
  local now = uv.now()
  local wait = math.max(0, (ui.last_render or 0) + BATCH_MS - now)
  ui.render_timer = true
  vim.defer_fn(function()
    ui.render_timer = nil
    ui.last_render = uv.now()
    local ok, err = pcall(M.render, chat)
    if not ok then
      vim.notify("claude_bridge: drawing failed: " .. tostring(err), vim.log.levels.ERROR)
    end
  end, wait)
end

--- Draw everything now (tests and commands that need the buffer current).
function M.flush(chat)
  M.render(chat)
end

--- The block drawn at `row` (0-based) and the action there, if any.
function M.at(chat, row)
  for i, d in ipairs(chat.ui.drawn) do
    if row >= d.start and row < d.start + d.count then
      return chat.blocks[i], d.actions and d.actions[row - d.start], i
    end
  end
end

--- The first row of a pending prompt's first choice (0-based), or nil.
function M.choice_row(chat, block)
  for i, d in ipairs(chat.ui.drawn) do
    if chat.blocks[i] == block and d.actions then
      local first
      for r, a in pairs(d.actions) do
        if a.kind == "choice" and (first == nil or r < first) then
          first = r
        end
      end
      return first and d.start + first
    end
  end
end

--- Fold tool results and thinking (their lines carry a prefix).
function M.foldexpr(lnum)
  local line = vim.fn.getline(lnum or vim.v.lnum)
  if line:sub(1, #TOOL_PREFIX) == TOOL_PREFIX or line:sub(1, #THINK_PREFIX) == THINK_PREFIX then
    return "1"
  end
  return "0"
end

function M.foldtext()
  local n = vim.v.foldend - vim.v.foldstart + 1
  local first = vim.fn.getline(vim.v.foldstart)
  local what = first:sub(1, #THINK_PREFIX) == THINK_PREFIX and "thinking" or "result"
  return ("    ▸ %s: %d line%s (za to open)"):format(what, n, n == 1 and "" or "s")
end

-- Bars --------------------------------------------------------------------

local function esc(s)
  return (tostring(s):gsub("%%", "%%%%"))
end

--- Fit `segments` ({text, hl?, keep (priority: higher stays longer), click?}) into
--- `width` columns, dropping the least important first; a click is the action
--- number handed to ClaudeBridgeClick with the chat's number.
local function fit(segments, width, chat_n)
  local sep = " · "
  local kept = {}
  for i, s in ipairs(segments) do
    kept[i] = true
  end
  local function total()
    local w, n = 0, 0
    for i, s in ipairs(segments) do
      if kept[i] then
        w = w + vim.fn.strdisplaywidth(s.text)
        n = n + 1
      end
    end
    return w + math.max(0, n - 1) * #sep
  end
  while total() > width do
    local drop, low
    for i, s in ipairs(segments) do
      if kept[i] and (low == nil or (s.keep or 0) < low) then
        drop, low = i, s.keep or 0
      end
    end
    if not drop or low >= 100 then
      break
    end
    kept[drop] = false
  end
  local out = {}
  for i, s in ipairs(segments) do
    if kept[i] then
      local text = esc(s.text)
      if s.hl then
        text = "%#" .. s.hl .. "#" .. text .. "%*"
      end
      if s.click then
        text = ("%%%d@ClaudeBridgeClick@%s%%X"):format(chat_n * 16 + s.click, text)
      end
      out[#out + 1] = text
    end
  end
  return table.concat(out, "%#ClaudeBridgeDone#" .. sep .. "%*") .. "%<"
end

M.CLICK = { model = 1, mode = 2, state = 3 }

--- The chat's state in words ("waiting for your answer" while a prompt waits).
function M.state_text(chat)
  local st = chat.state
  if next(chat.asks) then
    st = "waiting for you"
  end
  return st
end

--- The transcript window's bar: the chat, its state, model, mode, cost, context.
function M.chat_winbar(chat, width)
  local segments = {
    { text = "Claude " .. chat:title(), hl = "ClaudeBridgeUser", keep = 100 },
    { text = M.state_text(chat), keep = 90, click = M.CLICK.state },
    { text = ("$%.4f"):format(chat.total_cost or 0), keep = 50 },
    { text = tostring(chat.model or "default model"), keep = 40, click = M.CLICK.model },
    { text = tostring(chat.mode or "default") .. " mode", keep = 30, click = M.CLICK.mode },
  }
  if chat.context and chat.context.percentage then
    segments[#segments + 1] = { text = ("context %s%%"):format(chat.context.percentage), keep = 20 }
  end
  return fit(segments, width or 80, chat.n)
end

--- The mentions of the prompt that name something, as chips.
function M.prompt_chips(chat)
  local buf = chat.ui.prompt_buf
  if not valid_buf(buf) then
    return {}
  end
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  local chips = {}
  for _, m in ipairs(mention.find(text, chat.cwd, chat.attachments)) do
    local t = m.token
    local label = t.name .. (t.line1 and (":" .. t.line1 .. (t.line2 ~= t.line1 and ("-" .. t.line2) or "")) or "")
    chips[#chips + 1] = "📎 " .. label
  end
  return chips
end

--- The prompt window's bar: its keys, and what the prompt attaches.
function M.prompt_winbar(chat, width)
  local keys = config.options.keymaps
  local segments = { { text = "Prompt", hl = "ClaudeBridgeDone", keep = 100 } }
  for _, chip in ipairs(M.prompt_chips(chat)) do
    segments[#segments + 1] = { text = chip, hl = "ClaudeBridgeContext", keep = 80 }
  end
  local hints = {
    { keys.send, "send", 60 },
    { keys.interrupt, "interrupt", 50 },
    { "@", "file", 20 },
    { keys.answer, "answer", 40 },
    { keys.switch, "transcript", 10 },
  }
  for _, h in ipairs(hints) do
    if h[1] then
      segments[#segments + 1] = { text = h[1] .. " " .. h[2], hl = "ClaudeBridgeDone", keep = h[3] }
    end
  end
  return fit(segments, width or 80, chat.n)
end

--- Refresh the bars (after a state change, a new mention, a resize, ...).
function M.update_bars(chat)
  local ui = chat.ui
  if valid_win(ui.win) and api.nvim_win_get_buf(ui.win) == ui.buf then
    local bar = M.chat_winbar(chat, api.nvim_win_get_width(ui.win))
    if vim.wo[ui.win].winbar ~= bar then
      vim.wo[ui.win].winbar = bar
    end
  end
  if valid_win(ui.prompt_win) and api.nvim_win_get_buf(ui.prompt_win) == ui.prompt_buf then
    local bar = M.prompt_winbar(chat, api.nvim_win_get_width(ui.prompt_win))
    if vim.wo[ui.prompt_win].winbar ~= bar then
      vim.wo[ui.prompt_win].winbar = bar
    end
  end
end

-- Buffers ------------------------------------------------------------------

local function scratch(name, filetype)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].filetype = filetype
  return buf
end

--- Highlight the prompt's mentions that name something (its chips).
function M.mark_mentions(chat)
  local buf = chat.ui.prompt_buf
  if not valid_buf(buf) then
    return
  end
  api.nvim_buf_clear_namespace(buf, mention_ns, 0, -1)
  for row, line in ipairs(api.nvim_buf_get_lines(buf, 0, -1, false)) do
    for _, t in ipairs(mention.tokens(line)) do
      if mention.resolve(t, chat.cwd, chat.attachments) then
        api.nvim_buf_set_extmark(buf, mention_ns, row - 1, t.start - 1, {
          end_col = t.finish,
          hl_group = "ClaudeBridgeMention",
        })
      end
    end
  end
end

--- Make sure the chat's two buffers exist (a buffer wiped by hand is made again,
--- and the whole conversation drawn into it).
function M.ensure_buffers(chat)
  local ui = chat.ui
  if not valid_buf(ui.buf) then
    if ui.buf and api.nvim_buf_is_valid(ui.buf) then
      pcall(api.nvim_buf_delete, ui.buf, { force = true })
    end
    ui.drawn = {}
    ui.buf = scratch(("claude://chat/%d"):format(chat.n), "claude_bridge")
    vim.bo[ui.buf].modifiable = false
    vim.bo[ui.buf].undolevels = -1
    vim.bo[ui.buf].formatlistpat = [[^\(┃  › \|┃ \|  │ \|  ┊ \|\s*[-*+] \|\s*\d\+\. \)]]
    if pcall(vim.treesitter.language.add, "markdown") then
      pcall(vim.treesitter.start, ui.buf, "markdown")
    else
      vim.bo[ui.buf].syntax = "markdown"
    end
    M.attach_transcript_keys(chat)
    M.watch_buffer(chat, ui.buf)
    chat:redraw_all()
    if #chat.blocks == 0 then
      M.empty_hint(ui.buf)
    end
  end
  if not valid_buf(ui.prompt_buf) then
    if ui.prompt_buf and api.nvim_buf_is_valid(ui.prompt_buf) then
      pcall(api.nvim_buf_delete, ui.prompt_buf, { force = true })
    end
    ui.prompt_buf = scratch(("claude://prompt/%d"):format(chat.n), "markdown")
    vim.b[ui.prompt_buf].claude_bridge_prompt = true
    vim.bo[ui.prompt_buf].omnifunc = "v:lua.require'claude_bridge.view'.omnifunc"
    pcall(api.nvim_set_option_value, "completeopt", "menuone,noinsert", { buf = ui.prompt_buf })
    M.attach_prompt_keys(chat)
    M.watch_buffer(chat, ui.prompt_buf)
    M.watch_prompt(chat)
  end
end

--- A chat buffer unloaded or wiped by hand: forget it (it is made again when shown).
function M.watch_buffer(chat, buf)
  api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
    group = group,
    buffer = buf,
    once = true,
    callback = function()
      local ui = chat.ui
      if ui.buf == buf then
        ui.buf = nil
        ui.drawn = {}
      elseif ui.prompt_buf == buf then
        ui.prompt_buf = nil
      end
      vim.schedule(function()
        if api.nvim_buf_is_valid(buf) then
          pcall(api.nvim_buf_delete, buf, { force = true })
        end
      end)
    end,
  })
end

-- Windows ------------------------------------------------------------------

local function set_chat_win_options(win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'claude_bridge.view'.foldexpr()"
  wo.foldtext = "v:lua.require'claude_bridge.view'.foldtext()"
  wo.foldlevel = 0
  wo.foldenable = true
  wo.fillchars = "fold: "
  wo.cursorline = false
  -- A wrapped line of a prompt, a tool result or thinking keeps its border.
  wo.breakindent = true
  wo.breakindentopt = "list:-1"
end

local function set_prompt_win_options(win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.winfixheight = true
end

--- Is the chat shown in the current tab? Returns its transcript window.
function M.visible(chat)
  local ui = chat.ui
  local tab = api.nvim_get_current_tabpage()
  if
    valid_win(ui.win)
    and api.nvim_win_get_buf(ui.win) == ui.buf
    and api.nvim_win_get_tabpage(ui.win) == tab
  then
    return ui.win
  end
end

--- Is the chat shown anywhere (any tab)?
function M.shown(chat)
  local ui = chat.ui
  return valid_win(ui.win) and api.nvim_win_get_buf(ui.win) == ui.buf
end

local function is_float(win)
  return valid_win(win) and api.nvim_win_get_config(win).relative ~= ""
end

local function float_geometry()
  local opts = config.options
  local cols, rows = vim.o.columns, vim.o.lines - vim.o.cmdheight
  local width = math.max(20, math.floor(cols * opts.float.width))
  local height = math.max(8, math.floor(rows * opts.float.height))
  local prompt_height = math.min(opts.prompt_height, math.max(1, height - 6))
  local col = math.floor((cols - width) / 2)
  local row = math.max(0, math.floor((rows - height) / 2) - 1)
  return {
    transcript = {
      relative = "editor",
      width = width,
      height = math.max(1, height - prompt_height - 4),
      col = col,
      row = row,
    },
    prompt = {
      relative = "editor",
      width = width,
      height = prompt_height,
      col = col,
      row = row + height - prompt_height - 2,
    },
  }
end

--- Another chat shown in this tab, in split windows (a new chat goes beside it).
local function neighbour(chat, chats)
  for _, other in ipairs(chats) do
    if other ~= chat and M.visible(other) and not is_float(other.ui.win) then
      local pw = other.ui.prompt_win
      if valid_win(pw) and api.nvim_win_get_tabpage(pw) == api.nvim_get_current_tabpage() then
        return other
      end
    end
  end
end

local function open_float(chat, chats)
  local opts = config.options
  for _, other in ipairs(chats) do -- one floating chat at a time
    if other ~= chat and M.visible(other) and is_float(other.ui.win) then
      M.hide(other)
    end
  end
  local g = float_geometry()
  local ui = chat.ui
  ui.win = api.nvim_open_win(ui.buf, true, vim.tbl_extend("force", g.transcript, {
    border = opts.float.border,
    title = " Claude " .. chat:title() .. " ",
    title_pos = "center",
  }))
  ui.prompt_win = api.nvim_open_win(ui.prompt_buf, true, vim.tbl_extend("force", g.prompt, {
    border = opts.float.border,
    title = " Prompt ",
    title_pos = "left",
  }))
end

local function open_split(chat, chats)
  local opts = config.options
  local ui = chat.ui
  local layout = opts.layout
  local prompt_height = opts.prompt_height
  local other = layout ~= "tab" and neighbour(chat, chats)
  if layout == "tab" then
    vim.cmd("tabnew")
    ui.win = api.nvim_get_current_win()
    local scratch_buf = api.nvim_get_current_buf()
    api.nvim_win_set_buf(ui.win, ui.buf)
    if scratch_buf ~= ui.buf and api.nvim_buf_is_valid(scratch_buf) then
      pcall(api.nvim_buf_delete, scratch_buf, { force = true })
    end
  elseif other and layout == "horizontal" then
    -- Side by side with the other chat, in its rows.
    api.nvim_set_current_win(other.ui.win)
    vim.cmd("rightbelow vsplit")
    ui.win = api.nvim_get_current_win()
    api.nvim_win_set_buf(ui.win, ui.buf)
  elseif other then
    -- Under the other chat, in its column: both keep a usable width.
    api.nvim_set_current_win(other.ui.prompt_win)
    vim.cmd("belowright split")
    ui.win = api.nvim_get_current_win()
    api.nvim_win_set_buf(ui.win, ui.buf)
  elseif layout == "horizontal" then
    vim.cmd(("botright %dsplit"):format(opts.height))
    ui.win = api.nvim_get_current_win()
    api.nvim_win_set_buf(ui.win, ui.buf)
  else
    local width = opts.width
    if width < 1 then
      width = math.floor(vim.o.columns * width)
    end
    vim.cmd(("botright %dvsplit"):format(math.max(20, width)))
    ui.win = api.nvim_get_current_win()
    api.nvim_win_set_buf(ui.win, ui.buf)
  end
  local height = api.nvim_win_get_height(ui.win)
  vim.cmd(("belowright %dsplit"):format(math.max(1, math.min(prompt_height, math.floor(height / 2)))))
  ui.prompt_win = api.nvim_get_current_win()
  api.nvim_win_set_buf(ui.prompt_win, ui.prompt_buf)
end

--- Show the chat (transcript above, prompt below) and put the cursor in the prompt.
--- `chats`: every chat (a second one in the same tab goes beside the first).
function M.open(chat, chats)
  M.ensure_buffers(chat)
  local ui = chat.ui
  if M.visible(chat) then
    if valid_win(ui.prompt_win) and api.nvim_win_get_buf(ui.prompt_win) == ui.prompt_buf then
      api.nvim_set_current_win(ui.prompt_win)
      return
    end
    M.hide(chat) -- half a chat (its prompt window was closed): show it whole
  else
    M.hide(chat) -- shown in another tab: move it here
  end
  if config.options.layout == "float" then
    open_float(chat, chats or {})
  else
    open_split(chat, chats or {})
  end
  set_chat_win_options(ui.win)
  set_prompt_win_options(ui.prompt_win)
  vim.w[ui.win].claude_bridge_chat = chat.n
  vim.w[ui.prompt_win].claude_bridge_chat = chat.n
  M.render(chat)
  M.update_bars(chat)
  api.nvim_win_set_cursor(ui.win, { api.nvim_buf_line_count(ui.buf), 0 })
  api.nvim_set_current_win(ui.prompt_win)
end

--- Hide the chat's windows (the session lives on).
function M.hide(chat)
  local ui = chat.ui
  for _, w in ipairs({ ui.prompt_win, ui.win }) do
    if valid_win(w) then
      if #api.nvim_tabpage_list_wins(api.nvim_win_get_tabpage(w)) > 1 or #api.nvim_list_tabpages() > 1 then
        pcall(api.nvim_win_close, w, true)
      elseif api.nvim_win_get_buf(w) == ui.buf or api.nvim_win_get_buf(w) == ui.prompt_buf then
        -- The last window of the last tab: it shows an empty buffer instead.
        api.nvim_win_set_buf(w, api.nvim_create_buf(true, false))
      end
    end
  end
  ui.win, ui.prompt_win = nil, nil
end

--- The chat whose window `win` is, among `chats`, and which of its windows.
local function owner(win, chats)
  for _, chat in ipairs(chats) do
    if chat.ui.win == win then
      return chat, "transcript"
    elseif chat.ui.prompt_win == win then
      return chat, "prompt"
    end
  end
end

--- Keep the chat's windows a pair and its floats in place: a window closed by
--- hand takes its partner along; leaving a floating chat for a window under it
--- hides it; floats follow a resize. `chats()` lists every chat.
function M.watch_windows(chats)
  api.nvim_create_autocmd("WinClosed", {
    group = group,
    callback = function(a)
      local win = tonumber(a.match)
      local chat, which = owner(win, chats())
      if not chat then
        return
      end
      local partner = which == "transcript" and chat.ui.prompt_win or chat.ui.win
      if which == "transcript" then
        chat.ui.win = nil
      else
        chat.ui.prompt_win = nil
      end
      vim.schedule(function()
        if valid_win(partner) and (chat.ui.win == partner or chat.ui.prompt_win == partner) then
          M.hide(chat)
        end
      end)
    end,
  })
  api.nvim_create_autocmd("WinEnter", {
    group = group,
    callback = function()
      local win = api.nvim_get_current_win()
      if is_float(win) or owner(win, chats()) then
        return
      end
      for _, chat in ipairs(chats()) do
        if M.visible(chat) and is_float(chat.ui.win) then
          vim.schedule(function()
            M.hide(chat)
          end)
        end
      end
    end,
  })
  api.nvim_create_autocmd({ "VimResized", "WinResized" }, {
    group = group,
    callback = function(a)
      for _, chat in ipairs(chats()) do
        if M.visible(chat) then
          if a.event == "VimResized" then
            M.relayout(chat)
          end
          M.update_bars(chat)
        end
      end
    end,
  })
end

--- After the editor was resized: floats take their new size, a split its width,
--- and the newest text stays in view.
function M.relayout(chat)
  local ui = chat.ui
  if is_float(ui.win) and valid_win(ui.prompt_win) then
    local g = float_geometry()
    api.nvim_win_set_config(ui.win, g.transcript)
    api.nvim_win_set_config(ui.prompt_win, g.prompt)
  elseif config.options.layout == "vertical" and config.options.width < 1 and valid_win(ui.win) then
    local wins = vim.fn.win_findbuf(ui.buf)
    if #wins == 1 then
      pcall(api.nvim_win_set_width, ui.win, math.max(20, math.floor(vim.o.columns * config.options.width)))
    end
  end
  if valid_win(ui.win) and valid_buf(ui.buf) then
    api.nvim_win_set_cursor(ui.win, { api.nvim_buf_line_count(ui.buf), 0 })
  end
end

-- The prompt ----------------------------------------------------------------

--- The prompt's text, and clear it (undo brings it back).
function M.take_prompt(chat)
  local buf = chat.ui.prompt_buf
  if not valid_buf(buf) then
    return ""
  end
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  api.nvim_buf_set_lines(buf, 0, -1, false, { "" })
  chat.history_pos = nil
  return vim.trim(text)
end

--- Put `text` at the end of the prompt (a mention added from elsewhere).
function M.append_prompt(chat, text)
  M.ensure_buffers(chat)
  local buf = chat.ui.prompt_buf
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local last = lines[#lines] or ""
  local sep = (last == "" or last:sub(-1) == " ") and "" or " "
  api.nvim_buf_set_text(buf, #lines - 1, #last, #lines - 1, #last, { sep .. text .. " " })
  M.mark_mentions(chat)
  M.update_bars(chat)
end

--- Show the previous (`step` -1) or next (1) prompt of the chat's history.
local function history(chat, step)
  local h = chat.history
  if #h == 0 then
    return false
  end
  local buf = chat.ui.prompt_buf
  local pos = chat.history_pos
  if pos == nil then
    if step > 0 then
      return false
    end
    chat.draft = api.nvim_buf_get_lines(buf, 0, -1, false)
    pos = #h + 1
  end
  pos = pos + step
  if pos < 1 then
    return true
  end
  local lines
  if pos > #h then
    lines = chat.draft or { "" }
    chat.history_pos = nil
  else
    lines = split(h[pos])
    chat.history_pos = pos
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local row = step < 0 and 1 or #lines
  api.nvim_win_set_cursor(0, { row, #lines[row] })
  return true
end

--- Completion in the prompt: slash commands at its start, files and folders after `@`.
function M.omnifunc(findstart, base)
  local chat = M.actions.chat_of and M.actions.chat_of(api.nvim_get_current_buf())
  local line = api.nvim_get_current_line()
  local col = api.nvim_win_get_cursor(0)[2]
  local before = line:sub(1, col)
  if findstart == 1 then
    local at = before:match(".*()@[^%s]*$")
    if at then
      return at - 1
    end
    if api.nvim_win_get_cursor(0)[1] == 1 and before:match("^/%S*$") then
      return 0
    end
    return -3
  end
  if not chat then
    return {}
  end
  if base:sub(1, 1) == "@" then
    return mention.complete(base:sub(2), chat.cwd, chat.attachments)
  end
  local out = {}
  for _, c in ipairs(chat.commands or {}) do
    local name = "/" .. c.name
    if vim.startswith(name, base) then
      out[#out + 1] = { word = name, menu = c.argumentHint or "", info = c.description or "" }
    end
  end
  table.sort(out, function(a, b)
    return a.word < b.word
  end)
  return out
end

--- While typing: `@` opens the file completion, `/` at the start the commands.
local function auto_complete(chat)
  local line = api.nvim_get_current_line()
  local cursor = api.nvim_win_get_cursor(0)
  local before = line:sub(1, cursor[2])
  local at = before:match(".*()@[^%s\"]*$")
  local start, items
  if at and (at == 1 or before:sub(at - 1, at - 1):match("[%s%(%[]")) then
    start = at
    items = mention.complete(before:sub(at + 1), chat.cwd, chat.attachments)
  elseif cursor[1] == 1 and before:match("^/%S*$") then
    start = 1
    items = M.omnifunc(0, before)
  end
  if start and #items > 0 then
    vim.fn.complete(start, vim.list_slice(items, 1, 200))
  end
end

function M.watch_prompt(chat)
  local buf = chat.ui.prompt_buf
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    group = group,
    buffer = buf,
    callback = function(a)
      M.mark_mentions(chat)
      M.update_bars(chat)
      if a.event == "TextChangedI" and config.options.complete_while_typing then
        auto_complete(chat)
      end
    end,
  })
  api.nvim_create_autocmd("TextChangedP", {
    group = group,
    buffer = buf,
    callback = function()
      if config.options.complete_while_typing then
        auto_complete(chat)
      end
    end,
  })
end

-- Keys ----------------------------------------------------------------------

local function map(buf, modes, lhs, fn, desc)
  if not lhs or lhs == false then
    return
  end
  vim.keymap.set(modes, lhs, fn, { buffer = buf, desc = desc, nowait = true })
end

--- Move to the previous (-1) or next (1) "## You" of the transcript.
local function jump_turn(chat, step)
  local buf = chat.ui.buf
  local row = api.nvim_win_get_cursor(0)[1]
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local i = row + step
  while i >= 1 and i <= #lines do
    if lines[i]:find("^## You") then
      api.nvim_win_set_cursor(0, { i, 0 })
      return
    end
    i = i + step
  end
end

--- Yank the fenced code block under the cursor (its body, without the fences).
local function yank_code(chat)
  local lines = api.nvim_buf_get_lines(chat.ui.buf, 0, -1, false)
  local row = api.nvim_win_get_cursor(0)[1]
  local open
  for i = 1, #lines do
    local fence = lines[i]:match("^%s*(```+)")
    if fence then
      if open == nil then
        open = i
      else
        if row >= open and row <= i then
          local body = vim.list_slice(lines, open + 1, i - 1)
          local reg = vim.v.register
          vim.fn.setreg(reg, table.concat(body, "\n") .. "\n", "l")
          vim.notify(("Claude: yanked %d line%s of code"):format(#body, #body == 1 and "" or "s"))
          return
        end
        open = nil
      end
    end
  end
  vim.notify("Claude: the cursor is not in a code block", vim.log.levels.WARN)
end

local function switch(chat)
  local ui = chat.ui
  local cur = api.nvim_get_current_win()
  local target = cur == ui.win and ui.prompt_win or ui.win
  if valid_win(target) then
    api.nvim_set_current_win(target)
  end
end

function M.attach_transcript_keys(chat)
  local keys = config.options.keymaps
  local buf = chat.ui.buf
  local a = M.actions
  map(buf, "n", "<CR>", function()
    a.enter(chat, api.nvim_win_get_cursor(0)[1] - 1)
  end, "Claude: pick the choice / act on the line under the cursor")
  map(buf, "n", "gf", function()
    a.open_file(chat, api.nvim_win_get_cursor(0)[1] - 1)
  end, "Claude: open the file of the tool call under the cursor")
  map(buf, "n", keys.interrupt, function()
    a.interrupt(chat)
  end, "Claude: interrupt the turn")
  map(buf, "n", keys.close, function()
    M.hide(chat)
  end, "Claude: hide the chat")
  map(buf, "n", keys.answer, function()
    a.answer(chat)
  end, "Claude: go to the prompt waiting for your answer")
  map(buf, "n", keys.switch, function()
    switch(chat)
  end, "Claude: go to the prompt window")
  map(buf, "n", keys.next_turn, function()
    jump_turn(chat, 1)
  end, "Claude: next turn")
  map(buf, "n", keys.prev_turn, function()
    jump_turn(chat, -1)
  end, "Claude: previous turn")
  map(buf, "n", keys.yank_code, function()
    yank_code(chat)
  end, "Claude: yank the code block under the cursor")
  if config.options.layout == "float" then
    map(buf, "n", "<C-w>j", function()
      switch(chat)
    end, "Claude: go to the prompt")
  end
end

function M.attach_prompt_keys(chat)
  local keys = config.options.keymaps
  local buf = chat.ui.prompt_buf
  local a = M.actions
  local function send()
    vim.cmd("stopinsert")
    a.send(chat)
  end
  map(buf, { "n", "i" }, keys.send, send, "Claude: send the prompt")
  map(buf, "n", keys.submit, send, "Claude: send the prompt")
  map(buf, "n", keys.interrupt, function()
    a.interrupt(chat)
  end, "Claude: interrupt the turn")
  map(buf, "i", keys.interrupt, function()
    vim.cmd("stopinsert")
    if chat.state == "running" then
      a.interrupt(chat)
    end
  end, "Claude: interrupt the turn (and leave Insert mode)")
  map(buf, "n", keys.close, function()
    M.hide(chat)
  end, "Claude: hide the chat")
  map(buf, "n", keys.answer, function()
    a.answer(chat)
  end, "Claude: go to the prompt waiting for your answer")
  map(buf, "n", keys.switch, function()
    switch(chat)
  end, "Claude: go to the transcript window")
  map(buf, { "n", "i" }, keys.paste_image, function()
    a.paste_image(chat)
  end, "Claude: attach the clipboard's image")
  for _, k in ipairs({ { "<Up>", -1 }, { "<Down>", 1 } }) do
    map(buf, { "n", "i" }, k[1], function()
      local row = api.nvim_win_get_cursor(0)[1]
      local last = api.nvim_buf_line_count(buf)
      local at_edge = (k[2] < 0 and row == 1) or (k[2] > 0 and row == last)
      if vim.fn.pumvisible() == 1 or not at_edge or not history(chat, k[2]) then
        api.nvim_feedkeys(vim.keycode(k[1]), "n", false)
      end
    end, k[2] < 0 and "Claude: previous prompt (on the first line)" or "Claude: next prompt (on the last line)")
  end
  if config.options.layout == "float" then
    map(buf, "n", "<C-w>k", function()
      switch(chat)
    end, "Claude: go to the transcript")
  end
end

return M
