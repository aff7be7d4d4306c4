/**
 * The client-go exec credential protocol (client.authentication.k8s.io/v1), pure: what kubectl tells the plugin in
 * KUBERNETES_EXEC_INFO, what the plugin prints back, and when a cached token must be refreshed.
 */
export const EXEC_API_VERSION = 'client.authentication.k8s.io/v1';

export interface ExecInfo {
  /** kubectl's verdict under `interactiveMode`: may the plugin prompt on the terminal? */
  interactive: boolean;
  /** With `provideClusterInfo: true`: the cluster kubectl is talking to. */
  server?: string;
  caPem?: string;
}

/** KUBERNETES_EXEC_INFO, or `undefined` when not run by kubectl (or by a version that sends none). */
export function parseExecInfo(text: string | undefined): ExecInfo | undefined {
  if (!text) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('KUBERNETES_EXEC_INFO is not JSON');
  }
  const spec = (parsed as { spec?: Record<string, unknown> } | null)?.spec ?? {};
  const cluster = (spec.cluster ?? {}) as Record<string, unknown>;
  const caData = cluster['certificate-authority-data'];
  return {
    interactive: spec.interactive === true,
    server: typeof cluster.server === 'string' ? cluster.server : undefined,
    caPem: typeof caData === 'string' && caData ? Buffer.from(caData, 'base64').toString('utf8') : undefined,
  };
}

/** What the plugin prints on stdout for kubectl. A time no Date can hold is printed as already past. */
export function execCredential(token: string, expiresAtMs: number): string {
  const at = isTime(expiresAtMs) ? expiresAtMs : 0;
  return JSON.stringify({
    apiVersion: EXEC_API_VERSION,
    kind: 'ExecCredential',
    status: { token, expirationTimestamp: new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z') },
  });
}

/** The longest access-token lifetime taken as given: kapi's are hours; a longer one is a broken answer. */
export const MAX_LIFETIME_SECONDS = 366 * 86_400;

/**
 * When a token obtained at `obtainedAtMs` with the server's `expires_in` expires: `obtainedAtMs` itself (already
 * expired: the next use refreshes it) when `expires_in` is not a whole number of seconds from 1 to a year.
 */
export function expiresAtOf(obtainedAtMs: number, expiresIn: unknown): number {
  const valid =
    typeof expiresIn === 'number' &&
    Number.isSafeInteger(expiresIn) &&
    expiresIn > 0 &&
    expiresIn <= MAX_LIFETIME_SECONDS;
  return valid ? obtainedAtMs + expiresIn * 1000 : obtainedAtMs;
}

/**
 * Whether cached times can be believed: whole milliseconds a Date holds, obtained no later than a day from now (a
 * clock set back since is allowed for), expiring after it was obtained and within the longest lifetime. Anything
 * else (a damaged or edited file) is taken as expired.
 */
export function plausibleTimes(times: { obtainedAt: unknown; expiresAt: unknown }, nowMs: number): boolean {
  const { obtainedAt, expiresAt } = times;
  if (typeof obtainedAt !== 'number' || typeof expiresAt !== 'number') return false;
  if (!isTime(obtainedAt) || !isTime(expiresAt) || !Number.isSafeInteger(obtainedAt)) return false;
  return (
    obtainedAt >= 0 &&
    obtainedAt <= nowMs + 86_400_000 &&
    expiresAt >= obtainedAt &&
    expiresAt - obtainedAt <= MAX_LIFETIME_SECONDS * 1000
  );
}

/** A number of milliseconds a Date can hold (±8.64e15). */
function isTime(ms: number): boolean {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15;
}

export interface CachedTokens {
  server: string;
  username: string;
  clientId: string;
  accessToken: string;
  refreshToken: string;
  /** When the access token was obtained and when it expires, ms since the epoch (the client's clock). */
  obtainedAt: number;
  expiresAt: number;
}

/** Refresh this long before expiry at most: a request started now must not carry a token that dies on the way. */
const MAX_REFRESH_MARGIN_MS = 60_000;

/**
 * The cached access token is used while it has more than a quarter of its life (at most a minute) left; after that
 * the refresh grant runs. A short-lived token (tests, strict settings) is thus still used for most of its life.
 */
export function needsRefresh(tokens: Pick<CachedTokens, 'obtainedAt' | 'expiresAt'>, nowMs: number): boolean {
  const lifetime = Math.max(0, tokens.expiresAt - tokens.obtainedAt);
  const margin = Math.min(MAX_REFRESH_MARGIN_MS, lifetime / 4);
  return nowMs >= tokens.expiresAt - margin;
}
