import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

export interface Listener {
  readonly server: http.Server | https.Server;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then cuts what is left (watches). */
  stop(graceMs?: number): Promise<void>;
}

/** Starts an HTTP(S) server and keeps track of its sockets so shutdown can drain them. */
export async function listen(
  handler: http.RequestListener,
  options: {
    port: number;
    host: string;
    tls?: https.ServerOptions;
    /** Which Upgrade requests leave Express (exec, watch over WebSocket) and who takes them. */
    upgrade?: {
      should(req: http.IncomingMessage): boolean;
      handle(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
    };
  },
): Promise<Listener> {
  // Without shouldUpgradeCallback Node hands every Upgrade request (h2c included) to the 'upgrade' listener.
  const upgradeOptions = options.upgrade ? { shouldUpgradeCallback: options.upgrade.should } : {};
  const server = options.tls
    ? https.createServer({ minVersion: 'TLSv1.2', ...options.tls, ...upgradeOptions }, handler)
    : http.createServer(upgradeOptions, handler);
  if (options.upgrade) server.on('upgrade', options.upgrade.handle);
  // Long watches are the norm here: no request timeout; idle keep-alive sockets still close.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    stop: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        const timer = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, graceMs);
        timer.unref();
        server.once('close', () => clearTimeout(timer));
      }),
  };
}
