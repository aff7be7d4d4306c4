import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { StreamKind } from './request-kind.js';

/** Counts streams being relayed (watches, log follows, exec sessions) by kind; `Metrics.streams` fits. */
export interface StreamGauge {
  inc(kind: StreamKind): void;
  dec(kind: StreamKind): void;
}

/** The caller's IP as kapi's socket saw it; IPv4-mapped IPv6 written as plain IPv4. */
export function clientAddress(socket: Socket): string | undefined {
  const address = socket.remoteAddress;
  return address?.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export function clientProto(socket: Socket): 'http' | 'https' {
  return (socket as Partial<TLSSocket>).encrypted ? 'https' : 'http';
}
