// What passes to the next hop of a request's or a response's headers (proxy.ts: forwardable):
// hop-by-hop headers and whatever Connection names stay behind, whatever form Connection takes
// (the common values are read without splitting; the rest are split).
import { describe, expect, it } from 'vitest';
import { forwardable } from '../../src/edge/proxy.ts';

describe('headers passed to the next hop', () => {
  it('drops hop-by-hop headers and keeps the rest, also without a Connection header', () => {
    expect(forwardable({ host: 'a.example', 'keep-alive': 'timeout=5', te: 'trailers', 'transfer-encoding': 'chunked', upgrade: 'h2c', expect: '100-continue', accept: '*/*', 'set-cookie': ['a=1', 'b=2'] })).toEqual({
      host: 'a.example',
      accept: '*/*',
      'set-cookie': ['a=1', 'b=2'],
    });
  });

  it('Connection: keep-alive or close (any case) removes itself and any header literally named by it', () => {
    expect(forwardable({ connection: 'keep-alive', etag: '"x"' })).toEqual({ etag: '"x"' });
    expect(forwardable({ connection: 'Keep-Alive', etag: '"x"' })).toEqual({ etag: '"x"' });
    expect(forwardable({ connection: 'close', close: 'named by Connection', etag: '"x"' })).toEqual({ etag: '"x"' });
    expect(forwardable({ connection: 'CLOSE', close: 'named by Connection', etag: '"x"' })).toEqual({ etag: '"x"' });
  });

  it('every header a list in Connection names stays on this hop, however the list is spaced or cased', () => {
    const out = forwardable({ connection: ' X-Private ,close,, x-other', 'x-private': 'secret', 'x-other': 'also', close: 'named', 'x-public': 'ok' });
    expect(out).toEqual({ 'x-public': 'ok' });
  });

  it('a Connection header given twice (an array) names what both name', () => {
    expect(forwardable({ connection: ['x-a', 'x-b'] as unknown as string, 'x-a': '1', 'x-b': '2', 'x-c': '3' })).toEqual({ 'x-c': '3' });
  });
});
