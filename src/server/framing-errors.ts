import { OAuthError } from '../auth/oauth/oauth-error.js';
import { reasonForCode, statusBody } from './errors.js';

/**
 * Answers to requests that never reach Express because Node's HTTP layer gave up on them (malformed framing, headers
 * too large, a request not received in time, an odd Expect, a missing Host): in the format of the API they were for,
 * as everything kapi answers. Pure: the wiring onto Node's server is in `listener.ts`.
 */

/** RFC 6749 JSON under /oauth, a Kubernetes `Status` elsewhere; `either` when kapi never saw the path. */
export type AnswerFormat = 'oauth' | 'status' | 'either';

const OAUTH_PATH = /^\/oauth(?:[/?]|$)/i;

/**
 * The format for a request target (origin-form, or absolute-form as Express also routes it). `undefined` — the
 * request line was in bytes Node no longer held — gets `either`: a `Status` that also carries RFC 6749's fields, so
 * an OAuth client and a Kubernetes client both read it.
 */
export function answerFormat(target: string | undefined): AnswerFormat {
  if (target === undefined) return 'either';
  const path = /^https?:\/\//i.test(target) ? target.replace(/^https?:\/\/[^/?]*/i, '') || '/' : target;
  // Express matches routes without regard to case: so does this.
  return OAUTH_PATH.test(path) ? 'oauth' : 'status';
}

export interface ErrorAnswer {
  status: number;
  /** Flat `[name, value, …]`, ready for a raw response head. */
  headers: string[];
  body: string;
}

/** The answer, always closing the connection: whatever else the client sent on it is never read. */
export function errorAnswer(status: number, message: string, format: AnswerFormat): ErrorAnswer {
  const oauth = new OAuthError(status, 'invalid_request', message).body();
  const kube = statusBody(status, reasonForCode(status), message);
  const body = JSON.stringify(format === 'oauth' ? oauth : format === 'status' ? kube : { ...kube, ...oauth });
  return {
    status,
    headers: [
      'Content-Type',
      'application/json',
      'Content-Length',
      String(Buffer.byteLength(body)),
      // RFC 6749 §5.1 on /oauth; harmless and right on any error answer.
      'Cache-Control',
      'no-store',
      'Pragma',
      'no-cache',
      'Connection',
      'close',
    ],
    body,
  };
}

export interface ParserFailure {
  status: number;
  message: string;
}

/**
 * What a 'clientError' from Node's server becomes (Node's own answers, with a message). Only HTTP parser errors and
 * the request timeout are answered: socket errors mean the client is gone, and a failed TLS handshake (which HTTPS
 * servers report here too) has no channel an HTTP answer could travel on.
 */
export function parserFailure(code: string | undefined, limits: { maxHeaderBytes: number }): ParserFailure | undefined {
  const answerable =
    code === 'ERR_HTTP_REQUEST_TIMEOUT' || (code?.startsWith('HPE_') && code !== 'HPE_INVALID_EOF_STATE');
  if (!answerable) return undefined;
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: `the request line and headers are larger than ${limits.maxHeaderBytes} bytes` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'the chunk extensions of the request body are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'the request was not received in time' };
    default:
      return { status: 400, message: 'the request is not well-formed HTTP/1.1' };
  }
}

/** An `Expect` other than `100-continue` (RFC 9110 §10.1.1). */
export const EXPECTATION_FAILED: ParserFailure = {
  status: 417,
  message: 'the only expectation kapi meets is "Expect: 100-continue"',
};

/** An HTTP/1.1 request without Host (RFC 9112 §3.2). */
export const MISSING_HOST: ParserFailure = { status: 400, message: 'an HTTP/1.1 request must have a Host header' };

/** CONNECT: kapi is no forward proxy. */
export const CONNECT_REFUSED: ParserFailure = { status: 405, message: 'kapi does not serve CONNECT' };

/** `METHOD SP target` at the very start of some bytes; the rest of the line may be missing (an overlong target). */
const REQUEST_LINE_START = /^[A-Z]{1,20} ((?:\/|https?:\/\/)[^\s]*)/i;

/** The request target at the start of a request's bytes, if they start with its request line. */
export function requestTargetIn(bytes: Buffer | undefined): string | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  return REQUEST_LINE_START.exec(bytes.subarray(0, 8192).toString('latin1'))?.[1];
}

/**
 * The path of a request target for an audit line: never the query, nor the scheme, host and userinfo of an
 * absolute-form (`http://user:password@host/…`) or authority-form (`user:password@host:443`) target.
 */
export function auditPath(target: string | undefined): string | undefined {
  if (target === undefined) return undefined;
  if (target.startsWith('/')) return target.split('?')[0];
  if (!/^https?:\/\//i.test(target)) return undefined;
  try {
    return new URL(target).pathname;
  } catch {
    return undefined;
  }
}
