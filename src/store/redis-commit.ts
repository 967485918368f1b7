// The Redis store's compare-and-commit script, kept in TypeScript so it ships with the code.
// Atomic compare-and-commit for the Redis store (one script call = one revision).
// KEYS[1] revision counter, KEYS[2] change stream, KEYS[3..] the keys the plan names by index.
// ARGV[1] the plan as JSON:
//   checks: { {k=i, v=expected string or false} }   the documents read before computing
//   limit:  { k=i, max=n } or nil                    a sorted set that must hold fewer than max
//   ops:    { {op='set'|'del'|'zadd'|'zrem', k=i, v=value, s=score} }
//   change: { kind=..., key=..., op=..., at=... }
//   retention: stream length to keep;  nodes: index of the nodes-revision key (node changes)
// Returns the new revision, -1 when a checked document changed (retry), -2 at the limit.
export const COMMIT_SCRIPT = `
local plan = cjson.decode(ARGV[1])
for _, c in ipairs(plan.checks) do
  local current = redis.call('GET', KEYS[c.k])
  if c.v == false then
    if current then return -1 end
  elseif current ~= c.v then
    return -1
  end
end
if plan.limit then
  if redis.call('ZCARD', KEYS[plan.limit.k]) >= plan.limit.max then return -2 end
end
local rev = redis.call('INCR', KEYS[1])
for _, o in ipairs(plan.ops) do
  local key = KEYS[o.k]
  if o.op == 'set' then
    redis.call('SET', key, (string.gsub(o.v, '"__REVISION__"', tostring(rev))))
  elseif o.op == 'del' then
    redis.call('DEL', key)
  elseif o.op == 'zadd' then
    redis.call('ZADD', key, o.s, o.v)
  elseif o.op == 'zrem' then
    redis.call('ZREM', key, o.v)
  end
end
plan.change.revision = rev
redis.call('XADD', KEYS[2], 'MAXLEN', '~', plan.retention, rev .. '-0', 'c', cjson.encode(plan.change))
if plan.nodes then redis.call('SET', KEYS[plan.nodes], rev) end
return rev
`;
