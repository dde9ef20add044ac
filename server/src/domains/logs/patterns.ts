/**
 * Log patterns: a body becomes its pattern by masking the parts that vary between occurrences of one
 * log statement. A simple, deterministic tokenizer (not a learned clustering), applied in this order:
 *
 * | Masked | Placeholder |
 * |---|---|
 * | double-quoted strings, and single-quoted ones not inside a word (`'abc'`, not the `'` of `don't`) | `<str>` |
 * | UUIDs (8-4-4-4-12 hex) | `<uuid>` |
 * | RFC 3339 / ISO 8601 date-times (`2024-06-01T12:00:00.5Z`, `2024-06-01 12:00:00`) | `<time>` |
 * | IPv4 addresses, with an optional port | `<ip>` |
 * | `0x` hex numbers, and hex runs of 8 or more characters holding a digit (ids, hashes, trace ids) | `<hex>` |
 * | every other run of digits, with decimals (`42`, `3.14`, the `2` of `v2`) | `<num>` |
 *
 * Whitespace runs then become one space and the ends are trimmed. Bodies with the same pattern are one
 * group, whatever their service or severity.
 */
import { createHash } from 'node:crypto';

const MASKS: [RegExp, string][] = [
  [/"(?:[^"\\]|\\.)*"/g, '<str>'],
  [/(?<![\p{L}\p{N}_])'(?:[^'\\\n]|\\.)*'(?![\p{L}\p{N}_])/gu, '<str>'],
  [/\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g, '<uuid>'],
  [/\b\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?/g, '<time>'],
  [/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g, '<ip>'],
  [/\b0[xX][0-9a-fA-F]+\b/g, '<hex>'],
  [/\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b/g, '<hex>'],
  [/\d+(?:\.\d+)*/g, '<num>'],
];

export function logPattern(body: string): string {
  let s = body;
  for (const [re, placeholder] of MASKS) s = s.replace(re, placeholder);
  return s.replace(/\s+/g, ' ').trim();
}

/** A stable id of a pattern (16 hex). */
export function patternId(pattern: string): string {
  return createHash('sha256').update(pattern).digest('hex').slice(0, 16);
}
