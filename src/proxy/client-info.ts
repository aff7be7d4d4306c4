import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** Counts streams being relayed (watches, exec sessions); `Metrics.activeWatches` fits. */
export interface StreamGauge {
  inc(): void;
  dec(): void;
}

/** The caller's IP as kapi's socket saw it; IPv4-mapped IPv6 written as plain IPv4. */
export function clientAddress(socket: Socket): string | undefined {
  const address = socket.remoteAddress;
  return address?.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export function clientProto(socket: Socket): 'http' | 'https' {
  return (socket as Partial<TLSSocket>).encrypted ? 'https' : 'http';
}
