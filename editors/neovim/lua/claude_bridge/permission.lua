--- Permission prompts: the choices a prompt offers (each labelled with what it
--- does), the decision each choice sends, and the diff of a proposed edit, whose
--- proposal side can be edited and accepted as it stands.
---
--- A prompt never takes the keyboard: it is drawn in its chat (the view), and
--- this module acts only when the user picks a choice there.

local model = require("claude_bridge.model")
local protocol = require("claude_bridge.protocol")

local api = vim.api

local M = {}

-- Choices -----------------------------------------------------------------

local DESTINATIONS = {
  localSettings = "saved in .claude/settings.local.json",
  projectSettings = "saved in .claude/settings.json",
  userSettings = "saved in ~/.claude/settings.json",
  session = "for this session",
  cliArg = "for this session",
}

local function mode_description(mode)
  for _, m in ipairs(protocol.permission_modes) do
    if m.name == mode then
      return m.description
    end
  end
  return ""
end

local function shorten(text, cwd)
  text = tostring(text)
  if cwd and cwd ~= "" then
    text = text:gsub(vim.pesc(cwd .. "/"), "")
  end
  if #text > 80 then
    text = text:sub(1, 77) .. "..."
  end
  return text
end

local function rule_text(rule, cwd)
  if rule.ruleContent and rule.ruleContent ~= "" then
    return ("%s(%s)"):format(rule.toolName, shorten(rule.ruleContent, cwd))
  end
  return tostring(rule.toolName)
end

