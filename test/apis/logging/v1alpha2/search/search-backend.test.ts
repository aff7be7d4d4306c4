import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseInterval } from '../../../../../src/apis/logging/v1alpha2/interval.js';
import type { LogSearch } from '../../../../../src/apis/logging/v1alpha2/log-backend.js';
import { FLUENT_BIT_FIELDS } from '../../../../../src/apis/logging/v1alpha2/search/fields.js';
import {
  SearchBackend,
  type SearchCredentials,
} from '../../../../../src/apis/logging/v1alpha2/search/search-backend.js';
import { BadRequestError, ServiceUnavailableError } from '../../../../../src/server/errors.js';
import { loadServingCertificate } from '../../../../../src/server/tls.js';

/**
 * A stand-in OpenSearch over HTTPS answering the few endpoints the backend uses, recording each request. Real
 * OpenSearch runs in the e2e suite (KAPI_LOG_SEARCH_URL); this one checks the client wiring: TLS with the CA,
 * credentials, index names, scrolls and how failures are reported.
 */
interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: Record<string, unknown> | undefined;
}

const doc = (n: number) => ({
  _source: {
    log: `line ${n}\n`.trimEnd(),
    time: `2023-11-14T22:13:${String(n).padStart(2, '0')}.000Z`,
    kubernetes: { namespace_name: 'demo', pod_name: 'web-1', container_name: 'app', docker_id: 'c1' },
  },
});

let server: https.Server;
let ca: string;
let url: string;
const seen: Seen[] = [];
let answer: (seen: Seen) => { status: number; body: unknown } = () => ({ status: 200, body: {} });

