import { BlockList, isIPv4 } from 'node:net';
import type { Socket } from 'node:net';
import { clientAddress } from '../proxy/client-info.js';

/** Enough for a busy client (a thousand watches), far below what the process may open. */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 2048;

/**
 * At most `max` open connections per client address, counted across all of kapi's listeners, so one client cannot
 * hold every socket the process may open. A connection over the cap is closed at once, before anything is read from
 * it. Addresses of trusted proxies are not capped: behind an ingress or a console backend, many users share them.
 */
export class ConnectionCap {
  private readonly open = new Map<string, number>();
  /** Addresses being refused, so each spell of refusals is reported once. */
  private readonly refusing = new Set<string>();
  private readonly exempt = new BlockList();

  constructor(
    /** 0: no cap. */
    private readonly max: number,
    exemptAddresses: readonly string[] = [],
    /** Called when an address starts being refused (not for every refused connection). */
    private readonly onRefusing: (address: string) => void = () => undefined,
  ) {
    for (const entry of exemptAddresses) {
      const [address = '', prefix] = entry.split('/');
      const type = isIPv4(address) ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.exempt.addAddress(address, type);
      else this.exempt.addSubnet(address, Number(prefix), type);
    }
  }

  /** Counts a connection from `address`; false when it is over the cap (then it is not counted). */
  admit(address: string): boolean {
    if (this.max === 0 || this.isExempt(address)) return true;
    const count = (this.open.get(address) ?? 0) + 1;
    if (count > this.max) {
      if (!this.refusing.has(address)) {
        this.refusing.add(address);
        this.onRefusing(address);
      }
      return false;
    }
    this.open.set(address, count);
    return true;
  }

  /** A counted connection from `address` closed. */
  release(address: string): void {
    const count = this.open.get(address);
    if (count === undefined) return;
    if (count <= 1) this.open.delete(address);
    else this.open.set(address, count - 1);
    if (count <= this.max) this.refusing.delete(address);
  }

  /** Connections counted for `address` now. */
  openFrom(address: string): number {
    return this.open.get(address) ?? 0;
  }

  /** Admits a new socket and releases it when it closes, or destroys it at once when over the cap. */
  track(socket: Socket): void {
    const address = clientAddress(socket);
    if (address === undefined) return;
    if (!this.admit(address)) {
      socket.destroy();
      return;
    }
    socket.once('close', () => this.release(address));
  }

  private isExempt(address: string): boolean {
    return this.exempt.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
  }
}
