// A domain's GraphQL policy rules (waf_graphql): what ../graphql.ts answers with. Applied only
// where the domain asks for them, at any level.
import type { Rule } from './types.ts';

export const GRAPHQL_RULES: Rule[] = [
  { id: 934200, class: 'injection', description: 'GraphQL introspection (__schema, __type) where the domain refuses it (waf_graphql: block)' },
  { id: 934210, class: 'injection', description: 'GraphQL alias or batch flood (more than 50 aliases in a document, more than 10 operations in a batch) where the domain refuses it (waf_graphql: block)' },
];
