// How many answers a name server gives for a name's A records, over one UDP socket shared by a
// benchmark's many queries (0 after 500 ms without a reply): what the feed benchmarks poll with.
import { createSocket } from 'node:dgram';
import { decode, dns2Query } from '../../test/helpers/dns2-packets.ts';

export interface AnswerCounter {
  answers(port: number, name: string): Promise<number>;
  close(): void;
}

export function answerCounter(): AnswerCounter {
  const udp = createSocket('udp4');
  const waiting = new Map<number, (b: Buffer) => void>();
  udp.on('message', (msg) => waiting.get(msg.readUInt16BE(0))?.(msg));
  let nextId = 1;
  return {
    answers: (port, name) => {
      const id = nextId++ & 0xffff;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          resolve(0);
        }, 500);
        waiting.set(id, (msg) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(decode(msg).answers.length);
        });
        udp.send(dns2Query(name, 1, { id }), port, '127.0.0.1');
      });
    },
    close: () => udp.close(),
  };
}
