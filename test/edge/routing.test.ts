// Host → domain, without sockets: protected names, mask wildcards, exact before wildcard, the
// longest wildcard first, disabled and unbound domains, and names that are no host.
import { describe, expect, it } from 'vitest';
import { hostName, RoutingTable } from '../../src/edge/routing.ts';
import { makeZone } from '../helpers/dns-fixture.ts';

const domain = (name: string, fields: Record<string, unknown> = {}) => makeZone({ domain: name, ...fields }, []).domain;

describe('edge routing', () => {
  const table = new RoutingTable(2);
  table.put(domain('shop.example', { mask: 'www' }));
  table.put(domain('all.example', { mask: '*' }));
  table.put(domain('inner.all.example', { mask: 'www' }));
  table.put(domain('dev.example', { mask: '*.dev,api' }));
  table.put(domain('off.example', { enabled: false }));
  table.put(domain('elsewhere.example', { bind_node: [1] }));
  table.put(domain('here.example', { bind_node: [1, 2] }));

  it.each([
    ['shop.example', 'shop.example'],
    ['www.shop.example', 'shop.example'],
    ['all.example', 'all.example'],
    ['anything.all.example', 'all.example'],
    ['deep.name.all.example', 'all.example'],
    ['inner.all.example', 'inner.all.example'],
    ['www.inner.all.example', 'inner.all.example'],
    ['x.dev.dev.example', 'dev.example'],
    ['api.dev.example', 'dev.example'],
    ['here.example', 'here.example'],
  ])('%s → %s', (host, expected) => {
    const route = table.route(host);
    expect(route.kind).toBe('domain');
    expect(route.kind === 'domain' && route.domain.domain).toBe(expected);
  });

  it.each([
    ['mail.shop.example', 'unknown'],
    ['other.inner.all.example', 'domain'],
    ['dev.dev.example', 'unknown'],
    ['nothing.example', 'unknown'],
    ['off.example', 'disabled'],
    ['elsewhere.example', 'not-bound'],
  ])('%s → %s', (host, kind) => {
    expect(table.route(host).kind).toBe(kind);
  });

  it('a name under a nested zone that the inner zone does not protect falls to the outer wildcard', () => {
    const route = table.route('other.inner.all.example');
    expect(route.kind === 'domain' && route.domain.domain).toBe('all.example');
  });

  it('forgets a removed domain and follows a changed mask', () => {
    const t = new RoutingTable();
    t.put(domain('m.example', { mask: 'www' }));
    expect(t.route('www.m.example').kind).toBe('domain');
    t.put(domain('m.example', { mask: 'shop' }));
    expect(t.route('www.m.example').kind).toBe('unknown');
    expect(t.route('shop.m.example').kind).toBe('domain');
    t.remove('m.example');
    expect(t.route('m.example').kind).toBe('unknown');
    expect(t.size).toBe(0);
  });

  it('reads Host headers: case, port, final dot; IP literals and empty names are no host', () => {
    expect(hostName('WWW.Shop.Example:8081')).toBe('www.shop.example');
    expect(hostName('shop.example.')).toBe('shop.example');
    expect(hostName('[2001:db8::1]:8081')).toBeUndefined();
    expect(hostName('')).toBeUndefined();
    expect(hostName(undefined)).toBeUndefined();
  });
});
