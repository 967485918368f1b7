// The DS lookup reads an answer only from the server it asked: a reply with the right ID sent
// from another address (a spoofer on the path's port) is dropped, and the lookup times out
// rather than taking it as the parent's DS set.
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, describe, expect, it } from 'vitest';
import { askOnce } from '../../src/ownership/parent-ds.ts';
import { freePort } from '../helpers/free-port.ts';

const sockets: Socket[] = [];
afterAll(() => sockets.forEach((s) => s.close()));

const bound = async (address: string, port: number): Promise<Socket> => {
  const socket = createSocket('udp4');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.bind(port, address, resolve));
  return socket;
};

/** An answer to `query` (its ID and question) with rcode NXDOMAIN and no records. */
const nxdomain = (query: Buffer) => {
  const answer = Buffer.from(query);
  answer.writeUInt16BE(0x8183, 2);
  return answer;
};

describe('the parent DS lookup', () => {
  it('takes an answer from the server it asked', async () => {
    const port = await freePort();
    const server = await bound('127.0.0.2', port);
    server.on('message', (query, from) => server.send(nxdomain(query), from.port, from.address));
    expect(await askOnce('127.0.0.2', port, 'child.example', 43, false, 2000)).toMatchObject({ rcode: 3 });
  });

  it('drops an answer with the right ID from another address, on the same port', async () => {
    const port = await freePort();
    const server = await bound('127.0.0.4', port);
    const spoofer = await bound('127.0.0.5', port);
    // The asked server says nothing; another address answers in its place.
    server.on('message', (query, from) => spoofer.send(nxdomain(query), from.port, from.address));
    expect(await askOnce('127.0.0.4', port, 'child.example', 43, false, 500)).toBeUndefined();
  });
});
