/**
 * A registry's `WWW-Authenticate` challenge (pure, RFC 7235): `Basic realm="..."` or
 * `Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"`.
 */
export interface Challenge {
  scheme: 'basic' | 'bearer';
  params: Record<string, string>;
}

/** The first Basic or Bearer challenge of the header; undefined when it names neither. */
export function parseChallenge(header: string | undefined): Challenge | undefined {
  if (!header) return undefined;
  const match = /^\s*(basic|bearer)\b(.*)$/i.exec(header);
  if (!match) return undefined;
  const scheme = (match[1] as string).toLowerCase() as Challenge['scheme'];
  const params: Record<string, string> = {};
  const pair = /\s*,?\s*([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/gy;
  const rest = match[2] as string;
  for (let found = pair.exec(rest); found; found = pair.exec(rest)) {
    const value = found[2] !== undefined ? found[2].replace(/\\(.)/g, '$1') : (found[3] as string);
    params[(found[1] as string).toLowerCase()] = value;
  }
  return { scheme, params };
}
