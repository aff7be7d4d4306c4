import WebSocket from 'ws';

/** process.memoryUsage() of the inspected process, bytes. */
export interface HeapUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const TIMEOUT_MS = 30_000;

/** The inspector's WebSocket URL from a process's "Debugger listening on ws://…" line. */
export function inspectorUrl(output: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
}

/**
 * A full garbage collection in another Node process over its inspector (HeapProfiler.collectGarbage), then its
 * process.memoryUsage(): what the process holds live, as opposed to heap V8 has not yet given back.
 */
export async function collectGarbage(url: string): Promise<HeapUsage> {
  const socket = new WebSocket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    let nextId = 1;
    const call = (method: string, params: Record<string, unknown> = {}) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => reject(new Error(`inspector ${method}: no answer`)), TIMEOUT_MS);
        const onMessage = (data: WebSocket.RawData) => {
          const message = JSON.parse(data.toString()) as {
            id?: number;
            result?: Record<string, unknown>;
            error?: unknown;
          };
          if (message.id !== id) return;
          clearTimeout(timer);
          socket.off('message', onMessage);
          if (message.error) reject(new Error(`inspector ${method}: ${JSON.stringify(message.error)}`));
          else resolve(message.result ?? {});
        };
        socket.on('message', onMessage);
        socket.send(JSON.stringify({ id, method, params }));
      });
    await call('HeapProfiler.collectGarbage');
    const evaluated = await call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    const value = (evaluated.result as { value?: string } | undefined)?.value;
    if (!value) throw new Error('inspector: process.memoryUsage() gave no value');
    return JSON.parse(value) as HeapUsage;
  } finally {
    socket.close();
  }
}
