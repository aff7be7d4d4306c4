import { randomUUID } from 'node:crypto';

/**
 * Request ids are kapi's own: its audit line, the X-Request-Id answer header and kube-apiserver's Audit-ID carry the
 * same generated id, so a client can never make its requests share another request's id in either audit trail.
 */
export function newRequestId(): string {
  return randomUUID();
}

/** What a client's own X-Request-Id may look like to be kept (in its own audit field): nothing that could forge a line. */
const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The client's X-Request-Id, for the audit line's `clientRequestId` only; undefined when absent, repeated or odd. */
export function clientRequestIdOf(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && CLIENT_ID.test(header) ? header : undefined;
}
