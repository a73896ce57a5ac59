--- `@` mentions in a prompt: `@path` (a file), `@path/` (a folder), `@path#L3-9`
--- (lines of a file), `@"a path with spaces"`, and `@name` of something a chat
--- holds for its next prompt (a snippet of an unnamed buffer, a pasted image).
---
--- `M.to_prompt` is the one place that turns mentions into what is sent.

local M = {}

local IMAGE_TYPES = {
  png = "image/png",
  jpg = "image/jpeg",
  jpeg = "image/jpeg",
  gif = "image/gif",
  webp = "image/webp",
}
M.IMAGE_TYPES = IMAGE_TYPES

local MAX_FILE_BYTES = 256 * 1024
local MAX_IMAGE_BYTES = 5 * 1024 * 1024
local MAX_FOLDER_ENTRIES = 200

--- The mention text for a path (relative to `cwd` when under it), with an optional line range.
function M.format(path, cwd, line1, line2)
  local rel = path
  if cwd and vim.startswith(path, cwd .. "/") then
    rel = path:sub(#cwd + 2)
  elseif cwd and path == cwd then
    rel = "./"
  end
  local token = rel:find("%s") and ('@"' .. rel .. '"') or ("@" .. rel)
  if line1 then
    token = token .. "#L" .. line1 .. ((line2 and line2 ~= line1) and ("-" .. line2) or "")
  end
  return token
end

--- Every mention-shaped token of `text`: {start, finish (byte columns, 1-based,
--- inclusive), name, line1?, line2?}, on one line of text.
function M.tokens(line)
  local out = {}
  local pos = 1
  while true do
    local s = line:find("@", pos, true)
    if not s then
      break
    end
    local before = s > 1 and line:sub(s - 1, s - 1) or ""
    local name, finish
    if before == "" or before:match("[%s%(%[{,;]") then
      if line:sub(s + 1, s + 1) == '"' then
        local close = line:find('"', s + 2, true)
        if close then
          name, finish = line:sub(s + 2, close - 1), close
        end
      else
        local e = line:find("[%s%)%]},;]", s + 1) or (#line + 1)
        name, finish = line:sub(s + 1, e - 1), e - 1
        -- A sentence's full stop or colon is not part of the path.
        while name:match("[%.:!?]$") and not name:match("%.%.?/?$") do
          name, finish = name:sub(1, -2), finish - 1
        end
      end
    end
    if name and name ~= "" then
      local token = { start = s, finish = finish, name = name }
      local base, l1, l2 = name:match("^(.-)#L(%d+)%-L?(%d+)$")
      if not base then
        base, l1 = name:match("^(.-)#L(%d+)$")
      end
      if base then
        token.name = base
        token.line1 = tonumber(l1)
        token.line2 = tonumber(l2 or l1)
      end
      out[#out + 1] = token
      pos = (finish or s) + 1
    else
      pos = s + 1
    end
  end
  return out
end

local function absolute(name, cwd)
  if name:sub(1, 1) == "~" then
    return vim.fn.expand(name)
  end
  if name:sub(1, 1) == "/" then
    return name
  end
  if name == "." or name == "./" then
    return cwd
  end
  return (cwd or vim.fn.getcwd()) .. "/" .. name:gsub("^%./", "")
end

--- What a token names: {kind = "file"|"folder"|"image"|"snippet", path?, ...} or nil
--- (then it is plain text, an e-mail address or a handle).
function M.resolve(token, cwd, attachments)
  local held = attachments and attachments[token.name]
  if held then
    return held
  end
  local path = absolute(token.name, cwd)
  local stat = vim.uv.fs_stat(path)
  if not stat then
    return nil
  end
  if stat.type == "directory" then
    return { kind = "folder", path = path:gsub("/$", "") }
  end
  local ext = (path:match("%.([%w]+)$") or ""):lower()
  if IMAGE_TYPES[ext] and not token.line1 then
    return { kind = "image", path = path, media_type = IMAGE_TYPES[ext] }
  end
  return { kind = "file", path = path }
end

--- Every mention of `text` that names something: {token, target} in order.
function M.find(text, cwd, attachments)
  local out = {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    for _, token in ipairs(M.tokens(line)) do
      local target = M.resolve(token, cwd, attachments)
      if target then
        out[#out + 1] = { token = token, target = target }
      end
    end
  end
  return out
end

--- The lines of a file as the editor has them: a loaded buffer's (unsaved changes
--- included), else the file's.
local function file_lines(path)
  local buf = vim.fn.bufnr(path)
  if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false), vim.bo[buf].filetype
  end
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local data = f:read(MAX_FILE_BYTES + 1)
  f:close()
  local truncated = data and #data > MAX_FILE_BYTES
  if truncated then
    data = data:sub(1, MAX_FILE_BYTES)
  end
  local lines = vim.split(data or "", "\n", { plain = true })
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  if truncated then
    lines[#lines + 1] = ("[… cut at %d KiB]"):format(MAX_FILE_BYTES / 1024)
  end
  return lines, vim.filetype.match({ filename = path }) or ""
end

local function shown(path, cwd)
  if cwd and vim.startswith(path, cwd .. "/") then
    return path:sub(#cwd + 2)
  end
  return vim.fn.fnamemodify(path, ":~")
end

local function fenced(label, lines, filetype)
  local body = table.concat(lines, "\n")
  local fence = "```"
  while body:find(fence, 1, true) do
    fence = fence .. "`"
  end
  return ("%s:\n%s%s\n%s\n%s"):format(label, fence, filetype or "", body, fence)
end

local function folder_listing(path, cwd)
  local names = {}
  for name, kind in vim.fs.dir(path) do
    names[#names + 1] = name .. (kind == "directory" and "/" or "")
    if #names >= MAX_FOLDER_ENTRIES then
      names[#names + 1] = "…"
      break
    end
  end
  table.sort(names)
  return ("Folder %s/ holds:\n%s"):format(shown(path, cwd), table.concat(names, "\n"))
end

--- The prompt to send for `text`: `text` itself when it mentions nothing, else a
--- list of content blocks: what each mention names (a file's or a range's text,
--- a folder's listing, an image), then the text as written.
---@return string|table[] prompt, string? err
function M.to_prompt(text, cwd, attachments)
  local mentions = M.find(text, cwd, attachments)
  if #mentions == 0 then
    return text
  end
  local blocks = {}
  local seen = {}
  for _, m in ipairs(mentions) do
    local t, target = m.token, m.target
    local key = (target.path or t.name) .. "#" .. tostring(t.line1) .. "-" .. tostring(t.line2)
    if not seen[key] then
      seen[key] = true
      if target.kind == "image" then
        local f = io.open(target.path, "rb")
        if not f then
          return text, "cannot read " .. target.path
        end
        local data = f:read("*a")
        f:close()
        if #data > MAX_IMAGE_BYTES then
          return text, ("%s is larger than %d MiB"):format(shown(target.path, cwd), MAX_IMAGE_BYTES / 2 ^ 20)
        end
        blocks[#blocks + 1] = {
          type = "image",
          source = { type = "base64", media_type = target.media_type, data = vim.base64.encode(data) },
        }
      elseif target.kind == "snippet" then
        blocks[#blocks + 1] = { type = "text", text = fenced(target.label, target.lines, target.filetype) }
      elseif target.kind == "folder" then
        blocks[#blocks + 1] = { type = "text", text = folder_listing(target.path, cwd) }
      else
        local lines, filetype = file_lines(target.path)
        if not lines then
          return text, "cannot read " .. target.path
        end
        local label = shown(target.path, cwd)
        if t.line1 then
          local l2 = math.min(t.line2 or t.line1, #lines)
          lines = vim.list_slice(lines, t.line1, l2)
          label = label .. (t.line1 == l2 and (":" .. t.line1) or (":" .. t.line1 .. "-" .. l2))
        end
        blocks[#blocks + 1] = { type = "text", text = fenced(label, lines, filetype) }
      end
    end
  end
  blocks[#blocks + 1] = { type = "text", text = text }
  return blocks
end

-- Completion ---------------------------------------------------------------

local listings = {} -- cwd -> {files = {...}, at = time}

local SKIP = { [".git"] = true, node_modules = true, [".venv"] = true, __pycache__ = true }
local MAX_LISTED = 20000

local function walk(cwd)
  local files = {}
  local ok = pcall(function()
    for name, kind in
      vim.fs.dir(cwd, {
        depth = 8,
        skip = function(dir)
          return not SKIP[vim.fs.basename(dir)]
        end,
      })
    do
      if kind == "file" then
        files[#files + 1] = name
        if #files >= MAX_LISTED then
          break
        end
      end
    end
  end)
  return ok and files or {}
end

local function git_files(cwd)
  if vim.fn.executable("git") ~= 1 then
    return nil
  end
  local ok, obj = pcall(vim.system, { "git", "ls-files", "--cached", "--others", "--exclude-standard" }, {
    cwd = cwd,
    text = true,
  })
  if not ok then
    return nil
  end
  local r = obj:wait(2000)
  if r.code ~= 0 then
    return nil
  end
  local files = vim.split(vim.trim(r.stdout or ""), "\n", { plain = true, trimempty = true })
  return vim.list_slice(files, 1, MAX_LISTED)
end

--- The workspace's files and folders (relative to `cwd`), cached for 10 s.
function M.workspace(cwd)
  local cached = listings[cwd]
  local now = vim.uv.now()
  if cached and now - cached.at < 10000 then
    return cached.entries
  end
  local files = git_files(cwd) or walk(cwd)
  local entries, dirs = {}, {}
  for _, f in ipairs(files) do
    entries[#entries + 1] = { path = f, folder = false }
    local dir = vim.fs.dirname(f)
    while dir and dir ~= "." and dir ~= "" and not dirs[dir] do
      dirs[dir] = true
      entries[#entries + 1] = { path = dir .. "/", folder = true }
      dir = vim.fs.dirname(dir)
    end
  end
  listings[cwd] = { entries = entries, at = now }
  return entries
end

--- Completion items for what follows `@` (`typed`): files and folders whose path
--- holds it, those whose name starts with it first.
function M.complete(typed, cwd, attachments)
  local needle = typed:lower()
  local first, rest = {}, {}
  for name, held in pairs(attachments or {}) do
    if vim.startswith(name:lower(), needle) then
      first[#first + 1] = { word = "@" .. name, abbr = name, menu = held.kind }
    end
  end
  for _, e in ipairs(M.workspace(cwd)) do
    local lower = e.path:lower()
    if needle == "" or lower:find(needle, 1, true) then
      local base = vim.fs.basename((e.path:gsub("/$", ""))):lower()
      local item = {
        word = M.format(e.path, nil),
        abbr = e.path,
        menu = e.folder and "folder" or "file",
      }
      if vim.startswith(base, needle) or vim.startswith(lower, needle) then
        first[#first + 1] = item
      else
        rest[#rest + 1] = item
      end
    end
    if #first + #rest >= 400 then
      break
    end
  end
  local by_length = function(a, b)
    if #a.abbr ~= #b.abbr then
      return #a.abbr < #b.abbr
    end
    return a.abbr < b.abbr
  end
  table.sort(first, by_length)
  table.sort(rest, by_length)
  return vim.list_extend(first, rest)
end

return M
