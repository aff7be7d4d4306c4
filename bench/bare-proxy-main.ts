import http from 'node:http';
import { childOptions } from './child-process.js';
import { bareProxy, type BareProxyOptions } from './bare-proxy-server.js';

/** The bare proxy (bare-proxy-server.ts) in a process of its own; prints `{"port":N}` when listening. */
const proxy = bareProxy(childOptions<BareProxyOptions>());
const server = http.createServer(proxy.listener);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  proxy.close();
  server.closeAllConnections();
});
