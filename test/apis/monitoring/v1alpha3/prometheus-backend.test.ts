import { afterEach, describe, expect, test } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { PrometheusBackend } from '../../../../src/apis/monitoring/v1alpha3/prometheus.js';

/**
 * kapi's own bounds on its monitoring backend (SPEC §19's cost rules): queries in flight per replica, the timeout, the
 * answer's size and series caps, the shared cache. The backend here is a loopback server that answers as slowly or as
 * largely as a case needs (what Prometheus computes is proved against Debian's Prometheus in the e2e suite).
 */
let server: Server | undefined;
let backend: PrometheusBackend | undefined;

afterEach(async () => {
  await backend?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  backend = undefined;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as { port: number }).port}`;
}

const vector = (n: number) =>
  JSON.stringify({
    status: 'success',
    data: {
      resultType: 'vector',
      result: Array.from({ length: n }, (_, i) => ({ metric: { i: String(i) }, value: [1, '1'] })),
    },
  });

describe('the monitoring backend’s bounds', () => {
  test('when more queries are asked than the replica lets run, then at most that many are upstream at once, and all are answered', async () => {
    let running = 0;
    let most = 0;
    const endpoint = await serve((_req, res) => {
      running++;
      most = Math.max(most, running);
      setTimeout(() => {
        running--;
        res.end(vector(1));
      }, 20);
    });
    backend = new PrometheusBackend({ maxInFlight: 3 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => backend!.query({ endpoint }, `up{i="${i}"}`, { instant: 1_700_000_000 })),
    );
    expect(answers.every((answer) => 'data' in answer)).toBe(true);
    expect(most).toBe(3);
  });

  test('when the backend does not answer in time, then the query’s error says so, and the next asks again', async () => {
    let asked = 0;
    const endpoint = await serve(() => {
      asked++; // never answers
    });
    backend = new PrometheusBackend({ timeoutMs: 200 });
    const answer = await backend.query({ endpoint }, 'up', { instant: 1_700_000_000 });
    expect(answer).toEqual({ error: 'the monitoring backend did not answer within 0.2 s' });
    await backend.query({ endpoint }, 'up', { instant: 1_700_000_000 });
    // a failure is not kept
    expect(asked).toBe(2);
  });

  test('when an answer has too many series or bytes, then that query’s error, never the answer', async () => {
    const endpoint = await serve((req, res) => res.end(vector(req.url === '/api/v1/query' ? 50 : 1)));
    backend = new PrometheusBackend({ maxSeries: 10 });
    expect(await backend.query({ endpoint }, 'up', { instant: 1 })).toEqual({
      error: 'too many series (50; at most 10): name fewer resources',
    });
    const small = new PrometheusBackend({ maxAnswerBytes: 1024 });
    try {
      expect(await small.query({ endpoint }, 'up2', { instant: 1 })).toEqual({
        error: "the monitoring backend's answer is larger than 1 KiB: name fewer resources",
      });
    } finally {
      await small.close();
    }
  });

  test('when the same query is asked at times inside one cache window, then the backend is asked once; after the window, again', async () => {
    const asked: string[] = [];
    const endpoint = await serve((_req, res, body) => {
      asked.push(new URLSearchParams(body).get('time') as string);
      res.end(vector(1));
    });
    let now = 1_000_000;
    backend = new PrometheusBackend({ cacheMs: 10_000, now: () => now });
    const first = await backend.query({ endpoint }, 'up', { instant: 1_700_000_001 });
    const second = await backend.query({ endpoint }, 'up', { instant: 1_700_000_009 });
    expect(asked).toEqual(['1700000000']);
    // each answered at the time it asked
    expect('data' in first && first.data.result[0].value[0]).toBe(1 + 1);
    expect('data' in second && second.data.result[0].value[0]).toBe(1 + 9);
    await backend.query({ endpoint }, 'up', { instant: 1_700_000_010 });
    now += 10_001;
    await backend.query({ endpoint }, 'up', { instant: 1_700_000_001 });
    expect(asked).toEqual(['1700000000', '1700000010', '1700000000']);
  });

  test('when the backend needs a token, then kapi sends its own, and the answer never carries it, even echoed', async () => {
    const seen: (string | undefined)[] = [];
    const endpoint = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res.statusCode = 401;
      // a proxy in front of Prometheus that quotes what it was sent
      res.end(
        JSON.stringify({ status: 'error', errorType: 'unauthorized', error: `bad ${req.headers.authorization}` }),
      );
    });
    backend = new PrometheusBackend();
    const answer = await backend.query({ endpoint, bearerToken: 'kapi-S3cret-token' }, 'up', { instant: 1 });
    expect(seen).toEqual(['Bearer kapi-S3cret-token']);
    expect(JSON.stringify(answer)).not.toContain('kapi-S3cret-token');
    expect(answer).toEqual({ error: 'unauthorized: bad Bearer [redacted]' });
  });
});
