--- Permission prompts: the bridge's `session/requestPermission` is deferred at
--- once, the user is asked with `vim.ui.select` (one prompt at a time, never
--- blocking the event loop), and the answer goes back with
--- `session/respondPermission` whenever it comes.

local model_mod = require("claude_bridge.model")
local config = require("claude_bridge.config")

local api = vim.api

local M = {}

local queue = {} ---@type {params: table, answer: fun(decision: table)}[]
local active = nil
local cancelled = {} ---@type table<string, boolean> requestIds the bridge no longer wants answered

-- Diffs -------------------------------------------------------------------

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local data = f:read("*a")
  f:close()
  return data
end

local function replace_plain(text, old, new, all)
  local out, pos, n = {}, 1, 0
  while true do
    local s, e = text:find(old, pos, true)
    if not s or old == "" then
      break
    end
    out[#out + 1] = text:sub(pos, s - 1)
    out[#out + 1] = new
    pos = e + 1
    n = n + 1
    if not all then
      break
    end
  end
  out[#out + 1] = text:sub(pos)
  return table.concat(out), n
end

--- The file's text now and after the tool ran, for Edit, Write and MultiEdit.
---@return string? path, string? before, string? after
function M.proposed_change(tool, input)
  local path = input.file_path
  if type(path) ~= "string" then
    return nil
  end
  local before = read_file(path) or ""
  if tool == "Write" then
    return path, before, input.content or ""
  elseif tool == "Edit" then
    local after, n = replace_plain(before, input.old_string or "", input.new_string or "", input.replace_all)
    if n == 0 then
      return path, input.old_string or "", input.new_string or ""
    end
    return path, before, after
  elseif tool == "MultiEdit" then
    local after = before
    for _, e in ipairs(input.edits or {}) do
      after = replace_plain(after, e.old_string or "", e.new_string or "", e.replace_all)
    end
    return path, before, after
  end
end

local function diff_buf(name, text, ft)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" and #lines > 1 then
    lines[#lines] = nil
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  pcall(api.nvim_buf_set_name, buf, name)
  if ft and ft ~= "" then
    vim.bo[buf].filetype = ft
  end
  return buf
end

--- Open a tab with the file now (left) and after (right) in diff mode; returns a closer.
function M.show_diff(tool, input)
  local path, before, after = M.proposed_change(tool, input)
  if not path then
    return function() end
  end
  local ft = vim.filetype.match({ filename = path }) or ""
  local prev_tab = api.nvim_get_current_tabpage()
  local short = vim.fn.fnamemodify(path, ":~:.")
  local stamp = vim.uv.hrtime()
  local left = diff_buf(("claude://diff/%d/now/%s"):format(stamp, short), before, ft)
  local right = diff_buf(("claude://diff/%d/after/%s"):format(stamp, short), after, ft)
  vim.cmd("tabnew")
  local tab = api.nvim_get_current_tabpage()
  local scratch = api.nvim_get_current_buf()
  api.nvim_win_set_buf(0, left)
  vim.cmd("diffthis")
  vim.cmd("rightbelow vsplit")
  api.nvim_win_set_buf(0, right)
  vim.cmd("diffthis")
  if api.nvim_buf_is_valid(scratch) and scratch ~= left and scratch ~= right then
    pcall(api.nvim_buf_delete, scratch, { force = true })
  end
  vim.t[tab].claude_bridge_diff = short
  return function()
    if api.nvim_tabpage_is_valid(tab) and #api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose " .. api.nvim_tabpage_get_number(tab))
    end
    if api.nvim_tabpage_is_valid(prev_tab) then
      pcall(api.nvim_set_current_tabpage, prev_tab)
    end
  end
end

-- Prompts -----------------------------------------------------------------

local function rule_label(suggestions)
  local labels = {}
  for _, s in ipairs(suggestions or {}) do
    if s.type == "addRules" then
      for _, r in ipairs(s.rules or {}) do
        labels[#labels + 1] = r.ruleContent and (r.toolName .. "(" .. r.ruleContent .. ")") or r.toolName
      end
    elseif s.type == "setMode" then
      labels[#labels + 1] = "mode " .. tostring(s.mode)
    end
  end
  return table.concat(labels, ", ")
end

--- A multiSelect question: pick options one by one, then "Done" (answer: "A, B").
local function ask_many(q, items, finish)
  local chosen = {}
  local function again()
    local menu = { { label = "Done", finish = true } }
    for _, o in ipairs(items) do
      if not o.other then
        menu[#menu + 1] = o
      end
    end
    vim.ui.select(menu, {
      prompt = (q.header and (q.header .. ": ") or "") .. (q.question or "") .. " (several)",
      kind = "claude_bridge.question",
      format_item = function(o)
        if o.finish then
          return #chosen > 0 and ("Done: " .. table.concat(chosen, ", ")) or "Done"
        end
        local mark = vim.tbl_contains(chosen, o.label) and "[x] " or "[ ] "
        return mark .. o.label .. ((o.description and o.description ~= "") and (" — " .. o.description) or "")
      end,
    }, function(choice)
      if not choice then
        return finish(nil)
      elseif choice.finish then
        return finish(table.concat(chosen, ", "))
      end
      if vim.tbl_contains(chosen, choice.label) then
        chosen = vim.tbl_filter(function(l)
          return l ~= choice.label
        end, chosen)
      else
        chosen[#chosen + 1] = choice.label
      end
      again()
    end)
  end
  again()
end

local function ask_questions(params, done)
  local input = params.input or {}
  local questions = input.questions or {}
  local answers = {}
  local i = 0
  local function next_question()
    i = i + 1
    local q = questions[i]
    if not q then
      local updated = vim.deepcopy(input)
      updated.answers = next(answers) and answers or vim.empty_dict() -- {} would encode as []
      return done({ behavior = "allow", updatedInput = updated })
    end
    local items = {}
    for _, o in ipairs(q.options or {}) do
      items[#items + 1] = o
    end
    items[#items + 1] = { label = "Other…", other = true }
    if q.multiSelect then
      return ask_many(q, items, function(labels)
        if not labels then
          return done(nil)
        end
        answers[q.question] = labels
        next_question()
      end)
    end
    vim.ui.select(items, {
      prompt = (q.header and (q.header .. ": ") or "") .. (q.question or ""),
      kind = "claude_bridge.question",
      format_item = function(o)
        if o.description and o.description ~= "" then
          return o.label .. " — " .. o.description
        end
        return o.label
      end,
    }, function(choice)
      if not choice then
        return done(nil) -- dismissed: the question stays open (:ClaudePermissions)
      end
      if choice.other then
        vim.ui.input({ prompt = (q.question or "Answer") .. " " }, function(text)
          if not text then
            return done(nil)
          end
          answers[q.question] = text
          next_question()
        end)
        return
      end
      answers[q.question] = choice.label
      next_question()
    end)
  end
  next_question()
end

local function ask_tool(params, done)
  local tool = params.toolName
  local summary = model_mod.tool_summary(tool, params.input, params.cwd)
  local close_diff = function() end
  if config.options.diff and (tool == "Edit" or tool == "Write" or tool == "MultiEdit") then
    local ok, closer = pcall(M.show_diff, tool, params.input or {})
    if ok then
      close_diff = closer
    end
  end
  local items = { "Allow", "Deny" }
  if params.suggestions and #params.suggestions > 0 then
    items[#items + 1] = "Always allow: " .. rule_label(params.suggestions)
  end
  vim.cmd("redraw") -- show the diff before a blocking picker takes the screen
  local prompt = ("Claude wants to use %s: %s"):format(params.displayName or tool, summary)
  if params.description and params.description ~= "" and params.description ~= summary then
    prompt = prompt .. " (" .. params.description .. ")"
  end
  vim.ui.select(items, { prompt = prompt, kind = "claude_bridge.permission" }, function(choice)
    close_diff()
    if choice == nil then
      return done(nil)
    end
    if vim.startswith(choice, "Always allow") then
      return done({ behavior = "allow", updatedPermissions = params.suggestions })
    elseif vim.startswith(choice, "Allow") then
      return done({ behavior = "allow" })
    end
    vim.ui.input({ prompt = "Reason for denying (optional): " }, function(reason)
      local decision = { behavior = "deny" }
      if reason and vim.trim(reason) ~= "" then
        decision.message = reason
      end
      done(decision)
    end)
  end)
end

local function pump()
  if active or #queue == 0 then
    return
  end
  active = table.remove(queue, 1)
  local item = active
  if cancelled[item.params.requestId] then
    active = nil
    return pump()
  end
  local finished = false
  local function done(decision)
    if finished then
      return
    end
    finished = true
    active = nil
    if decision and not cancelled[item.params.requestId] then
      item.answer(decision)
    elseif not decision then
      item.left_open(item)
    end
    vim.schedule(pump)
  end
  local ok, err = pcall(item.params.requiresUserInteraction and ask_questions or ask_tool, item.params, done)
  if not ok then
    vim.notify("claude_bridge: permission prompt failed: " .. tostring(err), vim.log.levels.ERROR)
    done(nil)
  end
end

--- Ask the user about `params` (a `session/requestPermission`); `answer(decision)` is
--- called once they decided; `left_open(item)` if they dismissed the prompt
--- (the request stays pending: `M.reask(item)` asks again).
function M.ask(params, answer, left_open)
  queue[#queue + 1] = { params = params, answer = answer, left_open = left_open }
  vim.schedule(pump)
end

function M.reask(item)
  queue[#queue + 1] = item
  vim.schedule(pump)
end

--- The bridge no longer wants an answer (timeout, turn ended).
function M.cancel(request_id)
  cancelled[request_id] = true
  for i = #queue, 1, -1 do
    if queue[i].params.requestId == request_id then
      table.remove(queue, i)
    end
  end
end

return M
