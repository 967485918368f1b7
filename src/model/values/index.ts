// The record types beyond the first eight, each from its own file: one line per type.
import { CAA } from './caa.ts';
import { DS } from './ds.ts';
import { NAPTR } from './naptr.ts';
import { PTR } from './ptr.ts';
import { SSHFP } from './sshfp.ts';
import { TLSA } from './tlsa.ts';
import type { ValueType } from './value-type.ts';

export const VALUE_TYPES: ReadonlyMap<number, ValueType> = new Map([PTR, NAPTR, DS, SSHFP, TLSA, CAA].map((t) => [t.code, t]));

/** The type module of an API type number, when it is one of these. */
export const valueType = (type: number): ValueType | undefined => VALUE_TYPES.get(type);
