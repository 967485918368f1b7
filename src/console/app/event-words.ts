// An event's details in words: the API's `data` object is made for programs (nested lists of
// problems, states keyed by node id); the Events page shows it as a person reads it.

/** How a field of an event's data is named on the page. */
const FIELD_WORDS: Record<string, string> = {
  nodes: 'seen from',
  problems: 'why',
  not_after: 'valid until',
  next_check: 'next check',
  verified_at: 'proven',
  task: 'task',
};

/** Node 0 is the serve role's own edge; registered edge nodes have ids from 1. */
const nodeName = (id: string) => (id === '0' ? 'this server' : `edge node ${id}`);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One value in words: lists joined, a name's problem as "name: detail", objects as "key value" pairs. */
export function valueWords(field: string, value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (field === 'nodes' && isRecord(value)) {
    return Object.entries(value)
      .map(([id, state]) => `${nodeName(id)} ${valueWords('', state)}`)
      .join(', ');
  }
  if (Array.isArray(value)) return value.map((item) => valueWords(field, item)).join('; ');
  if (isRecord(value)) {
    if (typeof value.name === 'string' && typeof value.detail === 'string') return `${value.name}: ${value.detail}`;
    return Object.entries(value)
      .map(([key, inner]) => `${fieldWords(key)} ${valueWords(key, inner)}`)
      .join(', ');
  }
  return String(value);
}

function fieldWords(field: string): string {
  return FIELD_WORDS[field] ?? field.replace(/_/g, ' ');
}

/** The details of an event in one line ("state: down · seen from: edge node 1 down, edge node 2 up"). */
export function eventDetails(data: Record<string, unknown>): string {
  return Object.entries(data)
    .map(([key, value]) => `${fieldWords(key)}: ${valueWords(key, value)}`)
    .join(' · ');
}
