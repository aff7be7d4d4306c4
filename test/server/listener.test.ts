/** `listen()`: the per-address connection cap on a real socket. */
import net from 'node:net';
import { ConnectionCap } from '../../src/server/connection-cap.js';
import { listen, type Listener } from '../../src/server/listener.js';

let listener: Listener;
const open: net.Socket[] = [];

afterEach(async () => {
  for (const socket of open.splice(0)) socket.destroy();
  await listener.stop(0);
});

/** A connection that is either taken (it answers a request) or closed by the server without a byte. */
function connect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(listener.port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
    open.push(socket);
  });
}

/** What the server does with a request on `socket`: its status line, or `closed` when it hangs up instead. */
function ask(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n')) resolve(received.split('\r\n')[0]!);
    });
    socket.on('close', () => resolve(received ? received.split('\r\n')[0]! : 'closed'));
    socket.on('error', () => undefined);
    socket.write('GET / HTTP/1.1\r\nHost: kapi\r\n\r\n');
  });
}

test('when an address holds as many connections as allowed, then its next one is closed unanswered until one of them ends', async () => {
  listener = await listen((_req, res) => res.end('ok'), {
    port: 0,
    host: '127.0.0.1',
    cap: new ConnectionCap(2),
  });
  const [first, second] = [await connect(), await connect()];
  expect(await ask(first)).toBe('HTTP/1.1 200 OK');
  expect(await ask(await connect())).toBe('closed');
  expect(await ask(second)).toBe('HTTP/1.1 200 OK');

  const ended = new Promise((resolve) => first.once('close', resolve));
  first.destroy();
  await ended;
  // The server sees the close a moment later: poll, as a client retrying would.
  let answer = 'closed';
  for (let attempt = 0; attempt < 100 && answer === 'closed'; attempt++) {
    answer = await ask(await connect());
    if (answer === 'closed') await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(answer).toBe('HTTP/1.1 200 OK');
});

test('when the peer is a trusted proxy, then its connections are not capped', async () => {
  listener = await listen((_req, res) => res.end('ok'), {
    port: 0,
    host: '127.0.0.1',
    cap: new ConnectionCap(1, ['127.0.0.0/8']),
  });
  const sockets = [await connect(), await connect(), await connect()];
  expect(await Promise.all(sockets.map(ask))).toEqual(Array(3).fill('HTTP/1.1 200 OK'));
});
