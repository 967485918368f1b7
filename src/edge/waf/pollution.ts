// Prototype pollution: a key or parameter name that reaches an object's prototype when a
// server merges it into an object (JSON bodies at any depth, qs-style names a[__proto__][x],
// dotted names __proto__.x, multipart field names): __proto__ as a segment, or constructor then
// prototype. Only names are read so: the words in a value (prose about JavaScript) are text.

export const POLLUTION_RULE = 934150;

/** Whether a parameter name or key (decoded, lower case) walks to a prototype. */
export function pollutingName(name: string): boolean {
  if (!name.includes('__proto__') && !name.includes('prototype')) return false;
  const segments = name.split(/[[\].]+/);
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!.trim().replace(/^['"]|['"]$/g, '');
    if (s === '__proto__') return true;
    if (s === 'prototype' && i > 0 && segments[i - 1]!.trim().replace(/^['"]|['"]$/g, '') === 'constructor') return true;
  }
  return false;
}
