/** The bench's load generator: a request that is never answered is an error of the run, not a hang of it. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

describe('when the server under load stops answering', () => {
  let server: http.Server;
  let url: string;
  const held: http.ServerResponse[] = [];

  beforeAll(async () => {
    // every second request is held open and never answered
    let turn = 0;
    server = http.createServer((_req, res) => {
      if (turn++ % 2 === 1) held.push(res);
      else res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('then each unanswered request ends as a "no answer" error after the request timeout and the run finishes', async () => {
    process.env.BENCH_REQUEST_TIMEOUT_MS = '200';
    const { runLoad } = await import('../../bench/load.js');
    const result = await runLoad({
      kind: 'load',
      operation: { kind: 'request', url, expect: 200 },
      concurrency: 2,
      warmupMs: 0,
      durationMs: 300,
    });
    expect(result.latenciesNs.length).toBeGreaterThan(0); // the answered ones count
    expect(result.errorsByStatus?.['no answer']).toBeGreaterThan(0);
    expect(result.errors).toBe(result.errorsByStatus?.['no answer']);
    expect(result.firstError).toMatch(/no answer within 200 ms/);
    expect(held.length).toBeGreaterThan(0);
  });
});
