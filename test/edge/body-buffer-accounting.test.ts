// The body buffer budget's bookkeeping alone (protect/body-buffer-budget.ts): shares per client
// network, the node's whole, one large body let in alone, and every reservation given back once;
// and its two settings as the configuration reads them.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { BodyBufferBudget } from '../../src/edge/protect/body-buffer-budget.ts';

const budget = () => new BodyBufferBudget({ nodeBytes: 1000, perClientBytes: 400, prefixV4: 32, prefixV6: 64 });

describe('body buffer budget', () => {
  it('bounds each client network and the node, and gives back exactly what was taken, once', () => {
    const b = budget();
    const first = b.reserve('192.0.2.1', 300);
    expect(first.ok).toBe(true);
    expect(b.reserve('192.0.2.1', 200)).toEqual({ ok: false, reason: 'client' });
    // One /64: another address of it is the same client.
    const v6 = b.reserve('2001:db8::1', 400);
    expect(v6.ok).toBe(true);
    expect(b.reserve('2001:db8::ffff', 1)).toEqual({ ok: false, reason: 'client' });
    expect(b.reserve('2001:db8:0:1::1', 301)).toEqual({ ok: false, reason: 'node' });
    expect(b.reserved).toBe(700);
    if (!first.ok || !v6.ok) throw new Error('reserved above');
    first.release();
    first.release();
    expect(b.reserved).toBe(400);
    expect(b.heldBy('192.0.2.1')).toBe(0);
    v6.release();
    expect(b.reserved).toBe(0);
    expect(b.heldBy('2001:db8::1')).toBe(0);
  });

  it('lets one body larger than a share in while its client (and the node) hold nothing else', () => {
    const b = budget();
    const large = b.reserve('192.0.2.1', 5000);
    expect(large.ok).toBe(true);
    expect(b.reserve('192.0.2.2', 1)).toEqual({ ok: false, reason: 'node' });
    if (large.ok) large.release();
    expect(b.reserve('192.0.2.2', 1).ok).toBe(true);
  });
});

describe('body buffer settings', () => {
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).problems;
    }
  };

  it('reads MiB, 256 and 32 by default, and refuses a client part larger than the whole or a value that is no count', () => {
    expect(loadConfig({}).edge).toMatchObject({ bodyBufferBytes: 256 * 1_048_576, bodyBufferPerClientBytes: 32 * 1_048_576 });
    expect(loadConfig({ PALISADE_EDGE_BODY_BUFFER_MB: '64', PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB: '8' }).edge).toMatchObject({ bodyBufferBytes: 64 * 1_048_576, bodyBufferPerClientBytes: 8 * 1_048_576 });
    expect(problemsOf({ PALISADE_EDGE_BODY_BUFFER_MB: '16', PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB: '32' }).join('\n')).toMatch(/PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB=32: must not exceed PALISADE_EDGE_BODY_BUFFER_MB \(16\)/);
    expect(problemsOf({ PALISADE_EDGE_BODY_BUFFER_MB: 'lots' }).join('\n')).toMatch(/PALISADE_EDGE_BODY_BUFFER_MB/);
    expect(problemsOf({ PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB: '0' }).join('\n')).toMatch(/PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB/);
  });
});
