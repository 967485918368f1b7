// A domain's GraphQL policy (waf_graphql: `block`), pure: GraphQL requests — a JSON body's "query"
// documents (one object, or a batch: an array of them), a form's or the query string's `query`
// parameter, a body that is a document (application/graphql) — refused when they ask for the schema (introspection: __schema, __type; __typename,
// which clients add to every selection, is not) or multiply one request into many (more than
// MAX_ALIASES aliases in a document: a password tried 1000 times in one request; more than
// MAX_OPERATIONS documents in a batch). Off by default: many APIs publish their schema.
import type { Input } from './inputs.ts';

export const GRAPHQL = {
  introspection: 934200,
  batching: 934210,
} as const;

export const MAX_ALIASES = 50;
export const MAX_OPERATIONS = 10;

/** What a GraphQL document does that the policy counts (read once, linear: strings, block strings and comments skipped). */
export function graphqlDocument(doc: string): { introspection: boolean; aliases: number } {
  let introspection = false;
  let aliases = 0;
  // Arguments (and variable definitions, directive arguments) are inside parentheses: a name and
  // ':' there is an argument, outside them an alias.
  let depth = 0;
  const n = doc.length;
  for (let i = 0; i < n; ) {
    const c = doc.charCodeAt(i);
    if (c === 34 /* " */) {
      if (doc.startsWith('"""', i)) {
        const end = doc.indexOf('"""', i + 3);
        i = end < 0 ? n : end + 3;
        continue;
      }
      let j = i + 1;
      while (j < n && doc.charCodeAt(j) !== 34 && doc.charCodeAt(j) !== 10) j += doc.charCodeAt(j) === 92 ? 2 : 1;
      i = j + 1;
      continue;
    }
    if (c === 35 /* # */) {
      const end = doc.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
      continue;
    }
    if (c === 40 /* ( */) depth++;
    else if (c === 41 /* ) */ && depth > 0) depth--;
    else if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95) {
      let j = i + 1;
      while (j < n && /\w/.test(doc[j]!)) j++;
      const name = doc.slice(i, j);
      if (name === '__schema' || name === '__type') introspection = true;
      if (depth === 0) {
        let k = j;
        while (k < n && (doc[k] === ' ' || doc[k] === '\t' || doc[k] === '\n' || doc[k] === '\r' || doc[k] === ',')) k++;
        if (doc[k] === ':') aliases++;
      }
      i = j;
      continue;
    }
    i++;
  }
  return { introspection, aliases };
}

/** Whether a value reads as a GraphQL document (a selection set, or an operation or fragment keyword and one). */
function looksLikeDocument(value: string): boolean {
  return /^\s*(?:#[^\n]*\n\s*)*(?:\{|(?:query|mutation|subscription|fragment)\b[^{]{0,500}\{)/.test(value.slice(0, 600));
}

/** A `query` parameter's value as the server reads it ('+' a space, percent-decoded). */
function parameterValue(input: Input): string {
  const value = input.plus ? input.value.replace(/\+/g, ' ') : input.value;
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value; // Not percent-encoding after all: read as sent.
  }
}

/**
 * The policy's rule a request's inputs break, if any: each `query` parameter or JSON "query"
 * key's string value that is a GraphQL document is read, and a body that is one; the documents of
 * one body are a batch.
 */
export function graphqlViolation(inputs: readonly Input[]): { rule: number; where: string } | undefined {
  let documents = 0;
  // A body that is the document itself (application/graphql) is read as text: its whole comes
  // first; a JSON body's first input is a key.
  let bodySeen = false;
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!;
    let doc: string | undefined;
    const firstOfBody = !bodySeen && (input.where === 'body' || input.where === 'body key');
    if (firstOfBody) bodySeen = true;
    // (One that starts with '{' is read as JSON: its text outside strings is the document less its strings.)
    if ((firstOfBody && !input.key && !input.markup) || input.where === 'body (outside strings)') doc = input.value;
    else if (input.key && input.value === 'query') {
      const next = inputs[i + 1];
      if (next && !next.key && next.where === input.where.replace(/ key$/, '')) doc = next.value;
    } else if (!input.name && !input.key && input.param === 'query' && (input.where === 'query query' || input.where === 'body field query')) doc = parameterValue(input);
    if (doc === undefined || !looksLikeDocument(doc)) continue;
    documents++;
    const { introspection, aliases } = graphqlDocument(doc);
    if (introspection) return { rule: GRAPHQL.introspection, where: `${input.where} (GraphQL introspection)` };
    if (aliases > MAX_ALIASES) return { rule: GRAPHQL.batching, where: `${input.where} (GraphQL: ${aliases} aliases)` };
  }
  if (documents > MAX_OPERATIONS) return { rule: GRAPHQL.batching, where: `body (GraphQL: a batch of ${documents} operations)` };
  return undefined;
}
