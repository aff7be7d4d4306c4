/**
 * A kubelet's log endpoint on loopback, for a real kube-apiserver without kubelets (the kit of ../shared/kube):
 * HTTPS on 127.0.0.1 (a port of its own), `GET /containerLogs/{namespace}/{pod}/{container}` with the options
 * kube-apiserver passes on from `pods/log` (kubelet-lines.ts). A Node whose status points at it (`nodeStatus()`)
 * makes kube-apiserver send it the `pods/log` of the pods bound to that node: kube-apiserver then does what it does
 * in a cluster (authorizes, validates PodLogOptions, finds the node, calls the kubelet with its client certificate
 * and streams the answer back), and only the container runtime is played.
 *
 * Exec: a bare shell (the console's container terminal) is played by the sandbox's small shell; a script with
 * arguments (`/bin/sh -c <script> <name> …`, what kapi's kubectl toolbox runs) is run for real in a pseudo-terminal
 * (util-linux `script`), with only PATH (the tools' kubectl first), HOME (a fresh directory) and TERM set: the
 * container's image is played by this machine.
 *
 * kube-apiserver must reach it by address: start it with `--kubelet-preferred-address-types=InternalIP` (make
 * e2e-real does). It does not verify the kubelet's serving certificate unless given `--kubelet-certificate-authority`,
 * so a self-signed one serves.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { generate } from 'selfsigned';
import { WebSocketServer, type RawData } from 'ws';
import { TtyShell } from '../../src/sandbox/tty-shell.js';
import { chooseProtocol, terminalSize } from '../../src/sandbox/upgrade.js';
import {
  ByteBudget,
  firstSentLine,
  KubeletError,
  parseKubeletLogQuery,
  renderKubeletLine,
  sentWhileFollowing,
  type KubeletLogOptions,
  type WrittenLine,
} from './kubelet-lines.js';

export type { WrittenLine } from './kubelet-lines.js';

const LOGS_PATH = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/;
const EXEC_PATH = /^\/exec\/([^/]+)\/([^/]+)\/([^/]+)$/;

/** An exec session kube-apiserver opened on this kubelet: where, with what command, and the sizes it was given. */
export interface ExecSession {
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  readonly command: readonly string[];
  readonly resizes: { rows: number; cols: number }[];
}

interface ContainerLogState {
  lines: WrittenLine[];
  /** Open follows of this container: each takes every line written from now on. */
  followers: Set<(line: WrittenLine) => void>;
}

export interface KubeletStandIn {
  readonly port: number;
  /** The paths and queries kube-apiserver asked for, oldest first. */
  readonly requests: readonly string[];
  /** The exec sessions kube-apiserver opened (a tty and stdin: the sandbox's small shell answers), oldest first. */
  readonly execs: readonly ExecSession[];
  /** Status fields for a Node served by this stand-in (addresses and kubelet endpoint). */
  nodeStatus(): {
    addresses: { type: string; address: string }[];
    daemonEndpoints: { kubeletEndpoint: { Port: number } };
  };
  /** Adds lines a container wrote, oldest first; open follows of that container receive them. */
  write(namespace: string, pod: string, container: string, lines: readonly WrittenLine[]): void;
  /** Stops listening and ends every open follow. */
  stop(): Promise<void>;
}

async function selfSignedLoopback(): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: 'kubelet-stand-in' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/** A command as one `sh` word list, each quoted. */
const shellQuoted = (words: readonly string[]) => words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');

/** The kubectl `make tools` fetched, for the toolbox's commands. */
const TOOLS_KUBECTL = join(process.cwd(), '.cache', 'tools', 'kubectl');

