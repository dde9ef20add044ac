/**
 * Reading a parsed `config_json` strictly: every refusal is a 400 whose message names the reason and the
 * JSON path, with `details.reason` (a stable snake_case code) and `details.path`. No HTTP, no SQL.
 */
import { invalidRequest, type ApiError } from '../../../http/errors.js';

/** Longest `config_json` accepted (characters). */
export const MAX_CONFIG_JSON = 65_536;
/** Deepest nesting of objects and arrays accepted in a configuration (the deepest valid one needs 3). */
export const MAX_CONFIG_DEPTH = 8;
/** Longest free string in a configuration unless a field says otherwise (characters). */
export const MAX_CONFIG_STRING = 256;

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export function refuse(reason: string, path: string, message: string): ApiError {
  return invalidRequest(`invalid configuration at ${path}: ${message} (${reason})`, { reason, path });
}

const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/** The deepest nesting of `v`, counted without recursion (an attacker's nesting cannot exhaust the stack). */
function depthOf(v: Json): number {
  let deepest = 0;
  const stack: [Json, number][] = [[v, 1]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    deepest = Math.max(deepest, d);
    if (deepest > MAX_CONFIG_DEPTH) return deepest;
    for (const c of Array.isArray(x) ? x : Object.values(x)) stack.push([c, d + 1]);
  }
  return deepest;
}

/** `config_json` -> its top-level object: a string of at most MAX_CONFIG_JSON characters holding a shallow JSON object. */
export function parseConfigText(configJson: unknown): JsonObject {
  if (typeof configJson !== 'string')
    throw refuse('config_json_not_a_string', 'config_json', `config_json is a string holding JSON (serialize the configuration), not ${typeName(configJson)}`);
  if (configJson.length > MAX_CONFIG_JSON) throw refuse('config_json_too_long', 'config_json', `config_json is at most ${MAX_CONFIG_JSON} characters`);
  let v: Json;
  try {
    v = JSON.parse(configJson) as Json;
  } catch {
    throw refuse('config_json_not_json', 'config_json', 'config_json does not hold valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw refuse('config_not_an_object', '$', `the configuration must be a JSON object, not ${typeName(v)}`);
  if (depthOf(v) > MAX_CONFIG_DEPTH) throw refuse('config_too_deep', '$', `the configuration nests objects and arrays at most ${MAX_CONFIG_DEPTH} deep`);
  return v;
}

/** Refuses any member of `o` outside `allowed`, naming it (unknown fields are never ignored). */
export function onlyFields(o: JsonObject, allowed: readonly string[], path: string): void {
  const unknown = Object.keys(o).find((k) => !allowed.includes(k));
  if (unknown !== undefined) {
    const at = path === '$' ? `$.${unknown}` : `${path}.${unknown}`;
    throw refuse('unknown_field', at, `unknown field "${unknown.slice(0, 64)}"; accepted: ${allowed.join(', ')}`);
  }
}

export const has = (o: JsonObject, k: string) => Object.hasOwn(o, k) && o[k] !== undefined;

export function anObject(v: Json, path: string): JsonObject {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw refuse('wrong_type', path, `must be an object, not ${typeName(v)}`);
  return v;
}

export function anArray(v: Json, path: string): Json[] {
  if (!Array.isArray(v)) throw refuse('wrong_type', path, `must be an array, not ${typeName(v)}`);
  return v;
}

/** A non-empty string of at most `max` characters. */
export function aString(v: Json, path: string, max = MAX_CONFIG_STRING): string {
  if (typeof v !== 'string') throw refuse('wrong_type', path, `must be a string, not ${typeName(v)}`);
  if (v.trim() === '') throw refuse('empty_string', path, 'must not be empty');
  if (v.length > max) throw refuse('string_too_long', path, `is at most ${max} characters`);
  if (v.includes('\u0000')) throw refuse('wrong_type', path, 'must not contain the NUL character');
  return v;
}

/** One of a closed set of strings, naming the accepted values otherwise. */
export function oneOf<T extends string>(v: Json, allowed: readonly T[], path: string, reason: string): T {
  const s = aString(v, path);
  if (!allowed.includes(s as T)) throw refuse(reason, path, `"${s.slice(0, 64)}" is not recognized; one of: ${allowed.join(', ')}`);
  return s as T;
}

/** A required member. */
export function required(o: JsonObject, k: string, path: string, reason: string): Json {
  if (!has(o, k)) throw refuse(reason, `${path === '$' ? '$' : path}.${k}`, `${k} is required`);
  return o[k];
}