beforeAll(async () => {
  const certificate = await loadServingCertificate({
    certFile: undefined,
    keyFile: undefined,
    secret: undefined,
    caOut: join(mkdtempSync(join(tmpdir(), 'kapi-search-')), 'ca.crt'),
    hosts: [],
  });
  ca = certificate.ca!;
  server = https.createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const request: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
      };
      seen.push(request);
      const { status, body } = answer(request);
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function backend(credentials: () => Promise<SearchCredentials>, exportPageSize = 2): SearchBackend {
  return new SearchBackend({
    url,
    indexPrefix: 'ks-logstash-log',
    fields: FLUENT_BIT_FIELDS,
    credentials,
    exportPageSize,
  });
}

const search = (signal = new AbortController().signal): LogSearch => ({
  filter: { startTime: 1_699_990_000, endTime: 1_700_000_000, pods: ['web-1'] },
  scope: { kind: 'all' },
  signal,
});

describe('SearchBackend', () => {
  it('when a page is asked, then the store is asked over verified TLS with the credentials, and records come back', async () => {
    seen.length = 0;
    answer = () => ({ status: 200, body: { hits: { total: { value: 42, relation: 'eq' }, hits: [doc(1), doc(2)] } } });
    const store = backend(async () => ({ username: 'kapi', password: 's3cret', ca }));
    const { result } = await store.query(search(), { from: 0, size: 2, sort: 'desc' });
    expect(result).toEqual({
      total: 42,
      records: [
        { log: 'line 1', time: '2023-11-14T22:13:01.000Z', namespace: 'demo', pod: 'web-1', container: 'app' },
        { log: 'line 2', time: '2023-11-14T22:13:02.000Z', namespace: 'demo', pod: 'web-1', container: 'app' },
      ],
    });
    expect(seen[0]!.method).toBe('POST');
    expect(decodeURIComponent(seen[0]!.url)).toMatch(/^\/ks-logstash-log-2023\.11\.14\/_search\?/);
    expect(seen[0]!.url).toContain('ignore_unavailable=true');
    expect(seen[0]!.authorization).toBe(`Basic ${Buffer.from('kapi:s3cret').toString('base64')}`);
    expect(seen[0]!.body).toMatchObject({ from: 0, size: 2, sort: [{ time: { order: 'desc' } }] });
    await store.close();
  });

  it('when the store certificate is not signed by the given CA, then it is not trusted', async () => {
    const store = backend(async () => ({}));
    await expect(store.statistics(search())).rejects.toThrow(ServiceUnavailableError);
    await expect(store.statistics(search())).rejects.toThrow(/could not be reached/);
    await store.close();
  });

  it('when statistics and a histogram are asked, then aggregations are read', async () => {
    answer = (request) =>
      request.body?.aggs && 'containers' in (request.body.aggs as object)
        ? { status: 200, body: { hits: { total: { value: 7 } }, aggregations: { containers: { value: 3 } } } }
        : {
            status: 200,
            body: {
              hits: { total: { value: 7 } },
              aggregations: {
                histogram: {
                  buckets: [
                    { key: 1000, doc_count: 4 },
                    { key: 2000, doc_count: 3 },
                  ],
                },
              },
            },
          };
    const store = backend(async () => ({ ca }));
    expect((await store.statistics(search())).result).toEqual({ containers: 3, logs: 7 });
    expect((await store.histogram(search(), parseInterval('1h'))).result).toEqual({
      total: 7,
      histograms: [
        { time: 1000, count: 4 },
        { time: 2000, count: 3 },
      ],
    });
    await store.close();
  });

  it('when an export runs, then it scrolls page by page and frees the scroll at the end', async () => {
    seen.length = 0;
    const pages = [[doc(1), doc(2)], [doc(3)], []];
    answer = (request) =>
      request.method === 'DELETE'
        ? { status: 200, body: { succeeded: true } }
        : { status: 200, body: { _scroll_id: 'scroll-1', hits: { hits: pages.shift() ?? [] } } };
    const store = backend(async () => ({ ca }));
    const written: string[] = [];
    await store.export(search(), 'asc', async (text) => {
      written.push(text);
    });
    expect(written).toEqual(['line 1\nline 2\n', 'line 3\n']);
    expect(seen.map((s) => `${s.method} ${s.url.split('?')[0]}`)).toEqual([
      'POST /ks-logstash-log-2023.11.14/_search',
      'POST /_search/scroll',
      'POST /_search/scroll',
      'DELETE /_search/scroll',
    ]);
    expect(seen[0]!.url).toContain('scroll=1m');
    await store.close();
  });

  it('when the client goes away during an export, then no further page is asked and the scroll is freed', async () => {
    seen.length = 0;
    answer = (request) =>
      request.method === 'DELETE'
        ? { status: 200, body: {} }
        : { status: 200, body: { _scroll_id: 'scroll-2', hits: { hits: [doc(1)] } } };
    const store = backend(async () => ({ ca }));
    const controller = new AbortController();
    const exporting = store.export(search(controller.signal), 'desc', async () => {
      controller.abort(new Error('the client went away'));
    });
    await expect(exporting).rejects.toThrow('the client went away');
    expect(seen.map((s) => s.method)).toEqual(['POST', 'DELETE']);
    await store.close();
  });

  it('when the store refuses the credentials, then it is a 503 and they are read again next time', async () => {
    let reads = 0;
    answer = () => ({ status: 401, body: { error: { reason: 'unauthorized' } } });
    const store = backend(async () => {
      reads++;
      return { username: 'kapi', password: 'old', ca };
    });
    await expect(store.query(search(), { from: 0, size: 1, sort: 'desc' })).rejects.toThrow(
      /refused kapi's credentials/,
    );
    await expect(store.query(search(), { from: 0, size: 1, sort: 'desc' })).rejects.toThrow(ServiceUnavailableError);
    expect(reads).toBe(2);
    await store.close();
  });

  it('when the store rejects the query, then it is a 400 with its reason and no credentials in it', async () => {
    answer = () => ({
      status: 400,
      body: { error: { root_cause: [{ reason: 'failed to create query: bad regexp' }] } },
    });
    const store = backend(async () => ({ username: 'kapi', password: 's3cret', ca }));
    const attempt = store.query(search(), { from: 0, size: 1, sort: 'desc' });
    await expect(attempt).rejects.toThrow(BadRequestError);
    await expect(attempt).rejects.toThrow(/bad regexp/);
    await attempt.catch((error: Error) => expect(error.message).not.toContain('s3cret'));
    await store.close();
  });
});
