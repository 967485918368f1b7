// The transfer stage: zone transfers, NOTIFY and TSIG-signed messages go to the responder, which
// answers them (a transfer over TCP as a stream of messages, made as the listener sends them) or
// hands back what it does not take; the
// questions inside a transfer (a signed SOA query) are answered through the chain without it. Only
// on the full path: the cache never holds a transfer's or a signed answer.
import type { DnsStage } from '../chain/stage.ts';
import type { TransferResponder } from './responder.ts';

export function transferStage(responder: TransferResponder | undefined): DnsStage {
  if (!responder) return { name: 'transfers', cached: null, full: null };
  return {
    name: 'transfers',
    cached: null,
    full(ctx, next) {
      if (!ctx.transfers || !responder.wants(ctx.packet)) return next(ctx);
      const messages = responder.respond(ctx.packet, ctx.transport, ctx.client.address, (inner) => ctx.ask(inner));
      if (!messages) return next(ctx);
      if (Array.isArray(messages)) {
        ctx.messages = messages;
        ctx.response = messages[0];
      } else if (ctx.transport === 'tcp') ctx.messages = messages;
      // A transfer is TCP's alone: over UDP its stream is never started.
      else messages.close();
    },
  };
}
