import type { IncomingMessage, ServerResponse } from 'node:http';
import { AuthorizationDenied, PageNotFound, requestEntityTooLarge, StatusError, type Status } from './status.js';

/** kube-apiserver's request body limit (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** Go's net/http rstAvoidanceDelay: how long a connection closed for writing waits before it is closed for good. */
const RST_AVOIDANCE_DELAY_MS = 500;

/**
 * One request and its response. Every answer goes through here, so the status code is reported exactly once (for the
 * audit trail) when the response head is decided, including for streams that stay open.
 */
export class Exchange {
  private responded = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly url: URL,
    private readonly onResponse: (code: number) => void,
    /** Sent back as `Audit-Id`, as kube-apiserver does. */
    private readonly auditId: string,
    private readonly rstAvoidanceDelayMs = RST_AVOIDANCE_DELAY_MS,
  ) {}

  get isHead(): boolean {
    return this.req.method === 'HEAD';
  }

  private head(code: number, headers: Record<string, string | number>): void {
    if (!this.responded) {
      this.responded = true;
      this.onResponse(code);
    }
    this.res.writeHead(code, { 'Audit-Id': this.auditId, 'Cache-Control': 'no-cache, private', ...headers });
  }

  sendJson(code: number, json: string): void {
    if (this.res.headersSent) return;
    this.head(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
    this.res.end(this.isHead ? undefined : json);
  }

  /** Sends a JSON document assembled from many pieces, in a few large writes rather than one huge string. */
  sendJsonParts(code: number, parts: readonly string[]): void {
    if (this.res.headersSent) return;
    const total = parts.reduce((n, p) => n + p.length, 0);
    if (total < 1 << 20) {
      this.sendJson(code, parts.join(''));
      return;
    }
    this.head(code, { 'Content-Type': 'application/json' });
    if (this.isHead) {
      this.res.end();
      return;
    }
    let batch: string[] = [];
    let size = 0;
    for (const part of parts) {
      batch.push(part);
      size += part.length;
      if (size >= 256 * 1024) {
        this.res.write(batch.join(''));
        batch = [];
        size = 0;
      }
    }
    this.res.end(batch.join(''));
  }

  /** 204 without a body: kube's answer for a stream it has no source for (the log of a pod on no node). */
  sendNoContent(): void {
    if (this.res.headersSent) return;
    this.head(204, {});
    this.res.end();
  }

  sendText(code: number, text: string): void {
    if (this.res.headersSent) return;
    this.head(code, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(text) });
    this.res.end(this.isHead ? undefined : text);
  }

  sendObject(code: number, value: unknown): void {
    this.sendJson(code, JSON.stringify(value));
  }

  sendStatus(status: Status, code = status.code ?? 200): void {
    this.sendObject(code, status);
  }

  sendError(err: StatusError): void {
    const headers: Record<string, string> = {};
    if (err.details?.retryAfterSeconds) headers['Retry-After'] = String(err.details.retryAfterSeconds);
    // kube-apiserver's forbidden responder and Go's http.Error both send it.
    if (err instanceof AuthorizationDenied || err instanceof PageNotFound)
      headers['X-Content-Type-Options'] = 'nosniff';
    if (this.res.headersSent) {
      this.res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(headers)) this.res.setHeader(name, value);
    if (err instanceof PageNotFound) {
      // Go's http.NotFound: text, with a newline.
      const text = `${err.message}\n`;
      this.head(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
      this.res.end(this.isHead ? undefined : text);
      return;
    }
    this.sendObject(err.code, err.toStatus());
  }

  /** Opens a streamed (chunked) response: watches, followed logs. */
  startStream(code: number, contentType: string): void {
    this.head(code, { 'Content-Type': contentType, 'Transfer-Encoding': 'chunked' });
    this.res.flushHeaders();
    this.res.socket?.setNoDelay(true);
  }

  /**
   * Reads the whole body, refusing more than kube's limit with 413, declared or chunked alike. Then, as Go's server
   * does after an answer that left much of the body unread, the connection is closed for writing and cut a moment
   * later, so the client can read the answer before any reset.
   */
  readBody(): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const tooLarge = () => {
        this.req.off('data', take);
        this.req.resume();
        const socket = this.req.socket;
        this.res.once('finish', () => {
          socket.end();
          setTimeout(() => socket.destroy(), this.rstAvoidanceDelayMs).unref();
        });
        reject(requestEntityTooLarge(MAX_BODY_BYTES));
      };
      const chunks: Buffer[] = [];
      let size = 0;
      const take = (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) return tooLarge();
        chunks.push(chunk);
      };
      if (Number(this.req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return tooLarge();
      this.req.on('data', take);
      this.req.on('end', () => resolve(Buffer.concat(chunks)));
      this.req.on('error', reject);
    });
  }
}

/** An error answer written straight onto a socket, for upgrade requests that never got a ServerResponse. */
export function rawErrorResponse(err: StatusError): string {
  const body = JSON.stringify(err.toStatus());
  const reasons: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    405: 'Method Not Allowed',
    500: 'Internal Server Error',
  };
  return [
    `HTTP/1.1 ${err.code} ${reasons[err.code] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}
