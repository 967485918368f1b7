-- wrk script: each request comes from one of 10,000 clients, named in X-Forwarded-For (the edge
-- under test believes 127.0.0.1 as a trusted proxy). Requests are built once; each call picks the
-- next, so wrk's own cost per request stays as without a script.
local requests = {}
local count = 10000
local next = 0

function init(args)
  for i = 0, count - 1 do
    local address = string.format("10.%d.%d.%d", math.floor(i / 256) % 256, i % 256, 1 + math.floor(i / 65536))
    local headers = {}
    for name, value in pairs(wrk.headers) do headers[name] = value end
    headers["X-Forwarded-For"] = address
    requests[i + 1] = wrk.format(nil, nil, headers)
  end
end

function request()
  next = next % count + 1
  return requests[next]
end
