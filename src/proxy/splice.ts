import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { closeGracefully } from './raw-http.js';

/**
 * Bytes flow both ways until either side closes. A side that ends (FIN) ends the other's writing; a side that closes
 * for good takes the other with it once what was written has drained (or at once after an error).
 */
export function spliceSockets(client: Duplex, backend: Socket): void {
  (client as Partial<Socket>).setNoDelay?.(true);
  backend.setNoDelay(true);
  client.pipe(backend);
  backend.pipe(client);
  const follow = (closed: Duplex, other: Duplex) => {
    let failed = false;
    closed.on('error', () => (failed = true));
    closed.once('close', () => (failed ? other.destroy() : closeGracefully(other)));
  };
  follow(client, backend);
  follow(backend, client);
}
