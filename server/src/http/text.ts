/**
 * Text the service stores must be valid Unicode without NUL: PostgreSQL refuses U+0000 in text (the write
 * failed as a 500), and an unpaired UTF-16 surrogate cannot be encoded as UTF-8, so it would be stored as
 * U+FFFD: a different value than the one acknowledged. A JSON body holding either, in a value or a key, is
 * refused before any route sees it.
 */
import { invalidRequest } from './errors.js';

const BAD_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The JSON path of the first string (value or key) holding NUL or an unpaired surrogate, or undefined. Iterative: any depth. */
export function badTextPath(body: unknown): string | undefined {
  const stack: [unknown, string][] = [[body, 'body']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (BAD_TEXT.test(v)) return path;
    } else if (ArrayBuffer.isView(v)) {
      continue; // bytes (an OTLP body) are read by their own decoder
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (BAD_TEXT.test(k)) return `${path} (a key)`;
        stack.push([x, `${path}.${k}`]);
      }
    }
  }
  return undefined;
}

/** Throws 400 when a parsed JSON body holds text no store can keep as sent. */
export function refuseBadText(body: unknown): void {
  const at = badTextPath(body);
  if (at !== undefined) throw invalidRequest(`${at} contains a NUL character or an unpaired UTF-16 surrogate; text must be valid Unicode without NUL`);
}
