// DS at delegations, in-process: a DS question at a cut answered from the parent side even when the
// child zone is served here too (RFC 4035 §3.1.4.1), the NSEC at a cut listing only what the
// parent is authoritative for (NS, DS: never the child's or occluded types, RFC 4035 §2.3), and a
// DS value with an algorithm no one has assigned refused.
import { describe, expect, it } from 'vitest';
import { answer } from '../../src/dns/engine/answer.ts';
import { SignatureCache } from '../../src/dns/signer/signature-cache.ts';
import { signAnswer } from '../../src/dns/signer/sign-answer.ts';
import { typeBitmap } from '../../src/dns/signer/nsec.ts';
import { QTYPE, RCODE } from '../../src/dns/wire/constants.ts';
import type { AnswerSpec } from '../../src/dns/chain/context.ts';
import { canonicalRecordValue } from '../../src/model/record-values.ts';
import { TYPE } from '../../src/model/record-types.ts';
import { makeSigningKey } from '../helpers/dnssec-keys.ts';
import { indexWith, makeZone } from '../helpers/dns-fixture.ts';

const parentKey = makeSigningKey(13);
const childKey = makeSigningKey(13);
const DS_VALUE = `${childKey.key_tag} 13 2 ${'ab'.repeat(32)}`;

const index = indexWith([
  makeZone({ domain: 'parent.example', dnssec: true, signing: { keys: [parentKey] } }, [
    { name: 'secure', type: 5, value: 'ns1.secure.parent.example' },
    { name: 'secure', type: 43, value: DS_VALUE },
    { name: 'ns1.secure', type: 1, value: '192.0.2.53' },
    { name: 'insecure', type: 5, value: 'ns1.elsewhere.test' },
    // Occluded by the cut: the parent is not authoritative for it.
    { name: 'insecure', type: 6, value: 'not served' },
    { name: 'hosted', type: 5, value: 'ns1.example.net' },
  ]),
  // Children served by this name server too: a DS question for their apex is the parent's.
  makeZone({ domain: 'secure.parent.example', dnssec: true, signing: { keys: [childKey] } }, [{ name: 'www', type: 1, value: '192.0.2.80' }]),
  makeZone({ domain: 'hosted.parent.example' }, [{ name: 'www', type: 1, value: '192.0.2.81' }]),
]);

function signed(qname: string, qtype: number): AnswerSpec {
  const spec = { ...answer(index, { qname, qtype }, {}), id: 1, rd: false, cd: false, cacheable: true, place: undefined } as unknown as AnswerSpec;
  signAnswer(spec, qname, qtype, { cache: new SignatureCache({ entries: 100, bytes: 1 << 20 }), metrics: { signed: 0 } }, Date.now());
  return spec;
}

const nsecBitmap = (spec: AnswerSpec, owner: string) => {
  const nsec = spec.authority.find((s) => s.type === 47 && s.name === owner);
  const data = (nsec?.rdata[0] as { data: Buffer } | undefined)?.data;
  // After the next name ("\000." + owner, uncompressed: 2 + owner's length + 2 octets): the bitmap.
  return data?.subarray(owner.length + 4).toString('hex');
};

describe('DS at a delegation', () => {
  it('a DS question for a child served here is answered by the parent, authoritatively, signed by the parent', () => {
    const a = answer(index, { qname: 'secure.parent.example', qtype: QTYPE.DS }, {});
    expect(a.rcode).toBe(RCODE.NOERROR);
    expect(a.aa).toBe(true);
    expect(a.answer.map((s) => `${s.name}/${s.type}`)).toEqual(['secure.parent.example/43']);
    expect(a.zones.map((z) => z.apex)).toEqual(['parent.example']);
    const spec = signed('secure.parent.example', QTYPE.DS);
    const rrsig = spec.answer.find((s) => s.type === 46)!;
    // The signer name in the RRSIG is the parent's apex.
    expect((rrsig.rdata[0] as { data: Buffer }).data.includes(Buffer.from('\u0006parent\u0007example\u0000', 'latin1'))).toBe(true);
  });

  it('no DS for a child served here, unsigned: the parent\'s NODATA (its SOA), and an NSEC at the cut with NS only', () => {
    const a = answer(index, { qname: 'hosted.parent.example', qtype: QTYPE.DS }, {});
    expect(a.rcode).toBe(RCODE.NOERROR);
    expect(a.answer).toEqual([]);
    expect(a.authority.map((s) => `${s.name}/${s.type}`)).toEqual(['parent.example/6']);
    const spec = signed('hosted.parent.example', QTYPE.DS);
    expect(nsecBitmap(spec, 'hosted.parent.example')).toBe(typeBitmap([QTYPE.NS, 46, 47]).toString('hex'));
  });

  it('the NSEC at an insecure cut never lists types the parent is not authoritative for', () => {
    const spec = signed('insecure.parent.example', QTYPE.DS);
    expect(spec.answer).toEqual([]);
    expect(nsecBitmap(spec, 'insecure.parent.example')).toBe(typeBitmap([QTYPE.NS, 46, 47]).toString('hex'));
    // In a referral too.
    const referral = signed('www.insecure.parent.example', QTYPE.A);
    expect(nsecBitmap(referral, 'insecure.parent.example')).toBe(typeBitmap([QTYPE.NS, 46, 47]).toString('hex'));
  });

  it('names below a child served here are the child\'s', () => {
    const a = answer(index, { qname: 'www.secure.parent.example', qtype: QTYPE.A }, {});
    expect(a.aa).toBe(true);
    expect(a.zones.map((z) => z.apex)).toEqual(['secure.parent.example']);
    expect(answer(index, { qname: 'secure.parent.example', qtype: QTYPE.SOA }, {}).zones.map((z) => z.apex)).toEqual(['secure.parent.example']);
  });
});

describe('DS values', () => {
  it('refuses an algorithm no one has assigned, and accepts the assigned ones', () => {
    const digest = 'ab'.repeat(32);
    for (const algorithm of [1, 2, 4, 9, 11, 18, 100, 252, 255]) {
      const checked = canonicalRecordValue(TYPE.DS, `1 ${algorithm} 2 ${digest}`, 'parent.example');
      expect(checked.ok, `algorithm ${algorithm}`).toBe(false);
    }
    for (const algorithm of [5, 7, 8, 10, 13, 14, 15, 16, 253, 254]) {
      expect(canonicalRecordValue(TYPE.DS, `1 ${algorithm} 2 ${digest}`, 'parent.example').ok, `algorithm ${algorithm}`).toBe(true);
    }
  });
});
