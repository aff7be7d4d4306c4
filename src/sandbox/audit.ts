/** One request as the sandbox saw it, like a kube audit event at the Metadata level (never a token or body). */
export interface SandboxAuditEntry {
  time: string;
  user: string;
  groups: string[];
  /** The authenticated caller when the request impersonated `user`. */
  impersonatedBy?: string;
  verb: string;
  path: string;
  code: number;
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
