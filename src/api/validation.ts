// Request validation. Bodies are checked strictly: no type coercion ("true" is not a boolean),
// no silent removal of unknown fields, every error reported. Query strings and path parameters
// arrive as text, so they alone are coerced to the declared types.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { ApiError, type FieldError } from '../errors.ts';
import { EXPECTED } from '../model/common.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

function makeAjv(coerceTypes: boolean): Ajv {
  // verbose: each error carries the schema it failed, for its `x-expected` words and description.
  const ajv = new Ajv({ allErrors: true, coerceTypes, removeAdditional: false, useDefaults: false, strict: false, verbose: true });
  addFormats(ajv);
  return ajv;
}

const strict = makeAjv(false);
const coercing = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : coercing;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** Keywords about a value's type or form, where a field's `x-expected` words say more than Ajv's. */
const FORM_KEYWORDS = new Set(['type', 'pattern', 'anyOf', 'oneOf', 'format', 'enum', 'const', 'minimum', 'maximum']);

/** Ajv's type names in words. */
const TYPE_WORDS: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'a JSON array (a list in [ ])',
  object: 'a JSON object ({ })',
  null: 'null',
};

type SchemaWords = { [EXPECTED]?: string; description?: string } | undefined;

/** Ajv errors → one entry per offending field, in words a user can act on. */
export function fieldErrors(errors: ErrorObject[], part: string): FieldError[] {
  const prefix = part === 'body' ? '' : `${part}.`;
  // A union's words speak for all its branches' errors at the same place.
  const expectedAt = new Map<string, string>();
  for (const e of errors) {
    const words = (e.parentSchema as SchemaWords)?.[EXPECTED];
    if (words && !expectedAt.has(e.instancePath)) expectedAt.set(e.instancePath, words);
  }
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let field = e.instancePath.split('/').slice(1).join('.');
    let message = e.message ?? 'is invalid';
    const expected = expectedAt.get(e.instancePath);
    if (e.keyword === 'additionalProperties') {
      field = [field, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
      message = 'is not a known field';
    } else if (e.keyword === 'required') {
      field = [field, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
      message = 'is required';
    } else if (expected && FORM_KEYWORDS.has(e.keyword)) {
      message = `must be ${expected}`;
    } else if (e.keyword === 'type') {
      const type = (e.params as { type: string }).type;
      message = `must be ${type.split(',').map((t) => TYPE_WORDS[t] ?? t).join(' or ')}`;
    } else if (e.keyword === 'pattern') {
      // A regular expression is no help to a person: the field's description says the form.
      const description = (e.parentSchema as SchemaWords)?.description;
      message = description ? `does not have the expected form: ${description}` : 'does not have the expected form';
    }
    // A union (anyOf) reports each branch; keep the first word on a field.
    const key = `${prefix}${field}`;
    if (seen.has(key) && e.keyword !== 'additionalProperties') continue;
    seen.add(key);
    out.push({ field: key || part, message });
  }
  return out;
}

/**
 * JSON bodies. An empty body is no body, so `curl -X PUT -H 'content-type: application/json'`
 * works on routes that take none; routes that need one still fail validation with a clear message.
 */
export function parseJsonBody(_request: unknown, body: string | Buffer, done: (err: Error | null, body?: unknown) => void): void {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.trim() === '') return done(null, undefined);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return done(new ApiError('MALFORMED_JSON', `the body is not valid JSON: ${(error as Error).message}`));
  }
  // A lone UTF-16 surrogate ("\ud800") is valid JSON but no text: it cannot be stored as UTF-8 or
  // put on the wire. Only an escape can carry one, so only bodies with escapes are walked.
  if (/\\u[dD][89a-fA-F]/.test(text) && !wellFormed(parsed)) {
    return done(new ApiError('MALFORMED_JSON', 'the body holds a string with an unpaired UTF-16 surrogate escape (\\uD800–\\uDFFF alone)'));
  }
  done(null, parsed);
}

function wellFormed(value: unknown): boolean {
  if (typeof value === 'string') return !/\p{Surrogate}/u.test(value);
  if (Array.isArray(value)) return value.every(wellFormed);
  if (value !== null && typeof value === 'object') return Object.entries(value).every(([k, v]) => wellFormed(k) && wellFormed(v));
  return true;
}

/**
 * For routes with `attachValidation`: the body's schema errors as field errors, and the
 * top-level fields they concern, so a route can run its value checks on the other fields and
 * answer every problem at once. Errors outside the body (path, query) are thrown as usual.
 */
export function bodySchemaErrors(request: FastifyRequest): { errors: FieldError[]; bad: Set<string> } {
  const error = request.validationError as (Error & { validation?: ErrorObject[]; validationContext?: string }) | undefined;
  if (!error) return { errors: [], bad: new Set() };
  if (error.validationContext !== 'body' || !error.validation || typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) throw error;
  const errors = fieldErrors(error.validation, 'body');
  return { errors, bad: new Set(errors.map((e) => e.field.split('.')[0]!)) };
}

/** The body without the fields that failed the schema (their values cannot be checked further). */
export function withoutFields<T extends object>(body: T, bad: ReadonlySet<string>): T {
  if (bad.size === 0) return body;
  return Object.fromEntries(Object.entries(body).filter(([key]) => !bad.has(key))) as T;
}