/** Runs `command` in a pseudo-terminal, its output and exit sent on the exec's channels. */
function runForReal(
  command: readonly string[],
  send: (channel: number, text: string) => void,
  ws: import('ws').WebSocket,
) {
  const home = mkdtempSync(join(tmpdir(), 'kapi-kubectl-home-'));
  const child = spawn('script', ['-qfec', shellQuoted(command), '/dev/null'], {
    env: { PATH: [TOOLS_KUBECTL, '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter), HOME: home, TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => send(1, chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => send(2, chunk.toString('utf8')));
  child.on('exit', (code) => {
    send(
      3,
      JSON.stringify(
        code === 0
          ? { metadata: {}, status: 'Success' }
          : {
              metadata: {},
              status: 'Failure',
              message: `command terminated with non-zero exit code: ${code}`,
              reason: 'NonZeroExitCode',
            },
      ),
    );
    ws.close(1000);
    // the shell `script` ran may still be writing there as the hang-up reaches it: retried, and a leftover temporary
    // directory is no failure of the test it serves
    try {
      rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch {
      // left in the system's temporary directory
    }
  });
  child.stdin.on('error', () => undefined);
  return {
    input: (data: Buffer) => child.stdin.write(data),
    // util-linux `script` outlives a SIGHUP (a kit run's jest then never exited): killed, it closes the terminal,
    // which hangs up the shell in it
    end: () => child.kill('SIGKILL'),
  };
}

export async function startKubeletStandIn(now: () => number = Date.now): Promise<KubeletStandIn> {
  const containers = new Map<string, ContainerLogState>();
  const requests: string[] = [];
  const ends = new Set<() => void>();
  const sockets = new Set<Socket>();
  const keyOf = (namespace: string, pod: string, container: string) => `${namespace}/${pod}/${container}`;

  const serve = (res: import('node:http').ServerResponse, log: ContainerLogState, options: KubeletLogOptions) => {
    const budget = new ByteBudget(options.limitBytes);
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    let text = '';
    for (let i = firstSentLine(log.lines, options); i < log.lines.length; i++) {
      text += renderKubeletLine(log.lines[i]!, options.timestamps);
    }
    if (text) res.write(budget.take(text));
    if (!options.follow || budget.spent) {
      res.end();
      return;
    }
    const end = () => {
      log.followers.delete(follower);
      ends.delete(end);
      if (!res.writableEnded) res.end();
    };
    const follower = (line: WrittenLine) => {
      if (!sentWhileFollowing(line, options)) return;
      res.write(budget.take(renderKubeletLine(line, options.timestamps)));
      if (budget.spent) end();
    };
    log.followers.add(follower);
    ends.add(end);
    res.on('close', end);
  };

  const server = https.createServer({ ...(await selfSignedLoopback()), minVersion: 'TLSv1.2' }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    requests.push(`${url.pathname}${url.search}`);
    const match = LOGS_PATH.exec(url.pathname);
    try {
      if (req.method !== 'GET' || !match) throw new KubeletError(404, '404 page not found');
      const [namespace, pod, container] = match.slice(1).map(decodeURIComponent) as [string, string, string];
      const options = parseKubeletLogQuery(url.searchParams, now());
      const podKnown = [...containers.keys()].some((key) => key.startsWith(`${namespace}/${pod}/`));
      if (!podKnown) throw new KubeletError(404, `pod "${pod}" does not exist`);
      const log = containers.get(keyOf(namespace, pod, container));
      if (!log) throw new KubeletError(404, `container "${container}" not found in pod "${pod}"`);
      if (options.previous) {
        throw new KubeletError(400, `previous terminated container "${container}" in pod "${pod}" not found`);
      }
      serve(res, log, options);
    } catch (error) {
      const answer = error instanceof KubeletError ? error : new KubeletError(500, String(error));
      res.writeHead(answer.status, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(answer.message);
    }
  });
  // exec, as kubelet serves it over WebSocket (kube's channel protocols; kube-apiserver passes a v4 upgrade through)
  const execs: ExecSession[] = [];
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (offered) => chooseProtocol(offered) });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    requests.push(`${url.pathname}${url.search}`);
    const match = EXEC_PATH.exec(url.pathname);
    const [namespace, pod, container] = (match?.slice(1) ?? []).map(decodeURIComponent) as [string, string, string];
    if (!match || ![...containers.keys()].some((key) => key.startsWith(`${namespace}/${pod}/${container}`))) {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const session: ExecSession = {
        namespace,
        pod,
        container,
        command: url.searchParams.getAll('command'),
        resizes: [],
      };
      execs.push(session);
      const send = (channel: number, text: string) =>
        ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(text)]));
      if (session.command.length > 3 && session.command[1] === '-c') {
        const process = runForReal(session.command, send, ws);
        ws.on('message', (raw: RawData) => {
          const frame = Buffer.isBuffer(raw) ? raw : Buffer.concat(raw as Buffer[]);
          if (frame[0] === 0) process.input(frame.subarray(1));
          else if (frame[0] === 4) {
            const size = terminalSize(frame.subarray(1));
            if (size) session.resizes.push(size);
          }
        });
        const end = () => {
          ends.delete(end);
          process.end();
        };
        ends.add(end);
        ws.on('close', end);
        ws.on('error', () => ws.terminate());
        return;
      }
      const shell = new TtyShell();
      send(1, shell.start());
      ws.on('message', (raw: RawData) => {
        const frame = Buffer.isBuffer(raw) ? raw : Buffer.concat(raw as Buffer[]);
        const channel = frame[0];
        const data = frame.subarray(1);
        if (channel === 4) {
          const size = terminalSize(data);
          if (size) {
            session.resizes.push(size);
            shell.resize(size.rows, size.cols);
          }
        } else if (channel === 0) {
          const shown = shell.input(data.toString('utf8'));
          if (shown) send(1, shown);
          if (shell.exited) {
            send(3, JSON.stringify({ metadata: {}, status: 'Success' }));
            ws.close(1000);
          }
        }
      });
      ws.on('error', () => ws.terminate());
    });
  });
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    port,
    requests,
    execs,
    nodeStatus: () => ({
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
      daemonEndpoints: { kubeletEndpoint: { Port: port } },
    }),
    write(namespace, pod, container, lines) {
      const key = keyOf(namespace, pod, container);
      let log = containers.get(key);
      if (!log) containers.set(key, (log = { lines: [], followers: new Set() }));
      for (const line of lines) {
        log.lines.push(line);
        for (const follower of [...log.followers]) follower(line);
      }
    },
    async stop() {
      for (const end of [...ends]) end();
      for (const client of wss.clients) client.terminate();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
