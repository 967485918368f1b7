// NOTIFY (RFC 1996) to the secondaries of every zone that changes: one UDP message per secondary
// address, signed with its TSIG key, sent again (1 s, doubling to 60 s) until answered; a newer
// change of the zone replaces the one waiting. Bounded: at most MAX_PENDING notices wait at once
// (past that the oldest are dropped: the secondaries' own refresh timers still find the change).
// Sent from the name server's own address per family (see notify-source.ts): a secondary's ACL
// names it.
import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import { notifyMessage, OPCODE_NOTIFY } from './messages.ts';
import type { NotifySources } from './notify-source.ts';
import type { Secondaries, Secondary } from './secondaries.ts';
import { sign, verifyResponse } from './tsig.ts';
import type { RRset } from '../zone/types.ts';

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;
const MAX_PENDING = 10_000;

interface Pending {
  zone: string;
  address: string;
  port: number;
  secondary: Secondary;
  soa: RRset;
  id: number;
  mac: Buffer;
  attempts: number;
  timer?: NodeJS.Timeout;
  sentAt: number;
}

export class NotifySender {
  private v4: Socket | undefined;
  private v6: Socket | undefined;
  /** By zone, address and port. */
  private readonly pending = new Map<string, Pending>();
  private readonly byId = new Map<number, Pending>();
  sent = 0;
  answered = 0;
  /** Answer times (ms), the latest first dropped past 1,000: for the figures. */
  readonly answerMs: number[] = [];

  constructor(
    private readonly secondaries: Secondaries,
    private readonly log: Logger,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
    /** The first wait for an answer (doubling to MAX_RETRY_MS): shorter in tests. */
    private readonly firstRetryMs = FIRST_RETRY_MS,
    /** The source address per family (absent: the wildcard, the kernel's choice). */
    private readonly sources: NotifySources = {},
  ) {}

  private socket(address: string): Socket {
    const six = isIPv6(address);
    let socket = six ? this.v6 : this.v4;
    if (!socket) {
      const made = createSocket(six ? 'udp6' : 'udp4');
      const source = six ? this.sources.v6 : this.sources.v4;
      // Sends wait for the bind (dgram queues them); one that fails (an address not on this host)
      // drops them: the socket is made again at the next retry.
      if (source) made.bind(0, source);
      made.on('message', (message) => this.onAnswer(message));
      made.on('error', (error) => {
        this.log.warn({ err: error, source: source ?? 'any' }, 'notify: socket error (sent again at the next retry)');
        if (this.v4 === made) this.v4 = undefined;
        if (this.v6 === made) this.v6 = undefined;
        made.close();
      });
      made.unref();
      socket = made;
      if (six) this.v6 = socket;
      else this.v4 = socket;
    }
    return socket;
  }

  /** A zone changed (its SOA as now served): tells every secondary that takes it. */
  changed(zone: string, soa: RRset, catalog = false): void {
    for (const secondary of this.secondaries.takers(zone, catalog)) {
      for (const address of secondary.addresses) {
        const key = `${zone}\n${address}\n${secondary.port}`;
        const old = this.pending.get(key);
        if (old) this.forget(key, old);
        if (this.pending.size >= MAX_PENDING) {
          const [oldestKey, oldest] = this.pending.entries().next().value!;
          this.forget(oldestKey, oldest);
        }
        const entry: Pending = { zone, address, port: secondary.port, secondary, soa, id: 0, mac: Buffer.alloc(0), attempts: 0, sentAt: 0 };
        this.pending.set(key, entry);
        this.send(key, entry);
      }
    }
  }

  private freeId(): number {
    for (;;) {
      const id = Math.floor(Math.random() * 65536);
      if (!this.byId.has(id)) return id;
    }
  }

  private send(key: string, entry: Pending): void {
    if (entry.id) this.byId.delete(entry.id);
    entry.id = this.freeId();
    const signed = sign(notifyMessage(entry.id, entry.zone, entry.soa), entry.secondary.key, this.now());
    entry.mac = signed.mac;
    this.byId.set(entry.id, entry);
    entry.attempts++;
    if (entry.sentAt === 0) entry.sentAt = performance.now();
    this.sent++;
    this.socket(entry.address).send(signed.message, entry.port, entry.address);
    const delay = Math.min(MAX_RETRY_MS, this.firstRetryMs * 2 ** (entry.attempts - 1));
    entry.timer = setTimeout(() => this.send(key, entry), delay);
    entry.timer.unref();
  }

  private forget(key: string, entry: Pending): void {
    clearTimeout(entry.timer);
    this.byId.delete(entry.id);
    this.pending.delete(key);
  }

  private onAnswer(message: Buffer): void {
    if (message.length < 12 || !(message[2]! & 0x80) || ((message[2]! >> 3) & 0xf) !== OPCODE_NOTIFY) return;
    const entry = this.byId.get(message.readUInt16BE(0));
    if (!entry) return;
    // Only an answer signed with the secondary's key counts (anyone can send a datagram).
    if (!verifyResponse(message, entry.secondary.key, entry.mac, this.now())) return;
    this.answered++;
    this.answerMs.push(performance.now() - entry.sentAt);
    if (this.answerMs.length > 1000) this.answerMs.shift();
    this.forget(`${entry.zone}\n${entry.address}\n${entry.port}`, entry);
  }

  /** Notices still waiting for an answer. */
  get waiting(): number {
    return this.pending.size;
  }

  close(): void {
    for (const [key, entry] of this.pending) this.forget(key, entry);
    this.v4?.close();
    this.v6?.close();
    this.v4 = this.v6 = undefined;
  }
}
