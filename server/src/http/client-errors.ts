/**
 * Refusals of Node's HTTP parser (before Fastify sees a request): headers larger than the limit,
 * control characters in a header, an unreadable request line. Fastify's default answer uses its
 * own error names; these answer in our shape, `{error, message}`, and close the connection.
 */
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { ErrorBody } from './errors.js';

interface ParserError extends Error {
  code?: string;
}

function refusal(err: ParserError): { status: number; body: ErrorBody } {
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return { status: 431, body: { error: 'request_header_too_large', message: 'the request headers are larger than the limit' } };
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, body: { error: 'request_timeout', message: 'the request was not received in time' } };
  if (err.code === 'HPE_INVALID_HEADER_TOKEN' || err.code === 'HPE_INVALID_VALUE_CHARS' || err.code === 'HPE_LF_EXPECTED')
    return { status: 400, body: { error: 'invalid_request', message: 'a request header holds a character that is not allowed' } };
  return { status: 400, body: { error: 'invalid_request', message: 'the request could not be read as HTTP/1.1' } };
}

/** Fastify's `clientErrorHandler`: the raw answer is written to the socket, which is then closed. */
export function clientErrorHandler(err: ParserError, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const { status, body } = refusal(err);
    const text = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}
