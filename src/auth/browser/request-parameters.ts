/**
 * The parameters of a browser request to the authorization endpoint, from its query string (GET) or form body
 * (POST), both application/x-www-form-urlencoded. Pure. Unlike the token endpoint's form, nothing is refused here:
 * which problems may be answered how (on kapi's page, or by a redirect to the client) depends on which parameter it
 * is, so the checks decide.
 */
export interface RequestParameters {
  /** The value of each parameter sent once (an empty value counts as absent, RFC 6749 §3.1). */
  readonly values: ReadonlyMap<string, string>;
  /** Parameters sent more than once (RFC 6749 §3.1: never allowed). */
  readonly repeated: ReadonlySet<string>;
  /** Bad percent-encoding or UTF-8 somewhere: nothing in the request can be trusted. */
  readonly malformed: boolean;
}

const MAX_PARAMETERS = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseParameters(encoded: string | Buffer): RequestParameters {
  const values = new Map<string, string>();
  const repeated = new Set<string>();
  let text: string;
  try {
    text = typeof encoded === 'string' ? encoded : utf8.decode(encoded);
  } catch {
    return { values, repeated, malformed: true };
  }
  const seen = new Set<string>();
  let count = 0;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    if (++count > MAX_PARAMETERS) return { values, repeated, malformed: true };
    const at = pair.indexOf('=');
    const name = decode(at < 0 ? pair : pair.slice(0, at));
    const value = at < 0 ? '' : decode(pair.slice(at + 1));
    if (name === undefined || value === undefined) return { values, repeated, malformed: true };
    if (seen.has(name)) {
      repeated.add(name);
      values.delete(name);
      continue;
    }
    seen.add(name);
    if (value !== '') values.set(name, value);
  }
  return { values, repeated, malformed: false };
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}
