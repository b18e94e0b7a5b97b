-- Drives `msgaudit server` from a real Neovim (0.7 or newer, headless), for
-- tests/neovim.rs: opens a file, waits for msgaudit's diagnostics, asks for the
-- code actions on a line, applies the first one's edit (Neovim then sends
-- didChange), waits for the diagnostics of the edited buffer, and writes what it
-- saw as JSON. Inputs from the environment: MSGAUDIT_BIN, MSGAUDIT_ROOT,
-- MSGAUDIT_FILE, MSGAUDIT_LINE (0-based line to ask code actions on), MSGAUDIT_OUT.
-- Uses only APIs Neovim 0.7 has (vim.lsp.start_client, vim.lsp.buf_attach_client).

local env = function(name)
  local v = os.getenv(name)
  assert(v and v ~= "", name .. " is not set")
  return v
end

local result = { events = {} }
local function note(what) table.insert(result.events, what) end

local function diagnostics(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(out, {
      code = d.code or lsp.code,
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      severity = d.severity,
      source = d.source,
      message = d.message,
      href = lsp.codeDescription and lsp.codeDescription.href or vim.NIL,
      related = lsp.relatedInformation and #lsp.relatedInformation or 0,
    })
  end
  table.sort(out, function(a, b)
    if a.lnum ~= b.lnum then return a.lnum < b.lnum end
    return tostring(a.code) < tostring(b.code)
  end)
  return out
end

-- Every publishDiagnostics (uri, version), to wait for the one of a buffer's version.
local published = {}
local default_handler = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, res, ctx, config)
  table.insert(published, { uri = res.uri, version = res.version })
  return default_handler(err, res, ctx, config)
end

-- Waits for the diagnostics of `buf` computed from its current text. The bound
-- only stops a hung test: nothing is timed.
local function wait_for_current(buf)
  local uri = vim.uri_from_bufnr(buf)
  return vim.wait(120000, function()
    local version = vim.lsp.util.buf_versions[buf]
    for _, p in ipairs(published) do
      if p.uri == uri and p.version == version then return true end
    end
    return false
  end, 20)
end

local function run()
  local line = tonumber(env("MSGAUDIT_LINE"))
  local client_id = vim.lsp.start_client({
    name = "msgaudit",
    cmd = { env("MSGAUDIT_BIN"), "server" },
    root_dir = env("MSGAUDIT_ROOT"),
    init_options = { debounceMs = 0 },
  })
  assert(client_id, "the client did not start")
  vim.cmd("edit " .. vim.fn.fnameescape(env("MSGAUDIT_FILE")))
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.lsp.buf_attach_client(buf, client_id), "buf_attach_client failed")
  note("attached")

  note(wait_for_current(buf) and "diagnostics" or "no diagnostics")
  result.before = diagnostics(buf)

  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
    context = { diagnostics = {} },
  }
  local responses = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 60000) or {}
  local actions = {}
  for _, r in pairs(responses) do
    for _, a in ipairs(r.result or {}) do table.insert(actions, a) end
  end
  result.actions = actions
  if actions[1] and actions[1].edit then
    local client = vim.lsp.get_client_by_id(client_id)
    vim.lsp.util.apply_workspace_edit(actions[1].edit, client.offset_encoding)
    note("applied")
    note(wait_for_current(buf) and "diagnostics after the edit" or "no diagnostics after the edit")
  end
  result.after = diagnostics(buf)
  result.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)

  local client = vim.lsp.get_client_by_id(client_id)
  client.stop()
  vim.wait(30000, function() return client.is_stopped() end, 20)
  note(client.is_stopped() and "stopped" or "not stopped")
end

local ok, err = pcall(run)
if not ok then result.error = tostring(err) end
local f = assert(io.open(env("MSGAUDIT_OUT"), "w"))
f:write(vim.fn.json_encode(result))
f:close()
vim.cmd("qall!")
