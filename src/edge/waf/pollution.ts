// Prototype pollution: a key or parameter name that reaches an object's prototype when a
// server merges it into an object (JSON bodies at any depth, qs-style names a[__proto__][x],
// dotted names __proto__.x, multipart field names): __proto__ as a segment, or constructor then
// prototype. In values only shapes a server uses as a path or code are (pollutingValue): the
// words in a value (prose about JavaScript) are text.

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

/** A value that is a property path alone (lodash's set/get, a dotted config key): two or more segments. */
const PROPERTY_PATH = /^(?:[\w$]{1,100}|\[\s*['"]?[\w$]{1,100}['"]?\s*\])(?:\.[\w$]{1,100}|\[\s*['"]?[\w$]{1,100}['"]?\s*\]){1,30}$/;
/** JSON (a string a server parses once more) with a key that walks to a prototype. */
const JSON_POLLUTION = /"__proto__"\s*:|"constructor"\s*:\s*\{\s*"prototype"\s*:/;
/** JavaScript that writes into a prototype: a property of it assigned, or it given to Object.assign & co. */
const PROTOTYPE_WRITE =
  /(?:__proto__|\bconstructor\s*(?:\.\s*|\[\s*['"])prototype|\bobject\s*\.\s*prototype)['"]?\s*\]?\s*(?:\.\s*[\w$]+|\[\s*['"]?[\w$]+['"]?\s*\])\s*=(?!=)|\bobject\s*\.\s*(?:assign|defineproperty|defineproperties|setprototypeof)\s*\(\s*(?:object\s*\.\s*prototype\b|[\w$.]*__proto__)/;

/**
 * Whether a value (decoded, lower case) writes into a prototype when a server uses it: a property
 * path through __proto__ or constructor.prototype to a property (what lodash's set(obj, path, v)
 * is given; the path alone, a page's name such as Object.prototype.__proto__ ends there), JSON
 * with such a key inside a string, or JavaScript assigning to a prototype's property. Prose about
 * prototypes (a question, "Object.prototype.hasOwnProperty") has none of these shapes.
 */
export function pollutingValue(form: string): boolean {
  if (!form.includes('__proto__') && !form.includes('prototype')) return false;
  const t = form.trim();
  if (t.length <= 600 && PROPERTY_PATH.test(t)) {
    const segments = t.split(/[[\].]+/).map((s) => s.trim().replace(/^['"]|['"]$/g, '')).filter((s) => s !== '');
    for (let i = 0; i < segments.length - 1; i++) {
      if (segments[i] === '__proto__' || (segments[i] === 'prototype' && i > 0 && segments[i - 1] === 'constructor')) return true;
    }
  }
  return JSON_POLLUTION.test(form) || PROTOTYPE_WRITE.test(form);
}
