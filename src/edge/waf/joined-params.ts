// A parameter sent in the query and again in a form body under the same name is one value to a
// framework that merges the two: ASP.NET's Request.Params["id"] (and Request["id"] where the
// page reads Params) joins QueryString's and Form's values with ',', so "1' UNION/*" in the query
// and "*/SELECT password FROM users--" in the body reach the query as one statement. Such a value
// is read whole, as inputs.ts reads a name repeated within one place (joined with ',' and
// concatenated). Pure.
import { percentDecode } from './decode.ts';
import { pairs, type Input } from './inputs.ts';

/** At most this many values of one name are joined (a form repeats a name a few times, not thousands). */
const MAX_VALUES = 64;

/** The body's form and multipart field values by (decoded) name, in order: what a framework binds. */
function bodyFields(body: readonly Input[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let previous: string | undefined;
  for (const input of body) {
    const where = input.where;
    // A multipart text field is read whole, then line by line under the same label: the first
    // of a run is the field's value. (Form fields are one input each: a repeated one comes
    // after its name's own input, so two never stand in a row.)
    const piece = where === previous && input.plus !== true;
    previous = where;
    if (piece || input.param === undefined || input.name || input.key || input.partHeaders || where !== `body field ${input.param.slice(0, 40)}`) continue;
    const name = input.plus ? percentDecode(input.param, true) : input.param;
    const values = out.get(name) ?? [];
    if (values.length < MAX_VALUES) values.push(input.plus ? percentDecode(input.value, true) : input.value);
    out.set(name, values);
  }
  return out;
}

/** Inputs for each name the query and the body's fields both give: the query's values, then the body's, joined. */
export function joinedAcrossPlaces(url: string, body: readonly Input[]): Input[] {
  const q = url.indexOf('?');
  if (q < 0 || body.length === 0) return [];
  const query = new Map<string, string[]>();
  for (const [name, value] of pairs(url.slice(q + 1))) {
    const key = percentDecode(name, true);
    const values = query.get(key) ?? [];
    if (values.length < MAX_VALUES) values.push(percentDecode(value, true));
    query.set(key, values);
  }
  if (query.size === 0) return [];
  const out: Input[] = [];
  for (const [name, fields] of bodyFields(body)) {
    const first = query.get(name);
    if (!first) continue;
    const values = [...first, ...fields];
    const where = `query and body ${name.slice(0, 40)} (joined)`;
    // (Already decoded once, as the framework hands them over: read on from there.)
    out.push({ where, param: name, value: values.join(','), body: true }, { where, param: name, value: values.join(''), body: true });
  }
  return out;
}
