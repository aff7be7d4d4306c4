/**
 * Raw HTTP to the backend itself (the sandbox or the cluster's kube-apiserver), as its admin or with no credentials at
 * all: status, headers and body exactly as sent, for cases that pin down what kube-apiserver answers so the sandbox
 * answers the same.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeClient } from '../../src/kube/client.js';

export interface BackendAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface BackendRequest {
  method?: string;
  path: string;
  body?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Send no credentials (kube-apiserver then sees system:anonymous). */
  anonymous?: boolean;
}

export async function backendRequest(admin: KubeClient, request: BackendRequest): Promise<BackendAnswer> {
  const { connection } = admin;
  const url = new URL(connection.server.pathname.replace(/\/+$/, '') + request.path, connection.server);
  const headers: Record<string, string> = {
    Accept: 'application/json',
    ...(request.anonymous ? {} : await connection.authHeaders()),
    ...request.headers,
  };
  if (request.body !== undefined) {
    headers['Content-Type'] = request.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(request.body));
  }
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    // A fresh connection: a 413 may close it, and a shared keep-alive agent must not inherit that.
    const agentOptions = (connection.agent as https.Agent).options ?? {};
    const req = send(
      url,
      {
        method: request.method ?? 'GET',
        headers,
        agent: false,
        ca: agentOptions.ca,
        cert: agentOptions.cert,
        key: agentOptions.key,
        rejectUnauthorized: agentOptions.rejectUnauthorized,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

/** A `Status` body without its trailing newline (Go's encoder ends with one, the sandbox's not). */
export function statusOf(answer: BackendAnswer): Record<string, unknown> {
  return JSON.parse(answer.body) as Record<string, unknown>;
}
