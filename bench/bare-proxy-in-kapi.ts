import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { bareProxy, type BareProxyOptions } from './bare-proxy-server.js';

/**
 * BENCH_BARE_PROXY_IN_KAPI=1: the bare proxy served from inside kapi's own process (loaded with `--import`), on a
 * listener of its own. Its requests then pay what kapi's process pays for being kapi (its heap of caches, its
 * collections, its other code sharing V8's caches) and none of kapi's per-request work, so kapi's CPU per request
 * splits into the two: kapi ÷ this, and this ÷ the bare proxy alone.
 *
 * The directory in KAPI_BENCH_BARE_PROXY_DIR: this writes `port` there once listening; the bench writes
 * `options.json` (which carries kapi's token for the cluster) before its first request, read then.
 */
const directory = process.env.KAPI_BENCH_BARE_PROXY_DIR;
if (directory) {
  let proxy: ReturnType<typeof bareProxy> | undefined;
  const server = http.createServer((req, res) => {
    if (!proxy) {
      // read once, then removed: it holds kapi's token for the cluster
      const file = path.join(directory, 'options.json');
      proxy = bareProxy(JSON.parse(readFileSync(file, 'utf8')) as BareProxyOptions);
      unlinkSync(file);
    }
    proxy.listener(req, res);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    // written whole, then renamed: the bench never reads half of it
    writeFileSync(path.join(directory, 'port.tmp'), String(typeof address === 'object' && address ? address.port : 0));
    renameSync(path.join(directory, 'port.tmp'), path.join(directory, 'port'));
  });
  // kapi's own shutdown waits for nothing of this listener's
  server.unref();
}
