import http from 'node:http';
import https from 'node:https';
import { REQUEST_TIMEOUT_MS, describeAnswer, sendJson } from './http.js';
import type { DirectNodePageOperation, Operation, RequestOperation } from './jobs.js';
import { isHttps } from './tls.js';

/** One operation, ready to run again and again over a shared keep-alive agent. Rejects on any unexpected answer. */
export type OperationRunner = () => Promise<void>;

export function operationRunner(operation: Operation, agent: http.Agent): OperationRunner {
  return operation.kind === 'request' ? requestRunner(operation, agent) : () => directNodePage(operation, agent).then();
}

/** The URL is parsed once; each run only sends and drains (https agents carry the backend trust). The body is read (not parsed) so timing includes it. */
function requestRunner(operation: RequestOperation, agent: http.Agent): OperationRunner {
  const url = new URL(operation.url);
  const headers: Record<string, string | string[]> = { ...operation.headers };
  if (operation.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(operation.body));
  const options: http.RequestOptions = {
    host: url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    method: operation.method ?? 'GET',
    headers,
    agent,
  };
  const send = isHttps(operation.url) ? https.request : http.request;
  const bodies = operation.bodies;
  let turn = Math.floor(Math.random() * (bodies?.length ?? 1));
  return () =>
    new Promise<void>((resolve, reject) => {
      let body = operation.body;
      let requestOptions = options;
      if (bodies && bodies.length > 0) {
        body = bodies[turn++ % bodies.length]!;
        requestOptions = { ...options, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } };
      }
      const req = send(requestOptions, (res) => {
        if (res.statusCode === operation.expect) {
          res.on('end', resolve);
          res.on('error', reject);
          res.resume();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          reject(new Error(describeAnswer({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }))),
        );
      });
      req.on('error', reject);
      // counted as an error ("no answer"), and the caller goes on
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      req.end(body);
    });
}

interface NodeList {
  metadata?: { continue?: string };
  items: { metadata: { name: string } }[];
}

/** Lists every matching Node (paged as asked), sorts by name and takes the page: the names, in order. */
export async function directNodePage(operation: DirectNodePageOperation, agent?: http.Agent): Promise<string[]> {
  const headers = operation.headers;
  const names: string[] = [];
  let next = '';
  do {
    const query = new URLSearchParams({ labelSelector: operation.labelSelector });
    if (operation.pageSize > 0) query.set('limit', String(operation.pageSize));
    if (next) query.set('continue', next);
    const list = await sendJson<NodeList>(`${operation.server}/api/v1/nodes?${query}`, { headers, agent });
    for (const item of list.items) names.push(item.metadata.name);
    next = list.metadata?.continue ?? '';
  } while (next);
  names.sort();
  if (operation.descending) names.reverse();
  return names.slice(0, operation.take);
}
