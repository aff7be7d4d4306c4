import { httpsJson, withSlash } from './oauth-client.js';

/** kapi's account API (/kapis/iam.kapi.io/v1beta1) with an access token: a password change. */
export interface AccountTarget {
  server: string;
  caPem?: string;
  accessToken: string;
}

/** A Kubernetes Status answer: its message says what is wrong (never a password). */
export class StatusError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'StatusError';
  }
}

/** PUT …/users/{name}/password; the number of the user's other sessions that ended. */
export async function changePassword(
  target: AccountTarget,
  name: string,
  change: { currentPassword?: string; password: string },
): Promise<number> {
  const url = new URL(`kapis/iam.kapi.io/v1beta1/users/${encodeURIComponent(name)}/password`, withSlash(target.server));
  const answer = await httpsJson(url, {
    method: 'PUT',
    caPem: target.caPem,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${target.accessToken}` },
    body: JSON.stringify(change),
  });
  const body = (answer.json ?? {}) as { endedSessions?: unknown; message?: unknown };
  if (answer.status === 200 && typeof body.endedSessions === 'number') return body.endedSessions;
  throw new StatusError(
    answer.status,
    typeof body.message === 'string' ? body.message : `the server answered HTTP ${answer.status}`,
  );
}
