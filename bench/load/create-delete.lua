-- POST a key, then DELETE it: each DELETE takes an id from the keys created so far, so
-- every request names a key that exists; with none waiting, the next request creates one.
local key = os.getenv("BENCH_API_KEY")
local created = {}

request = function()
  local id = table.remove(created)
  if id then
    return wrk.format("DELETE", "/auth/region/api-keys/" .. id, { ["X-API-Key"] = key })
  end
  return wrk.format("POST", "/auth/region/api-keys",
    { ["X-API-Key"] = key, ["Content-Type"] = "application/json" }, '{"description":"bench-flow"}')
end

response = function(status, headers, body)
  if status == 201 then
    local id = body:match('"id":"([0-9a-f-]+)"')
    if id then table.insert(created, id) end
  end
end
