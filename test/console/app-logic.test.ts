// The console's pure parts, in Node: hash routes (hostile ones included) and how the API's field
// errors are matched to a form's fields.
import { describe, expect, it } from 'vitest';
import { href, parseRoute } from '../../src/console/app/router.ts';
import { Problem } from '../../src/console/app/api.ts';
import { eventDetails } from '../../src/console/app/event-words.ts';

describe('console routes', () => {
  it('reads every page, with the domain decoded', () => {
    expect(parseRoute('')).toEqual({ page: 'domains' });
    expect(parseRoute('#/domains')).toEqual({ page: 'domains' });
    expect(parseRoute('#/domains/example.org')).toEqual({ page: 'domain', domain: 'example.org', tab: 'settings' });
    expect(parseRoute('#/domains/xn--bcher-kva.example/records')).toEqual({ page: 'domain', domain: 'xn--bcher-kva.example', tab: 'records' });
    for (const page of ['iplists', 'certificates', 'events', 'webhooks'] as const) expect(parseRoute(`#/${page}`)).toEqual({ page });
    expect(parseRoute(href('domains', 'a b.example', 'uptime'))).toEqual({ page: 'domain', domain: 'a b.example', tab: 'uptime' });
  });

  it('anything else is "missing", never a page with a made-up tab', () => {
    for (const hash of ['#/nowhere', '#/domains/example.org/secrets', '#/iplists/1', '#/events/x/y', '#/__proto__', '#/domains/example.org/constructor']) expect(parseRoute(hash).page, hash).toBe('missing');
  });
});

describe('field errors from problem documents', () => {
  const problem = new Problem(400, 'VALIDATION', 'bad', [
    { field: 'ips.3', message: 'not an address' },
    { field: 'ips.7', message: 'a prefix with host bits' },
    { field: 'ttl', message: 'at least 30' },
    { field: 'tags', message: 'too many' },
  ]);

  it('a list field shows its items’ errors; a field shows only its own', () => {
    expect(problem.fieldMessage('ips')).toBe('not an address; a prefix with host bits');
    expect(problem.fieldMessage('ttl')).toBe('at least 30');
    expect(problem.fieldMessage('tag')).toBeUndefined();
    expect(problem.fieldMessage('value')).toBeUndefined();
  });
});

describe("the console's copies of the API's lists (its browser code imports nothing of the server)", () => {
  it('names every event type and every record type the API has, and no other', async () => {
    const app = await import('../../src/console/app/types.ts');
    const { EVENT_TYPES } = await import('../../src/model/event.ts');
    const { RECORD_TYPES } = await import('../../src/model/record-types.ts');
    expect([...app.EVENT_TYPES]).toEqual([...EVENT_TYPES]);
    expect([...app.RECORD_TYPES].sort()).toEqual(Object.values(RECORD_TYPES).map((t) => t.name).sort());
  });
});

describe('event details in words', () => {
  it('says nested problems and node states as a person reads them, never [object Object] or raw JSON', () => {
    const failed = eventDetails({ task: 'tk_1', attempts: 2, error: 'the CA refused', problems: [{ name: 'www.example.org', type: 'urn:ietf:params:acme:error:dns', detail: 'no A record' }] });
    expect(failed).toBe('task: tk_1 · attempts: 2 · error: the CA refused · why: www.example.org: no A record');
    const down = eventDetails({ state: 'down', since: '2026-11-28T10:00:00.000Z', nodes: { '0': 'down', '3': 'up' } });
    expect(down).toBe('state: down · since: 2026-11-28T10:00:00.000Z · seen from: this server down, edge node 3 up');
    const nested = eventDetails({ seen: { nameservers: ['ns1.example', 'ns2.example'], delegation: true }, not_after: null });
    expect(nested).toBe('seen: nameservers ns1.example; ns2.example, delegation true · valid until: —');
    for (const text of [failed, down, nested]) {
      expect(text).not.toContain('[object Object]');
      expect(text).not.toMatch(/[{}"]/);
    }
  });
});
