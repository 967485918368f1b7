// PTR (RFC 1035 §3.3.12): a host name, absolute, stored without its final dot like CNAME targets.
import { normaliseTargetName } from '../names.ts';
import { fail, fqdn, nameWire } from './fields.ts';
import type { ValueType } from './value-type.ts';

export const PTR: ValueType = {
  name: 'PTR',
  code: 12,
  help: 'PTR: a host name (in reverse zones under in-addr.arpa or ip6.arpa: the name of the address).',
  nameFields: [0],
  canonical(value, zone) {
    const name = normaliseTargetName(value.trim(), zone);
    return name.ok ? name : fail(`must be a host name: ${name.message}`);
  },
  zoneData: (value) => fqdn(value),
  rdata: (value) => nameWire(value),
};
