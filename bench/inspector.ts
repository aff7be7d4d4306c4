import { createWriteStream } from 'node:fs';
import WebSocket from 'ws';

/** process.memoryUsage() of the inspected process, bytes. */
export interface HeapUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** v8.getHeapSpaceStatistics(): bytes used and held per V8 space (old, new, code, large objects…). */
  spaces?: { space: string; used: number; size: number }[];
}

const TIMEOUT_MS = 30_000;
/** A snapshot of a heap near 200 MB takes a minute or more to write on a busy machine. */
const SNAPSHOT_TIMEOUT_MS = 600_000;

/** The inspector's WebSocket URL from a process's "Debugger listening on ws://…" line. */
export function inspectorUrl(output: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
}

interface InspectorMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: unknown;
}

type Call = (method: string, params?: Record<string, unknown>, timeoutMs?: number) => Promise<Record<string, unknown>>;

async function withInspector<T>(url: string, use: (call: Call, socket: WebSocket) => Promise<T>): Promise<T> {
  const socket = new WebSocket(url, { maxPayload: 1 << 30 });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    let nextId = 1;
    const call: Call = (method, params = {}, timeoutMs = TIMEOUT_MS) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => reject(new Error(`inspector ${method}: no answer`)), timeoutMs);
        const onMessage = (data: WebSocket.RawData) => {
          const message = JSON.parse(data.toString()) as InspectorMessage;
          if (message.id !== id) return;
          clearTimeout(timer);
          socket.off('message', onMessage);
          if (message.error) reject(new Error(`inspector ${method}: ${JSON.stringify(message.error)}`));
          else resolve(message.result ?? {});
        };
        socket.on('message', onMessage);
        socket.send(JSON.stringify({ id, method, params }));
      });
    return await use(call, socket);
  } finally {
    socket.close();
  }
}

const MEMORY_EXPRESSION = `JSON.stringify({
  ...process.memoryUsage(),
  spaces: process.getBuiltinModule('v8').getHeapSpaceStatistics().map((s) => ({
    space: s.space_name, used: s.space_used_size, size: s.space_size,
  })),
})`;

/**
 * A full garbage collection in another Node process over its inspector (HeapProfiler.collectGarbage), then its
 * process.memoryUsage() and V8's heap spaces: what the process holds live, as opposed to heap V8 has not yet given
 * back.
 */
export function collectGarbage(url: string): Promise<HeapUsage> {
  return withInspector(url, async (call) => {
    await call('HeapProfiler.collectGarbage');
    const evaluated = await call('Runtime.evaluate', { expression: MEMORY_EXPRESSION, returnByValue: true });
    const value = (evaluated.result as { value?: string } | undefined)?.value;
    if (!value) throw new Error('inspector: process.memoryUsage() gave no value');
    return JSON.parse(value) as HeapUsage;
  });
}

/**
 * A heap snapshot of another Node process (HeapProfiler.takeHeapSnapshot), written to `file` as it streams in: open
 * it in Chrome's DevTools (Memory tab), or sum it with `node dist/bench/heap-summary.js <file>`.
 */
export function writeHeapSnapshot(url: string, file: string): Promise<void> {
  return withInspector(url, async (call, socket) => {
    const out = createWriteStream(file);
    const onChunk = (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as InspectorMessage;
      if (message.method === 'HeapProfiler.addHeapSnapshotChunk') out.write(String(message.params?.['chunk']));
    };
    socket.on('message', onChunk);
    try {
      await call('HeapProfiler.takeHeapSnapshot', { reportProgress: false }, SNAPSHOT_TIMEOUT_MS);
    } finally {
      socket.off('message', onChunk);
      await new Promise<void>((resolve, reject) =>
        out.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
    }
  });
}
