// A registry and a recursive resolver in one real DNS server on loopback, for ownership tests
// (PALISADE_DELEGATION_RESOLVER and PALISADE_DELEGATION_PARENT_PORT point at it):
// - asked with recursion (as our resolver), it answers as a recursive resolver would: the TLD's
//   server ("ns.registry.test" for `example`), TXT records from `txt`, and SERVFAIL for the NS set
//   of a name delegated to servers that do not answer for it (ours, while a claim is pending);
// - asked without recursion (as the TLD's server), it gives the delegation in `ns`, or NXDOMAIN.
// A name in `unanswered` gets SERVFAIL from the TLD's server (its servers unreachable for a
// while): a look at its delegation sees nothing definite.
import dns2 from 'dns2';

const { Packet } = dns2;

export interface RegistryDns {
  port: number;
  /** The registry's delegations: NS names by domain. */
  ns: Map<string, string[]>;
  /** TXT strings by name, as the world's DNS answers them. */
  txt: Map<string, string[]>;
  /** Names whose delegation the TLD's server does not answer for now. */
  unanswered: Set<string>;
  close(): Promise<void>;
}

export async function startRegistryDns(): Promise<RegistryDns> {
  const ns = new Map<string, string[]>();
  const txt = new Map<string, string[]>();
  const unanswered = new Set<string>();
  const server = dns2.createServer({
    udp: true,
    handle: (req, send) => {
      const response = Packet.createResponseFromRequest(req);
      const [question] = req.questions;
      const name = question!.name.toLowerCase();
      const type = (question as { type: number }).type;
      const answer = (data: Record<string, unknown>) => response.answers.push({ name: question!.name, class: Packet.CLASS.IN, ttl: 1, ...data } as never);
      if (req.header.rd) {
        if (name === 'example' && type === Packet.TYPE.NS) answer({ type: Packet.TYPE.NS, ns: 'ns.registry.test' });
        else if (name === 'ns.registry.test' && type === Packet.TYPE.A) answer({ type: Packet.TYPE.A, address: '127.0.0.1' });
        else if (type === Packet.TYPE.TXT && txt.has(name)) for (const data of txt.get(name)!) answer({ type: Packet.TYPE.TXT, data });
        else if (type === Packet.TYPE.NS && ns.has(name)) response.header.rcode = 2;
        else if (name !== 'ns.registry.test') response.header.rcode = 3;
      } else {
        response.header.aa = 0;
        if (unanswered.has(name)) response.header.rcode = 2;
        else if (type === Packet.TYPE.NS && ns.has(name)) for (const target of ns.get(name)!) response.authorities.push({ name: question!.name, type: Packet.TYPE.NS, class: Packet.CLASS.IN, ttl: 1, ns: target } as never);
        else response.header.rcode = 3;
      }
      void send(response);
    },
  });
  const listening = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return { port: listening.udp!.port, ns, txt, unanswered, close: () => server.close() };
}
