/**
 * Request and response bodies of the HTTP interface (http.ts): Content-Encoding of request bodies, multipart
 * form data, and response compression.
 */
import http from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { EngineError } from './exec-types.js';

export function clientError(code: number, name: string, message: string): EngineError {
  return new EngineError(`Code: ${code}. DB::Exception: ${message}. (${name})`, code, name);
}

const zstdDecompress = (zlib as unknown as { createZstdDecompress?: () => NodeJS.ReadWriteStream }).createZstdDecompress;
const zstdCompress = (zlib as unknown as { createZstdCompress?: () => NodeJS.ReadWriteStream }).createZstdCompress;

export function decompressor(encoding: string): NodeJS.ReadWriteStream | undefined {
  switch (encoding) {
    case '':
    case 'identity':
    case 'none':
      return undefined;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'zstd':
      if (zstdDecompress) return zstdDecompress();
  }
  throw clientError(48, 'NOT_IMPLEMENTED', `Unsupported Content-Encoding: ${encoding}`);
}

/** The request body, decompressed per Content-Encoding. */
export async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const encoding = String(req.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const inflate = decompressor(encoding);
  const chunks: Buffer[] = [];
  const collect = async (source: AsyncIterable<Buffer | string>) => {
    for await (const chunk of source) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  };
  if (!inflate) {
    await collect(req);
  } else {
    try {
      await pipeline(req, inflate, collect);
    } catch (e) {
      throw clientError(354, 'ZLIB_INFLATE_FAILED', `Cannot decompress the request body (${encoding}): ${(e as Error).message}`);
    }
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

export interface MultipartPart {
  name: string;
  filename?: string;
  value: Buffer;
}

/** multipart/form-data (what the client sends with `use_multipart_params`): `query` and `param_*` parts. */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let pos = body.indexOf(delimiter);
  while (pos !== -1) {
    let start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    if (body.subarray(start, start + 2).toString() === '\r\n') start += 2;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    let end = next;
    if (body.subarray(end - 2, end).toString() === '\r\n') end -= 2;
    const part = body.subarray(start, end);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd !== -1) {
      const headers = part.subarray(0, headerEnd).toString('utf8');
      const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? '';
      const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
      const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
      if (name !== undefined) parts.push({ name, filename, value: part.subarray(headerEnd + 4) });
    }
    pos = next;
  }
  return parts;
}

export function responseEncoding(acceptEncoding: string | undefined): string | undefined {
  if (!acceptEncoding) return undefined;
  for (const token of acceptEncoding.split(',')) {
    const name = token.split(';')[0].trim().toLowerCase();
    if (name === 'gzip' || name === 'deflate' || name === 'br' || (name === 'zstd' && zstdCompress)) return name;
  }
  return undefined;
}

export async function compress(body: Buffer, encoding: string, level: number): Promise<Buffer> {
  let stream: NodeJS.ReadWriteStream;
  if (encoding === 'gzip') stream = zlib.createGzip({ level });
  else if (encoding === 'deflate') stream = zlib.createDeflate({ level });
  else if (encoding === 'br') stream = zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: Math.min(level, 11) } });
  else stream = zstdCompress!();
  const chunks: Buffer[] = [];
  await pipeline(Readable.from([body]), stream, async (source: AsyncIterable<Buffer | string>) => {
    for await (const chunk of source) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  });
  return Buffer.concat(chunks);
}
