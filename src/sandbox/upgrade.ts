import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { badRequest } from './status.js';
import { TtyShell } from './tty-shell.js';

/**
 * exec, attach and portforward as an echo server, so tests can prove an upgrade passes end to end through a proxy:
 * - WebSocket with kube's channel protocols (v5/v4/v3/v2.channel.k8s.io, channel.k8s.io, base64.channel.k8s.io):
 *   what arrives on stdin (channel 0) comes back on stdout (channel 1); closing stdin (v5) or a command without stdin
 *   ends with a Success status on the error channel (3), as kubelet reports a finished command. For portforward the
 *   data channel echoes back on itself after the usual port-number preamble.
 * - `Upgrade: SPDY/3.1`: a 101 with the same Upgrade header, then every byte is echoed back raw (no SPDY framing).
 * An exec with a tty and stdin (a terminal) reaches a small shell instead (tty-shell.ts): a prompt, typed bytes echoed,
 * lines run, the resize channel (4) heard.
 */
export const CHANNEL_PROTOCOLS = [
  'v5.channel.k8s.io',
  'v4.channel.k8s.io',
  'v3.channel.k8s.io',
  'v2.channel.k8s.io',
  'channel.k8s.io',
  'base64.channel.k8s.io',
];

const STDIN = 0;
const STDOUT = 1;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;
const SUCCESS = JSON.stringify({ metadata: {}, status: 'Success' });

export type UpgradeKind = 'exec' | 'attach' | 'portforward';

/** The protocol kube would pick: the client's first offer that the server speaks. */
export function chooseProtocol(offered: Set<string>): string | false {
  for (const protocol of offered) if (CHANNEL_PROTOCOLS.includes(protocol)) return protocol;
  return false;
}

export class UpgradeEcho {
  private readonly wss = new WebSocketServer({ noServer: true, handleProtocols: (offered) => chooseProtocol(offered) });
  private readonly sockets = new Set<Duplex>();

  /** Completes the upgrade; the request is already authenticated, authorized and aimed at an existing pod. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer, kind: UpgradeKind, query: URLSearchParams): void {
    const upgrade = (req.headers.upgrade ?? '').toLowerCase();
    if (upgrade === 'websocket') {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.echoChannels(ws, kind, query));
      return;
    }
    if (upgrade.startsWith('spdy/')) {
      this.echoSpdy(req, socket, head);
      return;
    }
    throw badRequest(`unsupported upgrade protocol "${req.headers.upgrade ?? ''}"`);
  }

  /** Ends every upgraded connection (sandbox stop). */
  closeAll(): void {
    for (const client of this.wss.clients) client.terminate();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  private echoSpdy(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const offered = (req.headersDistinct['x-stream-protocol-version'] ?? []).flatMap((v) =>
      v.split(',').map((p) => p.trim()),
    );
    const chosen = offered.find((p) => p.length > 0);
    const lines = ['HTTP/1.1 101 Switching Protocols', 'Connection: Upgrade', `Upgrade: ${req.headers.upgrade}`];
    if (chosen) lines.push(`X-Stream-Protocol-Version: ${chosen}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (head.length) socket.write(head);
    socket.pipe(socket);
  }

  private echoChannels(ws: WebSocket, kind: UpgradeKind, query: URLSearchParams): void {
    const base64 = ws.protocol === 'base64.channel.k8s.io';
    const send = (channel: number, data: Buffer): void => {
      if (base64) ws.send(`${String.fromCharCode(48 + channel)}${data.toString('base64')}`);
      else ws.send(Buffer.concat([Buffer.from([channel]), data]));
    };
    const finish = (): void => {
      if (kind !== 'portforward') send(ERROR, Buffer.from(SUCCESS));
      ws.close(1000);
    };
    ws.on('error', () => ws.terminate());

    if (kind === 'portforward') {
      const port = Number((query.get('ports') ?? '').split(',')[0]) || 80;
      const preamble = Buffer.from([port & 255, port >> 8]);
      send(0, preamble);
      send(1, preamble);
    } else if (!flag(query, 'stdin')) {
      // No stdin: the "command" prints its own command line and exits 0.
      const command = query.getAll('command').join(' ');
      if (command) send(STDOUT, Buffer.from(`${command}\n`));
      finish();
      return;
    }

    const shell = kind === 'exec' && flag(query, 'tty') ? new TtyShell() : undefined;
    if (shell) send(STDOUT, Buffer.from(shell.start()));

    ws.on('message', (raw: RawData, isBinary: boolean) => {
      const frame = toBuffer(raw);
      if (frame.length === 0) return;
      let channel: number;
      let data: Buffer;
      if (base64 && !isBinary) {
        channel = frame[0]! - 48;
        data = Buffer.from(frame.subarray(1).toString('utf8'), 'base64');
      } else {
        channel = frame[0]!;
        data = frame.subarray(1);
      }
      if (channel === CLOSE) {
        if (data[0] === STDIN) finish();
        return;
      }
      if (shell && channel === RESIZE) {
        const size = terminalSize(data);
        if (size) shell.resize(size.rows, size.cols);
        return;
      }
      if (channel !== STDIN || data.length === 0) return;
      if (!shell) return void send(kind === 'portforward' ? 0 : STDOUT, data);
      const shown = shell.input(data.toString('utf8'));
      if (shown) send(STDOUT, Buffer.from(shown));
      if (shell.exited) finish();
    });
  }
}

/** A query flag as kube-apiserver reads it (`true` or `1`). */
function flag(query: URLSearchParams, name: string): boolean {
  return query.get(name) === 'true' || query.get(name) === '1';
}

/** A resize message (`{"Width":…,"Height":…}`, as client-go sends it on channel 4); undefined when it is not one. */
export function terminalSize(data: Buffer): { rows: number; cols: number } | undefined {
  try {
    const size = JSON.parse(data.toString('utf8')) as { Width?: unknown; Height?: unknown };
    const valid = (n: unknown): n is number => Number.isInteger(n) && (n as number) > 0 && (n as number) <= 65535;
    return valid(size.Width) && valid(size.Height) ? { rows: size.Height, cols: size.Width } : undefined;
  } catch {
    return undefined;
  }
}

function toBuffer(raw: RawData): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw);
  return Buffer.from(raw);
}
