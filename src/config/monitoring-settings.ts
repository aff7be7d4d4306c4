import { caBundle } from './identity-providers/ldap.js';
import {
  describe,
  isObject,
  optionalObject,
  parsedUrl,
  referencedName,
  secretRefValue,
  type SecretLookup,
} from './fields.js';

/**
 * The monitoring backend of `spec.monitoring` (SPEC §19, pure): any Prometheus-compatible query API (Prometheus,
 * Thanos Querier, …) that kapi asks with its own credentials. Absent, kapi answers every metric empty.
 *
 * Decisions: the endpoint is an http or https URL with no user, query or fragment (the API's paths are added to it);
 * a bearer token is sent over https only (or to a loopback address), as a password is never sent readable on the
 * wire; a CA is for https only.
 */
export interface MonitoringSettings {
  /** The base URL: `/api/v1/query` and `/api/v1/query_range` are asked under it. */
  endpoint: string;
  bearerToken?: string;
  /** PEM CA bundle to trust (else the system's). */
  ca?: string;
}

const LOOPBACK = ['127.0.0.1', '[::1]', 'localhost'];

export function parseMonitoring(
  value: unknown,
  path: string,
  secrets: SecretLookup,
  problems: string[],
): MonitoringSettings | undefined {
  const block = optionalObject(value, path, problems);
  if (!block) return undefined;
  const before = problems.length;
  const url = endpointOf(block.endpoint, `${path}.endpoint`, problems);
  const secure = url?.protocol === 'https:';
  let bearerToken: string | undefined;
  if (block.bearerTokenSecretRef !== undefined) {
    if (url && !secure && !LOOPBACK.includes(url.hostname))
      problems.push(`${path}.bearerTokenSecretRef: a token is sent over https only (the endpoint is http)`);
    bearerToken = secretRefValue(block.bearerTokenSecretRef, `${path}.bearerTokenSecretRef`, secrets, problems);
  }
  let ca: string | undefined;
  if (block.caSecretRef !== undefined) {
    if (url && !secure) problems.push(`${path}.caSecretRef: there is no TLS to an http endpoint`);
    ca = caBundle(block.caSecretRef, `${path}.caSecretRef`, secrets, problems);
  }
  if (problems.length > before || !url) return undefined;
  return { endpoint: url.href.replace(/\/+$/, ''), ...(bearerToken && { bearerToken }), ...(ca && { ca }) };
}

/** The Secrets `spec.monitoring` names (read leniently, see referencedSecretNames). */
export function monitoringSecretNames(value: unknown): string[] {
  if (!isObject(value)) return [];
  return [referencedName(value.bearerTokenSecretRef), referencedName(value.caSecretRef)].filter(
    (name): name is string => name !== undefined,
  );
}

function endpointOf(value: unknown, path: string, problems: string[]): URL | undefined {
  const url = parsedUrl(value, path, problems, 'the http or https URL of a Prometheus-compatible query API');
  if (!url) return undefined;
  if (url.username || url.password) {
    // the value may hold a password: not quoted
    problems.push(`${path}: must have no user or password (give a token in bearerTokenSecretRef)`);
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    problems.push(`${path}: ${describe(value)} must be an http or https URL`);
    return undefined;
  }
  if (url.hash || url.search) {
    problems.push(`${path}: ${describe(value)} must have no query or fragment`);
    return undefined;
  }
  return url;
}
