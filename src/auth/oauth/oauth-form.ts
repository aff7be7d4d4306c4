import { invalidRequest } from './oauth-error.js';

/**
 * The wire formats of the token endpoint, pure: the form body (application/x-www-form-urlencoded, RFC 6749 §3.2)
 * and HTTP Basic client credentials (RFC 6749 §2.3.1, whose id and secret are form-encoded before base64).
 */

/** Parameters by name. A parameter sent without a value is kept as '' and read as absent (RFC 6749 §3.1). */
export type FormParams = ReadonlyMap<string, string>;

const MAX_PARAMETERS = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads a form body; a repeated parameter, bad percent-encoding or invalid UTF-8 is `invalid_request`. */
export function parseForm(body: Buffer): FormParams {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalidRequest('the request body is not valid UTF-8');
  }
  const params = new Map<string, string>();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const name = formDecode(at < 0 ? pair : pair.slice(0, at));
    const value = at < 0 ? '' : formDecode(pair.slice(at + 1));
    if (name === undefined || value === undefined) throw invalidRequest('the request body is not valid form encoding');
    if (name === '') continue;
    if (params.has(name)) throw invalidRequest(`parameter "${printable(name)}" is repeated`);
    if (params.size >= MAX_PARAMETERS) throw invalidRequest('too many parameters');
    params.set(name, value);
  }
  return params;
}

/** The value of a parameter, or `undefined` when absent or empty. */
export function param(params: FormParams, name: string): string | undefined {
  const value = params.get(name);
  return value === undefined || value === '' ? undefined : value;
}

/** Like `param`, but a missing value is `invalid_request` naming it. */
export function requiredParam(params: FormParams, name: string): string {
  const value = param(params, name);
  if (value === undefined) throw invalidRequest(`missing parameter "${name}"`);
  return value;
}

export interface BasicCredentials {
  clientId: string;
  secret: string;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Client credentials from an `Authorization: Basic …` header; `undefined` when the header is absent or carries
 * another scheme. A Basic header that cannot be read is `invalid_request`.
 */
export function parseBasicCredentials(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic(?:\s+(.*))?$/i.exec(header.trim());
  if (!match) return undefined;
  const encoded = (match[1] ?? '').trim();
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) {
    throw invalidRequest('the Basic authorization header is not valid base64');
  }
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(encoded, 'base64'));
  } catch {
    throw invalidRequest('the Basic authorization header is not valid UTF-8');
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidRequest('the Basic authorization header has no "client_id:client_secret" pair');
  const clientId = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  if (clientId === undefined || secret === undefined) {
    throw invalidRequest('the Basic authorization header is not valid form encoding');
  }
  if (clientId === '') throw invalidRequest('the Basic authorization header has an empty client_id');
  return { clientId, secret };
}

/** application/x-www-form-urlencoded decoding of one name or value; `undefined` for a bad percent sequence. */
function formDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** A parameter name fit to quote in an error: short, printable ASCII only. */
function printable(name: string): string {
  const safe = name.replace(/[^\x20-\x7e]/g, '?');
  return safe.length > 64 ? `${safe.slice(0, 64)}…` : safe;
}

/** Whether a Content-Type header is a form body (charset, when given, must be UTF-8 or its ASCII subset). */
export function isFormContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...parameters] = header.split(';');
  if (type?.trim().toLowerCase() !== 'application/x-www-form-urlencoded') return false;
  for (const parameter of parameters) {
    const [name, value] = parameter.split('=');
    if (name?.trim().toLowerCase() !== 'charset') continue;
    const charset = (value ?? '').trim().replace(/^"|"$/g, '').toLowerCase();
    if (!['utf-8', 'utf8', 'us-ascii'].includes(charset)) return false;
  }
  return true;
}
