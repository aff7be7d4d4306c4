import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Client, ResultCodeError } from 'ldapts';
import type { LdapSettings } from '../../../config/identity-providers/ldap.js';
import { ProviderUnavailable } from '../identity-provider.js';

/**
 * A bounded pool of connections to one directory. Each login borrows one connection for its whole sequence (search,
 * bind as the user, search groups) and gives it back; at most `maxConnections` exist, busy or idle, and a login
 * beyond them waits up to the timeout (then 503). A connection that failed in any way is thrown away, never reused.
 *
 * TLS is never optional once configured: ldaps:// verifies the server's certificate against the system's or the
 * configured CAs; StartTLS upgrades a new connection before anything is sent. ldapts reconnects silently when a
 * socket closed — over plain TCP, without StartTLS or the service bind — so every operation first checks that the
 * connection it was given is still the one it set up (`Connection.check`), and a lost one is dropped instead.
 */
export interface Connection {
  readonly client: Client;
  /** Whom the connection is bound as now: the service account, anonymous (no service account), or unknown. */
  boundAs: 'service' | 'anonymous' | 'unknown';
}

/** Logins waiting for a connection beyond this are answered 503 at once: a flood must not hold memory. */
const MAX_WAITING_PER_CONNECTION = 16;
/** An idle connection is closed after this (directories drop idle clients themselves, often silently). */
const IDLE_MS = 30_000;

export class LdapConnectionPool {
  private readonly idle: { connection: Connection; timer: NodeJS.Timeout }[] = [];
  private readonly waiting: { resolve: (c: Connection) => void; reject: (e: Error) => void }[] = [];
  private total = 0;
  private closed = false;

  constructor(
    private readonly provider: string,
    private readonly settings: LdapSettings,
  ) {}

  /** Runs `work` on a connection bound as the service account (or anonymous); a failure discards the connection. */
  async use<T>(work: (connection: Connection) => Promise<T>): Promise<T> {
    const connection = await this.acquire();
    let healthy = false;
    try {
      await this.bindService(connection);
      const result = await work(connection);
      healthy = true;
      return result;
    } finally {
      if (healthy && this.isUsable(connection)) this.release(connection);
      else this.discard(connection);
    }
  }

  /** Fails when ldapts lost the connection (it would reconnect without TLS or binding). */
  check(connection: Connection): void {
    if (!this.isUsable(connection))
      throw new ProviderUnavailable(this.provider, 'the connection to the directory was lost');
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(this.unavailable('the provider was reconfigured'));
    for (const { connection, timer } of this.idle.splice(0)) {
      clearTimeout(timer);
      this.discard(connection);
    }
  }

  /** Whether a busy or idle connection exists: for tests and the log. */
  get size(): number {
    return this.total;
  }

  /**
   * Binds as the service account (or anonymously: an empty name and password, RFC 4513 §5.1.1, which also undoes a
   * user's bind on a reused connection). A new connection is opened here, with StartTLS first when configured.
   */
  private async bindService(connection: Connection): Promise<void> {
    const { bindDN, bindPassword } = this.settings;
    const wanted = bindDN === undefined ? 'anonymous' : 'service';
    if (connection.boundAs === wanted) return;
    if (connection.client.isConnected) this.check(connection);
    else if (this.settings.security === 'startTLS') {
      try {
        await connection.client.startTLS(this.tlsOptions());
      } catch (error) {
        throw this.unavailable(`cannot connect to ${this.settings.url} with StartTLS: ${describe(error)}`);
      }
    }
    try {
      await connection.client.bind(bindDN ?? '', bindPassword ?? '');
    } catch (error) {
      throw this.unavailable(
        error instanceof ResultCodeError
          ? `the service account's bind was refused (${describe(error)}): check bindDN and its password`
          : `cannot connect to ${this.settings.url}: ${describe(error)}`,
      );
    }
    connection.boundAs = wanted;
  }

  private acquire(): Promise<Connection> {
    if (this.closed) return Promise.reject(this.unavailable('the provider was reconfigured'));
    while (this.idle.length > 0) {
      const { connection, timer } = this.idle.pop()!;
      clearTimeout(timer);
      if (this.isUsable(connection)) return Promise.resolve(connection);
      this.discard(connection);
    }
    if (this.total < this.settings.maxConnections) return Promise.resolve(this.create());
    if (this.waiting.length >= this.settings.maxConnections * MAX_WAITING_PER_CONNECTION) {
      return Promise.reject(this.unavailable(`all ${this.settings.maxConnections} connections are busy`));
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (connection: Connection) => {
          clearTimeout(timer);
          resolve(connection);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(this.unavailable(`all ${this.settings.maxConnections} connections stayed busy`));
      }, this.settings.timeoutSeconds * 1000);
      timer.unref();
      this.waiting.push(waiter);
    });
  }

  private create(): Connection {
    this.total++;
    const timeoutMs = Math.round(this.settings.timeoutSeconds * 1000);
    const client = new Client({
      url: this.settings.url,
      timeout: timeoutMs,
      connectTimeout: timeoutMs,
      tlsOptions: this.settings.security === 'ldaps' ? this.tlsOptions() : undefined,
      strictDN: false,
    });
    return { client, boundAs: 'unknown' };
  }

  private release(connection: Connection): void {
    const waiter = this.waiting.shift();
    if (waiter) {
      waiter.resolve(connection);
      return;
    }
    if (this.closed) {
      this.discard(connection);
      return;
    }
    const timer = setTimeout(() => {
      const at = this.idle.findIndex((entry) => entry.connection === connection);
      if (at >= 0) this.idle.splice(at, 1);
      this.discard(connection);
    }, IDLE_MS);
    timer.unref();
    this.idle.push({ connection, timer });
  }

  private discard(connection: Connection): void {
    this.total--;
    connection.client.unbind().catch(() => {});
    // its place is free: a waiting login gets a new connection
    const waiter = this.closed ? undefined : this.waiting.shift();
    if (waiter) waiter.resolve(this.create());
  }

  private isUsable(connection: Connection): boolean {
    return connection.client.isConnected;
  }

  private tlsOptions(): ConnectionOptions {
    const host = new URL(this.settings.url).hostname.replace(/^\[|\]$/g, '');
    return {
      host,
      ...(isIP(host) ? {} : { servername: host }),
      ...(this.settings.caPem ? { ca: this.settings.caPem } : {}),
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    };
  }

  private unavailable(reason: string): ProviderUnavailable {
    return new ProviderUnavailable(this.provider, reason);
  }
}

/** An error for the log: its message, never a credential (ldapts errors carry none). */
export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200);
}
