// The per-connection counts of the HTTP/2 front (front/h2-flood.ts), without sockets: frames per
// second, and streams the client opened that never became requests.
import { describe, expect, it } from 'vitest';
import { FloodCoolOff, FrameRates, RefusedStreams } from '../../src/edge/front/h2-flood.ts';

describe('FrameRates', () => {
  it('is past a bound only above it within one second, and counts several at once', () => {
    const rates = new FrameRates({ resets: 100 });
    expect(rates.count('resets', 0, 100)).toBe(false);
    expect(rates.count('resets', 500)).toBe(true);
    expect(rates.count('resets', 1500, 100)).toBe(false);
  });
});

describe('RefusedStreams', () => {
  it('counts the odd stream ids opened that gave no request, once each', () => {
    const refused = new RefusedStreams();
    // Streams 1–9 opened, 2 became requests: 3 refused.
    refused.request();
    refused.request();
    expect(refused.since(9)).toBe(3);
    // Nothing new opened: nothing more.
    expect(refused.since(9)).toBe(0);
    // 11–19 opened, all requests.
    for (let i = 0; i < 5; i++) refused.request();
    expect(refused.since(19)).toBe(0);
  });

  it('a header block still arriving at one look is made up for at the next', () => {
    const refused = new RefusedStreams();
    // Stream 1 opened, its request not yet given.
    expect(refused.since(1)).toBe(1);
    refused.request();
    refused.request();
    // Stream 3 opened and given, stream 1 given late: the early count is taken back.
    expect(refused.since(3)).toBe(0);
    refused.request();
    expect(refused.since(5)).toBe(0);
  });
});

describe('FloodCoolOff', () => {
  it('refuses a struck peer until its time is out, and no one else; forgets the oldest past its size', () => {
    const coolOff = new FloodCoolOff(10_000, 2);
    expect(coolOff.refuses('192.0.2.1', 0)).toBe(false);
    coolOff.strike('192.0.2.1', 0);
    expect(coolOff.refuses('192.0.2.1', 9_999)).toBe(true);
    expect(coolOff.refuses('192.0.2.2', 9_999)).toBe(false);
    expect(coolOff.refuses('192.0.2.1', 10_000)).toBe(false);
    coolOff.strike('192.0.2.1', 20_000);
    coolOff.strike('192.0.2.2', 20_000);
    coolOff.strike('192.0.2.3', 20_000);
    expect([coolOff.refuses('192.0.2.1', 20_001), coolOff.refuses('192.0.2.2', 20_001), coolOff.refuses('192.0.2.3', 20_001)]).toEqual([false, true, true]);
  });
});