--- What one of the CLI's suggestions does, in words.
function M.suggestion_label(s, cwd)
  local where = DESTINATIONS[s.destination] or ("in " .. tostring(s.destination))
  if s.type == "addRules" or s.type == "replaceRules" then
    local rules = {}
    for _, r in ipairs(s.rules or {}) do
      rules[#rules + 1] = rule_text(r, cwd)
    end
    local verb = ({ allow = "always allow", deny = "always deny", ask = "always ask before" })[s.behavior]
      or "add the rule"
    return ("Allow, and %s %s (%s)"):format(verb, table.concat(rules, ", "), where)
  elseif s.type == "removeRules" then
    local rules = {}
    for _, r in ipairs(s.rules or {}) do
      rules[#rules + 1] = rule_text(r, cwd)
    end
    return ("Allow, and remove the rule %s (%s)"):format(table.concat(rules, ", "), where)
  elseif s.type == "setMode" then
    local desc = mode_description(s.mode)
    return ("Allow, and switch this session to %s mode%s"):format(
      tostring(s.mode),
      desc ~= "" and (": " .. desc) or ""
    )
  elseif s.type == "addDirectories" then
    local dirs = {}
    for _, d in ipairs(s.directories or {}) do
      dirs[#dirs + 1] = vim.fn.fnamemodify(d, ":~")
    end
    return ("Allow, and let Claude work in %s (%s)"):format(table.concat(dirs, ", "), where)
  elseif s.type == "removeDirectories" then
    return ("Allow, and stop Claude working in %s"):format(table.concat(s.directories or {}, ", "))
  end
  return "Allow, and apply the CLI's suggestion " .. vim.json.encode(s)
end

local function suggestion_choices(params, cwd)
  local out = {}
  for _, s in ipairs(params.suggestions or {}) do
    local label = M.suggestion_label(s, cwd)
    out[#out + 1] = {
      label = label,
      decision = { behavior = "allow", updatedPermissions = { s } },
      outcome = "Allowed, and " .. (label:gsub("^Allow, and ", "")),
    }
  end
  return out
end

local function question_choices(card)
  local questions = (card.params.input or {}).questions or {}
  local q = questions[card.question] or {}
  local out = {}
  for _, o in ipairs(q.options or {}) do
    local desc = (o.description and o.description ~= "") and (" — " .. o.description) or ""
    if q.multiSelect then
      local ticked = vim.tbl_contains(card.selected, o.label)
      out[#out + 1] = { label = (ticked and "[x] " or "[ ] ") .. o.label .. desc, action = "toggle", value = o.label }
    else
      out[#out + 1] = { label = o.label .. desc, action = "option", value = o.label }
    end
  end
  if q.multiSelect then
    out[#out + 1] = {
      label = #card.selected > 0 and ("Submit: " .. table.concat(card.selected, ", ")) or "Submit (nothing ticked)",
      action = "submit",
    }
  end
  out[#out + 1] = { label = "Other: type your own answer…", action = "other" }
  out[#out + 1] = {
    label = "Do not answer",
    decision = { behavior = "deny", message = "The user declined to answer." },
    outcome = "Not answered",
  }
  return out
end

--- The choices of a prompt (a `kind = "ask"` block), in order: {label, decision?
--- (what is sent), action? ("diff", "reason", "option", "toggle", "submit", "other")}.
function M.choices(card)
  local params = card.params
  if card.what == "question" then
    return question_choices(card)
  elseif card.what == "plan" then
    return {
      { label = "Approve the plan", decision = { behavior = "allow" }, outcome = "Plan approved" },
      {
        label = "Keep planning",
        decision = { behavior = "deny", message = "The user wants to keep planning." },
        outcome = "Keep planning",
      },
      { label = "Keep planning, and tell Claude what to change…", action = "reason" },
    }
  end
  local out = {}
  if card.what == "edit" then
    out[#out + 1] = { label = "Review the change (a diff you can edit; :w there accepts it)", action = "diff" }
    out[#out + 1] = { label = "Accept", decision = { behavior = "allow" }, outcome = "Accepted" }
    out[#out + 1] = { label = "Reject", decision = { behavior = "deny" }, outcome = "Rejected" }
    out[#out + 1] = { label = "Reject, and tell Claude why…", action = "reason" }
  else
    out[#out + 1] = { label = "Allow", decision = { behavior = "allow" }, outcome = "Allowed" }
    out[#out + 1] = { label = "Deny", decision = { behavior = "deny" }, outcome = "Denied" }
    out[#out + 1] = { label = "Deny, and tell Claude why…", action = "reason" }
  end
  vim.list_extend(out, suggestion_choices(params, card.cwd))
  return out
end

--- The decision for a deny with the user's reason.
function M.deny_with(card, reason)
  reason = vim.trim(reason or "")
  if card.what == "plan" then
    local message = "The user wants to keep planning" .. (reason ~= "" and (": " .. reason) or ".")
    return { behavior = "deny", message = message }, "Keep planning" .. (reason ~= "" and (": " .. reason) or "")
  end
  local decision = { behavior = "deny" }
  if reason ~= "" then
    decision.message = reason
  end
  return decision, (card.what == "edit" and "Rejected" or "Denied") .. (reason ~= "" and (": " .. reason) or "")
end

--- Record the answer to the question being asked; returns the decision once every
--- question has one (nil while more questions follow).
function M.answer_question(card, answer)
  local input = card.params.input or {}
  local questions = input.questions or {}
  local q = questions[card.question]
  if q then
    card.answers[q.question] = answer
  end
  card.selected = {}
  card.question = card.question + 1
  if card.question <= #questions then
    return nil
  end
  local updated = vim.deepcopy(input)
  updated.answers = next(card.answers) and card.answers or vim.empty_dict() -- {} would encode as []
  local parts = {}
  for _, qq in ipairs(questions) do
    if card.answers[qq.question] then
      parts[#parts + 1] = card.answers[qq.question]
    end
  end
  return { behavior = "allow", updatedInput = updated }, "Answered: " .. table.concat(parts, "; ")
end

-- Edits -------------------------------------------------------------------

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

--- The file's text now and after the tool ran, for Edit, Write and MultiEdit;
--- `whole` is false when the edit's old text is not in the file (then only the
--- edited fragment is shown).
---@return string? path, string? before, string? after, boolean whole
function M.proposed_change(tool, input)
  local path = input.file_path
  if type(path) ~= "string" then
    return nil, nil, nil, false
  end
  local before = model.read_file(path) or ""
  if tool == "Write" then
    return path, before, input.content or "", true
  elseif tool == "Edit" then
    local after, n = replace_plain(before, input.old_string or "", input.new_string or "", input.replace_all)
    if n == 0 then
      return path, input.old_string or "", input.new_string or "", false
    end
    return path, before, after, true
  elseif tool == "MultiEdit" then
    local after = before
    for _, e in ipairs(input.edits or {}) do
      after = replace_plain(after, e.old_string or "", e.new_string or "", e.replace_all)
    end
    return path, before, after, true
  end
  return nil, nil, nil, false
end

--- The tool input that writes `edited` instead of what Claude proposed.
function M.edited_input(tool, input, before, edited, whole)
  local updated = vim.deepcopy(input)
  if tool == "Write" then
    updated.content = edited
  elseif tool == "Edit" then
    if whole then
      updated.old_string = before
    end
    updated.new_string = edited
    updated.replace_all = false
  elseif tool == "MultiEdit" then
    updated.edits = { { old_string = before, new_string = edited, replace_all = false } }
  end
  return updated
end

local function to_lines(text)
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" and #lines > 1 then
    lines[#lines] = nil
  end
  return lines
end

local function lines_text(lines, like)
  local text = table.concat(lines, "\n")
  if like:sub(-1) == "\n" then
    text = text .. "\n"
  end
  return text
end

local function diff_buf(name, lines, ft, editable)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  if editable then
    vim.bo[buf].buftype = "acwrite"
    vim.bo[buf].modified = false
  else
    vim.bo[buf].modifiable = false
  end
  pcall(api.nvim_buf_set_name, buf, name)
  if ft and ft ~= "" then
    vim.bo[buf].filetype = ft
  end
  return buf
end

--- Replace the hunk under the cursor in `buf` with the lines `source_lines`
--- (the proposal, or the file now) have there.
local function hunk_from(buf, source_lines)
  local current = api.nvim_buf_get_lines(buf, 0, -1, false)
  local a = table.concat(current, "\n") .. "\n"
  local b = table.concat(source_lines, "\n") .. "\n"
  local row = api.nvim_win_get_cursor(0)[1]
  for _, h in ipairs(vim.diff(a, b, { result_type = "indices" }) or {}) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    local replacement = vim.list_slice(source_lines, sb, sb + cb - 1)
    if ca > 0 and row >= sa and row < sa + ca then
      api.nvim_buf_set_lines(buf, sa - 1, sa - 1 + ca, false, replacement)
      return true
    elseif ca == 0 and (row == sa or row == sa + 1) then
      api.nvim_buf_set_lines(buf, sa, sa, false, replacement)
      return true
    end
  end
  return false
end

local function tab_closer(tab)
  return function()
    if api.nvim_tabpage_is_valid(tab) then
      if #api.nvim_list_tabpages() > 1 then
        pcall(vim.cmd, "tabclose " .. api.nvim_tabpage_get_number(tab))
      else
        for _, w in ipairs(api.nvim_tabpage_list_wins(tab)) do
          pcall(api.nvim_win_close, w, true)
        end
      end
    end
  end
end

local function open_tab(left, right)
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
  return tab
end

--- Open the diff of a proposed edit in a tab: the file now (left) and the
--- proposal (right, editable). `answer(decision, outcome)` is called when the user
--- accepts (`:w`, `gA`) or rejects (`gR`) there; `ga`/`gr` take or drop the hunk
--- under the cursor; `q` closes the diff and answers nothing. Returns a closer.
function M.review(card, answer)
  local params = card.params
  local tool, input = params.toolName, params.input or {}
  local path, before, after, whole = M.proposed_change(tool, input)
  if not path then
    return nil
  end
  local ft = vim.filetype.match({ filename = path }) or ""
  local short = vim.fn.fnamemodify(path, ":~:.")
  local stamp = vim.uv.hrtime()
  local proposed = to_lines(after)
  local left = diff_buf(("claude://diff/%d/now/%s"):format(stamp, short), to_lines(before), ft, false)
  local right = diff_buf(("claude://diff/%d/proposed/%s"):format(stamp, short), proposed, ft, true)
  local tab = open_tab(left, right)
  local close = tab_closer(tab)
  vim.t[tab].claude_bridge_diff = short
  local right_win = api.nvim_get_current_win()
  vim.wo[right_win].winbar = "%#ClaudeBridgeDone#Proposed · :w accept · gR reject · ga/gr take/drop hunk · q close%<"
  local left_win = vim.fn.win_getid(vim.fn.winnr("h"))
  if left_win ~= 0 then
    vim.wo[left_win].winbar = "%#ClaudeBridgeDone#" .. short:gsub("%%", "%%%%") .. " now%<"
  end

  local function accept()
    local edited = lines_text(api.nvim_buf_get_lines(right, 0, -1, false), after)
    vim.bo[right].modified = false
    if edited == after then
      answer({ behavior = "allow" }, "Accepted")
    else
      answer(
        { behavior = "allow", updatedInput = M.edited_input(tool, input, before, edited, whole) },
        "Accepted with your changes"
      )
    end
  end
  local function reject()
    vim.bo[right].modified = false
    answer({ behavior = "deny" }, "Rejected")
  end
  local original = to_lines(before)
  api.nvim_create_autocmd("BufWriteCmd", { buffer = right, callback = accept })
  for _, b in ipairs({ left, right }) do
    local function map(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = b, desc = desc, nowait = true })
    end
    map("gA", accept, "Claude: accept the change (as the proposal side shows it)")
    map("gR", reject, "Claude: reject the change")
    map("q", function()
      vim.bo[right].modified = false
      close()
    end, "Claude: close the diff (the prompt stays in the chat)")
  end
  vim.keymap.set("n", "ga", function()
    hunk_from(right, proposed)
    vim.cmd("diffupdate")
  end, { buffer = right, desc = "Claude: take the proposed hunk under the cursor", nowait = true })
  vim.keymap.set("n", "gr", function()
    hunk_from(right, original)
    vim.cmd("diffupdate")
  end, { buffer = right, desc = "Claude: drop the hunk under the cursor (keep the file's text)", nowait = true })
  return close, tab
end

--- Show what a finished edit changed (the file before the tool ran, and now).
function M.show_change(block)
  local input = block.input or {}
  local path = input.file_path
  if type(path) ~= "string" then
    return false
  end
  local now = model.read_file(path) or ""
  local before = block.before
  if before == nil or before == now then
    -- The snapshot came too late (or there is none): undo the edit on the text now.
    if block.name == "Edit" and input.new_string and input.new_string ~= "" then
      before = replace_plain(now, input.new_string, input.old_string or "", input.replace_all)
    elseif block.name == "MultiEdit" then
      before = now
      local edits = input.edits or {}
      for i = #edits, 1, -1 do
        before = replace_plain(before, edits[i].new_string or "", edits[i].old_string or "", edits[i].replace_all)
      end
    else
      before = before or ""
    end
  end
  local ft = vim.filetype.match({ filename = path }) or ""
  local short = vim.fn.fnamemodify(path, ":~:.")
  local stamp = vim.uv.hrtime()
  local left = diff_buf(("claude://change/%d/before/%s"):format(stamp, short), to_lines(before), ft, false)
  local right = diff_buf(("claude://change/%d/after/%s"):format(stamp, short), to_lines(now), ft, false)
  local tab = open_tab(left, right)
  local close = tab_closer(tab)
  for _, b in ipairs({ left, right }) do
    vim.keymap.set("n", "q", close, { buffer = b, desc = "Claude: close the diff", nowait = true })
  end
  return true
end

return M
