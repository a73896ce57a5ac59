--- Draws a session's model into its chat buffer, in batches (never per delta),
--- and owns the chat's windows: the transcript above, the prompt below.

local model_mod = require("claude_bridge.model")
local config = require("claude_bridge.config")

local uv = vim.uv or vim.loop
local api = vim.api

local M = {}

local ns = api.nvim_create_namespace("claude_bridge")
M.ns = ns

local BATCH_MS = 20 -- draw at most every 20 ms while events stream
local MAX_RESULT_LINES = 200
local TOOL_PREFIX = "  │ "
local THINK_PREFIX = "  ┊ "

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
  set("ClaudeBridgeContext", "Special")
end
hl_defaults()
api.nvim_create_autocmd("ColorScheme", { callback = hl_defaults })

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
  if n >= 1000 then
    return ("%.1fk"):format(n / 1000)
  end
  return tostring(n)
end

--- The lines of one block and the highlight of its header line (the first one drawn).
---@return string[] lines, string? header_hl, integer header_offset
local function block_lines(block, cwd)
  local kind = block.kind
  if kind == "user" then
    local lines = { block.live and "## You (while Claude works)" or "## You", "" }
    for _, c in ipairs(block.context or {}) do
      lines[#lines + 1] = "📎 " .. c.label
    end
    vim.list_extend(lines, split(block.text))
    lines[#lines + 1] = ""
    lines[#lines + 1] = "## Claude"
    return lines, "ClaudeBridgeUser", 0
  elseif kind == "text" then
    local lines = split(model_mod.text(block))
    if block.aborted then
      lines[#lines] = lines[#lines] .. " ⏹"
    end
    return lines, nil, 0
  elseif kind == "thinking" then
    local lines = { block.done and "✻ Thought" or "✻ Thinking…" }
    vim.list_extend(lines, prefixed(model_mod.text(block), THINK_PREFIX))
    return lines, "ClaudeBridgeThinking", 0
  elseif kind == "tool" then
    local mark = "⋯"
    if block.result ~= nil then
      mark = block.is_error and "✗" or "✓"
    end
    local lines = {
      ("%s %s  %s"):format(mark, block.name, model_mod.tool_summary(block.name, block.input, cwd)),
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
    return lines, block.is_error and "ClaudeBridgeError" or "ClaudeBridgeTool", 0
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
    return { "─── " .. table.concat(parts, " · ") .. " ───" }, "ClaudeBridgeDone", 0
  elseif kind == "error" then
    local lines = split("✗ Error: " .. block.text)
    return lines, "ClaudeBridgeError", 0
  else
    return split("ℹ " .. block.text), "ClaudeBridgeInfo", 0
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

--- Draw what changed in the chat's model since the last draw.
function M.render(chat)
  local buf = chat.buf
  local m = chat.model
  local bar = M.chat_winbar(chat)
  if chat.bar ~= bar then
    chat.bar = bar
    M.update_prompt_hint(chat)
    vim.cmd("redrawstatus!")
  end
  local dirty = m.dirty
  if not dirty or not (buf and api.nvim_buf_is_valid(buf)) then
    return
  end
  m.dirty = nil
  local drawn = chat.drawn -- per block: {start=row, count=n, parts, nparts, last_len, done}
  local blocks = m.blocks
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
    local blines, hl = block_lines(b, m.cwd)
    if i > 1 then
      table.insert(blines, 1, "")
    end
    local foldable = (b.kind == "tool" and b.result ~= nil) or (b.kind == "thinking" and b.done)
    if foldable and #blines > 2 then
      to_fold[#to_fold + 1] = row + #blines - 1
    end
    if hl then
      highlights[#highlights + 1] = { row + (i > 1 and 1 or 0), hl }
    end
    drawn[i] = {
      start = row,
      count = #blines,
      parts = b.parts, -- block_lines joined them: one part, the text drawn
      nparts = b.parts and #b.parts or 0,
      last_len = #blines[#blines],
      done = b.done,
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
  if chat.render_timer then
    return
  end
  local now = uv.now()
  local wait = math.max(0, (chat.last_render or 0) + BATCH_MS - now)
  chat.render_timer = true
  vim.defer_fn(function()
    chat.render_timer = nil
    chat.last_render = uv.now()
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

--- Create the chat's two buffers (transcript and prompt).
function M.create_buffers(chat, n)
  chat.drawn = {}
  chat.buf = scratch(("claude://chat/%d"):format(n), "claude_bridge")
  vim.bo[chat.buf].modifiable = false
  vim.bo[chat.buf].undolevels = -1
  if pcall(vim.treesitter.language.add, "markdown") then
    pcall(vim.treesitter.start, chat.buf, "markdown")
  else
    vim.bo[chat.buf].syntax = "markdown"
  end
  chat.prompt_buf = scratch(("claude://prompt/%d"):format(n), "markdown")
  vim.b[chat.prompt_buf].claude_bridge_prompt = true
  M.update_prompt_hint(chat)
end

--- The prompt window's bar: its keys, and the context waiting to be sent.
function M.prompt_winbar(chat)
  local keys = config.options.keymaps
  local parts = { ("%%#ClaudeBridgeDone#Prompt · %s send · %s interrupt"):format(keys.send or "", keys.interrupt or "") }
  for _, c in ipairs(chat.contexts or {}) do
    parts[#parts + 1] = "%#ClaudeBridgeContext#📎 " .. c.label:gsub("%%", "%%%%")
  end
  return table.concat(parts, "  ")
end

--- The transcript window's bar: model, permission mode, state and cost.
function M.chat_winbar(chat)
  local m = chat.model
  local st = m.state
  if st == "running" and next(m.permissions) then
    st = "waiting for your answer"
  end
  local ctx = m.context and m.context.percentage and (" · context " .. m.context.percentage .. "%%") or ""
  return ("%%#ClaudeBridgeUser#Claude%%* · %s · %s · %s · $%.4f%s"):format(
    (tostring(m.model or "default"):gsub("%%", "%%%%")),
    m.mode or "default",
    st,
    m.total_cost or 0,
    ctx
  )
end

--- Refresh the bars (after a state change, a new context, ...).
function M.update_prompt_hint(chat)
  if chat.prompt_win and api.nvim_win_is_valid(chat.prompt_win) then
    vim.wo[chat.prompt_win].winbar = M.prompt_winbar(chat)
  end
  if chat.win and api.nvim_win_is_valid(chat.win) then
    vim.wo[chat.win].winbar = M.chat_winbar(chat)
  end
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
  wo.winfixwidth = true
  wo.fillchars = "fold: "
end

local function set_prompt_win_options(win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.winfixheight = true
end

--- Is the chat shown? Returns its transcript window.
function M.visible(chat)
  if chat.win and api.nvim_win_is_valid(chat.win) and api.nvim_win_get_buf(chat.win) == chat.buf then
    return chat.win
  end
end

--- Show the chat (transcript above, prompt below) and put the cursor in the prompt.
function M.open(chat)
  local opts = config.options
  if M.visible(chat) then
    if chat.prompt_win and api.nvim_win_is_valid(chat.prompt_win) then
      api.nvim_set_current_win(chat.prompt_win)
    else
      api.nvim_set_current_win(chat.win)
    end
    return
  end
  local layout = opts.layout
  local prompt_height = opts.prompt_height
  if layout == "float" then
    local cols, rows = vim.o.columns, vim.o.lines
    local width = math.floor(cols * opts.float.width)
    local height = math.floor(rows * opts.float.height)
    local col = math.floor((cols - width) / 2)
    local row = math.floor((rows - height) / 2) - 1
    chat.win = api.nvim_open_win(chat.buf, true, {
      relative = "editor",
      width = width,
      height = height - prompt_height - 2,
      col = col,
      row = row,
      border = opts.float.border,
      title = " Claude ",
      title_pos = "center",
    })
    chat.prompt_win = api.nvim_open_win(chat.prompt_buf, true, {
      relative = "editor",
      width = width,
      height = prompt_height,
      col = col,
      row = row + height - prompt_height,
      border = opts.float.border,
      title = " Prompt ",
      title_pos = "left",
    })
  else
    if layout == "tab" then
      vim.cmd("tabnew")
      chat.win = api.nvim_get_current_win()
      api.nvim_win_set_buf(chat.win, chat.buf)
    elseif layout == "horizontal" then
      vim.cmd(("botright %dsplit"):format(opts.height))
      chat.win = api.nvim_get_current_win()
      api.nvim_win_set_buf(chat.win, chat.buf)
    else
      local width = opts.width
      if width < 1 then
        width = math.floor(vim.o.columns * width)
      end
      vim.cmd(("botright %dvsplit"):format(width))
      chat.win = api.nvim_get_current_win()
      api.nvim_win_set_buf(chat.win, chat.buf)
    end
    vim.cmd(("belowright %dsplit"):format(prompt_height))
    chat.prompt_win = api.nvim_get_current_win()
    api.nvim_win_set_buf(chat.prompt_win, chat.prompt_buf)
  end
  set_chat_win_options(chat.win)
  set_prompt_win_options(chat.prompt_win)
  M.update_prompt_hint(chat)
  api.nvim_win_set_cursor(chat.win, { api.nvim_buf_line_count(chat.buf), 0 })
  api.nvim_set_current_win(chat.prompt_win)
end

--- Hide the chat's windows (the session lives on).
function M.hide(chat)
  for _, w in ipairs({ chat.prompt_win, chat.win }) do
    if w and api.nvim_win_is_valid(w) and #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, w, true)
    end
  end
end

--- The prompt's text, and clear it.
function M.take_prompt(chat)
  local buf = chat.prompt_buf
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  api.nvim_buf_set_lines(buf, 0, -1, false, { "" })
  return vim.trim(text)
end

return M
