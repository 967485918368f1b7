// How a delegation is seen (issue 26), against a real DNS server standing for a recursive
// resolver and a TLD's server: `parent` asks the parent zone's server without recursion (what
// the registry says) and so sees a delegation to servers that do not answer for the name yet,
// where the resolver's own answer is SERVFAIL; `resolver` takes the resolver's answer.
import { Resolver } from 'node:dns/promises';
import dns2 from 'dns2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parentDelegation, resolverDelegation } from '../../src/ownership/delegation.ts';

const { Packet } = dns2;
let server: ReturnType<typeof dns2.createServer>;
let port = 0;
/** The TLD's delegations (asked without recursion). */
const delegated = new Map<string, string[]>([['lame.example', ['ns1.ours.test', 'ns2.ours.test']]]);
/** What the resolver answers for NS sets (asked with recursion): a name's own servers' answer. */
const childSide = new Map<string, string[] | 'servfail'>([
  ['lame.example', 'servfail'],
  ['served.example', ['ns1.ours.test', 'ns2.ours.test']],
]);

beforeAll(async () => {
  server = dns2.createServer({
    udp: true,
    handle: (req, send) => {
      const response = Packet.createResponseFromRequest(req);
      const [question] = req.questions;
      const name = question!.name.toLowerCase();
      const type = (question as { type: number }).type;
      const ns = (owner: string, target: string) => ({ name: owner, type: Packet.TYPE.NS, class: Packet.CLASS.IN, ttl: 1, ns: target }) as never;
      if (req.header.rd) {
        if (name === 'example' && type === Packet.TYPE.NS) response.answers.push(ns(question!.name, 'a.tld.test'));
        else if (name === 'a.tld.test' && type === Packet.TYPE.A) response.answers.push({ name: question!.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 1, address: '127.0.0.1' } as never);
        else if (name === 'broken.example') response.header.rcode = 2;
        else {
          const seen = childSide.get(name);
          if (seen === 'servfail') response.header.rcode = 2;
          else if (seen && type === Packet.TYPE.NS) for (const t of seen) response.answers.push(ns(question!.name, t));
          else if (!seen) response.header.rcode = 3;
        }
      } else if (delegated.has(name)) for (const t of delegated.get(name)!) response.authorities.push(ns(question!.name, t));
      else response.header.rcode = 3;
      void send(response);
    },
  });
  port = (await server.listen({ udp: { port: 0, address: '127.0.0.1' } })).udp!.port;
});

afterAll(async () => {
  await server?.close();
});

const resolver = () => {
  const r = new Resolver({ timeout: 1000, tries: 1 });
  r.setServers([`127.0.0.1:${port}`]);
  return r;
};

describe('delegations', () => {
  it('parent: the TLD\'s referral, even where the resolver has no answer; none where the TLD says NXDOMAIN; nothing when the parent cannot be found', async () => {
    const lookup = parentDelegation(resolver(), { port, timeoutMs: 1000 });
    expect(await lookup('lame.example')).toEqual(['ns1.ours.test', 'ns2.ours.test']);
    expect(await lookup('unknown.example')).toEqual([]);
    // Under a name the resolver cannot answer for: no parent found, so nothing definite.
    expect(await lookup('x.broken.example')).toBeUndefined();
  });

  it('resolver: the resolver\'s answer, which says nothing for a name whose servers do not answer (a pending claim delegated to us)', async () => {
    const lookup = resolverDelegation(resolver());
    expect(await lookup('served.example')).toEqual(['ns1.ours.test', 'ns2.ours.test']);
    expect(await lookup('lame.example')).toBeUndefined();
    expect(await lookup('unknown.example')).toEqual([]);
  });
});
