import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** One request as the sandbox saw it, like a kube audit event at the Metadata level (never a token or body). */
export interface SandboxAuditEntry {
  time: string;
  /** The event's auditID: the request's Audit-ID header when it has one, as kube-apiserver takes it, else a new one. */
  auditId: string;
  user: string;
  groups: string[];
  /** The authenticated caller when the request impersonated `user`. */
  impersonatedBy?: string;
  verb: string;
  path: string;
  code: number;
}

/** kube-apiserver's audit id for a request: the caller's Audit-ID header (a proxy's own id), else a generated one. */
export function auditIdOf(headers: IncomingHttpHeaders): string {
  const given = headers['audit-id'];
  return typeof given === 'string' && given !== '' ? given : randomUUID();
}

/** The last `capacity` requests, oldest first. */
export class AuditTrail {
  private readonly entries: SandboxAuditEntry[] = [];

  constructor(private readonly capacity = 1000) {}

  record(entry: SandboxAuditEntry): void {
    this.entries.push(entry);
    if (this.entries.length > this.capacity * 1.5) this.entries.splice(0, this.entries.length - this.capacity);
  }

  /** A snapshot, trimmed to the capacity. */
  list(): readonly SandboxAuditEntry[] {
    return this.entries.slice(-this.capacity);
  }
}
