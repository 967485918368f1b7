// What a supervised part and its supervisor say to each other over the IPC channel: a part is
// ready (and where it listens), an event to pass on (a commit other parts should catch up with),
// and requests with their answers, routed by the supervisor to the part they name.
export type PartName = 'api' | 'dns' | 'edge';
/** Whom a request goes to: a part, or the supervisor itself. */
export type Target = PartName | 'supervisor';

export interface ReadyMessage {
  kind: 'ready';
  /** Where the part listens: ports by name (api, dns, http, https). */
  ports: Record<string, number>;
  /** Shown in the supervisor's "serving" line (e.g. the zones loaded). */
  info?: Record<string, unknown>;
}

export interface EventMessage {
  kind: 'event';
  name: string;
  body?: unknown;
}

export interface RequestMessage {
  kind: 'request';
  id: number;
  to: Target;
  method: string;
  body?: unknown;
}

export interface ResponseMessage {
  kind: 'response';
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

export type PartMessage = ReadyMessage | EventMessage | RequestMessage | ResponseMessage;

/** Messages come from our own children, but a malformed one must be dropped, not crash anyone. */
export function isPartMessage(value: unknown): value is PartMessage {
  if (typeof value !== 'object' || value === null) return false;
  const kind = (value as { kind?: unknown }).kind;
  return kind === 'ready' || kind === 'event' || kind === 'request' || kind === 'response';
}
