// The Redis store's compare-and-commit script, kept in TypeScript so it ships with the code.
// Atomic compare-and-commit for the Redis store (one script call = one revision).
// KEYS[1] revision counter, KEYS[2] change stream, KEYS[3..] the keys the plan names by index.
// ARGV[1] the plan as JSON; it holds only our own metadata (key indexes, domain names, ids).
// Every value that may carry a customer's text is a separate ARGV entry, named by its index
// (a = argument), and is never decoded or searched by the script: cjson would choke on some
// strings, and a text substitution would rewrite a customer's data.
//   checks: { {k=i, a=j} | {k=i, absent=true} }     the documents read before computing
//   limit:  { k=i, max=n } or nil                    a sorted set that must hold fewer than max
//   overlap: { owners=i, tree=i, owner=n, rev=s, ancestors={...} } or nil
//            refuse (-3) when an ancestor in the owners hash, or a name under `rev` in the tree
//            set ("reversed.name.|name"), belongs to another owner
//   ops:    { {op='set', k=i, a=j} | {op='setrev', k=i, a=j, b=j2} (ARGV[j] .. revision .. ARGV[j2])
//           | {op='del', k=i} | {op='zadd'|'zrem', k=i, s=score, m=member}
//           | {op='hset', k=i, f=field, m=value} | {op='hdel', k=i, f=field}
//           | {op='hsetv', k=i, f=field, a=j} | {op='zaddv'|'zremv', k=i, a=j} (values from ARGV)
//           | {op='rename', k=i, t=i2} } (KEYS[t] becomes what KEYS[k] holds, or goes when it holds nothing)
//           | {op='swap', k=i, t=i2} } (the same for a large staged copy: the old value freed in the
//             background (UNLINK), the copy's expiry removed)
//   change: { kind=..., key=..., op=..., at=..., bytes=n }
//   detail: j or nil — ARGV[j] kept in the details hash KEYS[details] under the revision, as
//   given (a record difference: customer text, never decoded here); the one `retention`
//   revisions older is dropped
//   retention: stream length to keep;  nodes: index of the nodes-revision key (node changes)
//   mark: index of this commit's mark (a key named by a random id, kept markMs): the revision it
//   took. A script run again with the same mark (a commit sent twice) returns that revision and
//   writes nothing; a client whose answer was lost reads the mark to learn whether it was made.
// Returns the new revision, -1 when a checked document changed (retry), -2 at the limit,
// -3 on an overlap with another owner's domain.
export const COMMIT_SCRIPT = `
local plan = cjson.decode(ARGV[1])
if plan.mark then
  local done = redis.call('GET', KEYS[plan.mark])
  if done then return tonumber(done) end
end
for _, c in ipairs(plan.checks) do
  local current = redis.call('GET', KEYS[c.k])
  if c.absent then
    if current then return -1 end
  elseif current ~= ARGV[c.a] then
    return -1
  end
end
if plan.limit then
  if redis.call('ZCARD', KEYS[plan.limit.k]) >= plan.limit.max then return -2 end
end
local o = plan.overlap
if o then
  local owner = tostring(o.owner)
  if #o.ancestors > 0 then
    local owners = redis.call('HMGET', KEYS[o.owners], unpack(o.ancestors))
    for _, v in ipairs(owners) do
      if v and v ~= owner then return -3 end
    end
  end
  local below = redis.call('ZRANGEBYLEX', KEYS[o.tree], '[' .. o.rev, '[' .. o.rev .. '\\255')
  for _, m in ipairs(below) do
    local name = string.sub(m, string.find(m, '|', 1, true) + 1)
    local v = redis.call('HGET', KEYS[o.owners], name)
    if v and v ~= owner then return -3 end
  end
end
local rev = redis.call('INCR', KEYS[1])
for _, op in ipairs(plan.ops) do
  local key = KEYS[op.k]
  if op.op == 'set' then
    redis.call('SET', key, ARGV[op.a])
  elseif op.op == 'setrev' then
    redis.call('SET', key, ARGV[op.a] .. rev .. ARGV[op.b])
  elseif op.op == 'del' then
    redis.call('DEL', key)
  elseif op.op == 'zadd' then
    redis.call('ZADD', key, op.s, op.m)
  elseif op.op == 'zrem' then
    redis.call('ZREM', key, op.m)
  elseif op.op == 'hset' then
    redis.call('HSET', key, op.f, op.m)
  elseif op.op == 'hdel' then
    redis.call('HDEL', key, op.f)
  elseif op.op == 'hsetv' then
    redis.call('HSET', key, op.f, ARGV[op.a])
  elseif op.op == 'zaddv' then
    redis.call('ZADD', key, 0, ARGV[op.a])
  elseif op.op == 'zremv' then
    redis.call('ZREM', key, ARGV[op.a])
  elseif op.op == 'rename' then
    if redis.call('EXISTS', key) == 1 then redis.call('RENAME', key, KEYS[op.t]) else redis.call('DEL', KEYS[op.t]) end
  elseif op.op == 'swap' then
    redis.call('UNLINK', KEYS[op.t])
    if redis.call('EXISTS', key) == 1 then
      redis.call('RENAME', key, KEYS[op.t])
      redis.call('PERSIST', KEYS[op.t])
    end
  end
end
plan.change.revision = rev
redis.call('XADD', KEYS[2], 'MAXLEN', '~', plan.retention, rev .. '-0', 'c', cjson.encode(plan.change))
if plan.detail then redis.call('HSET', KEYS[plan.details], rev, ARGV[plan.detail]) end
if rev > plan.retention then redis.call('HDEL', KEYS[plan.details], rev - plan.retention) end
if plan.nodes then redis.call('SET', KEYS[plan.nodes], rev) end
if plan.mark then redis.call('SET', KEYS[plan.mark], rev, 'PX', plan.markMs) end
return rev
`;

/** Builds the tree set's and owners hash's entries once, for data written before they existed. */
export const INDEX_ZONE_TREE_SCRIPT = `
local names = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, name in ipairs(names) do
  local doc = redis.call('GET', ARGV[1] .. name)
  if doc then
    local owner = string.match(doc, '"ownerId":(%d+)')
    local labels = {}
    for label in string.gmatch(name, '[^.]+') do table.insert(labels, 1, label) end
    redis.call('HSET', KEYS[2], name, owner)
    redis.call('ZADD', KEYS[3], 0, table.concat(labels, '.') .. '.|' .. name)
  end
end
redis.call('SET', KEYS[4], 1)
return #names
`;
