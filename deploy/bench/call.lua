-- wrk script: POST a JSON-RPC tools/call of x_md_get_post to /mcp (MCP 2025-11-25).
-- Each call makes one upstream GET, parses the FxTwitter JSON and renders Markdown:
-- the allocation-heavy path of the server.
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x_md_get_post",'
  .. '"arguments":{"url":"https://x.com/demo_author/status/2087208847298015232","thread":"off"}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"

-- Count answers that are not a successful tool result, so a broken run cannot pass as fast.
local bad = 0
response = function(status, headers, body)
  if status ~= 200 or not body:find('"isError":false', 1, true) then
    bad = bad + 1
  end
end
done = function(summary, latency, requests)
  io.write(string.format("bad answers: %d\n", bad))
end
