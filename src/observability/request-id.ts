import { randomUUID } from 'node:crypto';

/**
 * Request ids are kapi's own: its audit line, the X-Request-Id answer header and kube-apiserver's Audit-ID carry the
 * same generated id, so a client can never make its requests share another request's id in either audit trail.
 */
export function newRequestId(): string {
  // UUID-shaped: this process's random 80 bits, then a counter (48 bits, hex), unique within the process and, by
  // the random part, across replicas; a fresh random UUID per request cost more than the rest of the id's work
  sequence = (sequence + 1) % SEQUENCE_LIMIT;
  if (sequence === 0) processPart = randomProcessPart();
  const hex = sequence.toString(16);
  return processPart + (hex.length < 12 ? ZEROS.slice(hex.length) + hex : hex);
}

/** `xxxxxxxx-xxxx-4xxx-yxxx-` of a random UUID (version 4 and variant bits kept), drawn again if the counter wraps. */
function randomProcessPart(): string {
  return randomUUID().slice(0, 24);
}
let processPart = randomProcessPart();
let sequence = 0;
const SEQUENCE_LIMIT = 2 ** 48;
const ZEROS = '000000000000';

/** What a client's own X-Request-Id may look like to be kept (in its own audit field): nothing that could forge a line. */
const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The client's X-Request-Id, for the audit line's `clientRequestId` only; undefined when absent, repeated or odd. */
export function clientRequestIdOf(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && CLIENT_ID.test(header) ? header : undefined;
}
