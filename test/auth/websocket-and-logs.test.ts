import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import WebSocket, { WebSocketServer } from 'ws';
import { ApiError } from '../../src/server/errors.js';
import type { UserInfo } from '../../src/auth/identity.js';
import { staticKey } from './fakes.js';
import { client, login, refresh, testIdentity, tokenRequest, type TestIdentity } from './identity-app.js';

const PROTOCOL = 'v4.channel.k8s.io';
const carrying = (token: string) => `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`;

/** An upgrade endpoint as the forwarder builds it: authenticate the raw request, then accept the WebSocket. */
async function upgradeServer(t: TestIdentity): Promise<{ url: string; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has(PROTOCOL) ? PROTOCOL : false),
  });
  const server = http.createServer();
  server.on('upgrade', (req, socket, head) => {
    // an authenticator may answer at once or later; a refusal may be thrown or a rejection
    new Promise<UserInfo>((resolve) => resolve(t.identity.authenticateRequest(req))).then(
      (user) => {
        seen.push(String(req.headers['sec-websocket-protocol']));
        wss.handleUpgrade(req, socket, head, (ws) => ws.send(user.username));
      },
      (err: unknown) => {
        const code = err instanceof ApiError ? err.code : 500;
        socket.end(`HTTP/1.1 ${code} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/api/v1/namespaces/default/pods/web/exec`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function connect(url: string, protocols: string[]): Promise<{ message?: string; status?: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    const timer = setTimeout(() => reject(new Error('no answer in 5 s')), 5000);
    ws.on('message', (data) => {
      clearTimeout(timer);
      resolve({ message: String(data) });
      ws.close();
    });
    ws.on('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      resolve({ status: res.statusCode });
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

describe('WebSocket upgrades', () => {
  test('when the access token comes as the bearer subprotocol, then the upgrade is authenticated and the token entry removed', async () => {
    const t = testIdentity();
    t.users.add('alice', { password: 'alice-pw' });
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const server = await upgradeServer(t);
    try {
      await expect(connect(server.url, [carrying(tokens.access_token), PROTOCOL])).resolves.toEqual({
        message: 'alice',
      });
      // what would be forwarded no longer carries the token
      expect(server.seen).toEqual([PROTOCOL]);
    } finally {
      await server.close();
    }
  });

  test('when the subprotocol carries a refresh token or garbage, then the upgrade is refused with 401', async () => {
    const t = testIdentity();
    t.users.add('alice', { password: 'alice-pw' });
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const server = await upgradeServer(t);
    try {
      await expect(connect(server.url, [carrying(tokens.refresh_token), PROTOCOL])).resolves.toEqual({ status: 401 });
      await expect(connect(server.url, [carrying('garbage'), PROTOCOL])).resolves.toEqual({ status: 401 });
      await expect(connect(server.url, [PROTOCOL])).resolves.toEqual({ status: 401 });
    } finally {
      await server.close();
    }
  });
});

describe('login metrics', () => {
  test('when token requests end, then each outcome is reported by grant and result', async () => {
    const outcomes: string[] = [];
    const t = testIdentity({ onLogin: (grant, result) => outcomes.push(`${grant}:${result}`) });
    t.users.add('alice', { password: 'alice-pw' });
    const tokens = await login(t.app, 'alice', 'alice-pw');
    await tokenRequest(t.app, { grant_type: 'password', username: 'alice', password: 'no', ...client });
    await refresh(t.app, tokens.refresh_token);
    await tokenRequest(t.app, { grant_type: 'magic', ...client });
    expect(outcomes).toEqual(['password:success', 'password:failure', 'refresh_token:success', 'other:failure']);
  });
});

describe('log hygiene', () => {
  test('when a full session runs (logins, failures, Basic, refresh, reuse, revoke, logout), then no secret reaches any log line', async () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef-signing-key');
    const t = testIdentity({ keys: staticKey(key) });
    const password = 'Pa55-w0rd-that-must-not-leak';
    t.users.add('alice', { password });
    const secrets = [
      password,
      'kapi-secret',
      'cli secret+/&=',
      key.toString('base64'),
      key.toString('hex'),
      key.toString('utf8'),
    ];

    const tokens = await login(t.app, 'alice', password);
    // a password typed into the username field must not be echoed into the audit line either
    await tokenRequest(t.app, {
      grant_type: 'password',
      username: 'typo-secret-never-logged',
      password: 'x',
      ...client,
    });
    await request(t.app)
      .post('/oauth/token')
      .set('Authorization', `Basic ${Buffer.from('cli:wrong-basic-secret').toString('base64')}`)
      .type('form')
      .send(`grant_type=password&username=alice&password=${encodeURIComponent(password)}`);
    const rotated = (await refresh(t.app, tokens.refresh_token)).body;
    t.clock.advance(10);
    await refresh(t.app, tokens.refresh_token); // reuse → revoke
    const again = await login(t.app, 'alice', password);
    await request(t.app).get('/whoami').set('Authorization', `Bearer ${again.access_token}`);
    await request(t.app).get('/whoami').set('Authorization', `Bearer ${again.refresh_token}`);
    await request(t.app)
      .post('/oauth/revoke')
      .type('form')
      .send(new URLSearchParams({ token: again.refresh_token, ...client }).toString());
    const third = await login(t.app, 'alice', password);
    await request(t.app).post('/oauth/logout').set('Authorization', `Bearer ${third.access_token}`);
    secrets.push('typo-secret-never-logged', 'wrong-basic-secret');
    for (const token of [tokens, rotated, again, third]) secrets.push(token.access_token, token.refresh_token);

    expect(t.lines.length).toBeGreaterThan(5);
    for (const line of t.lines) {
      for (const secret of secrets) expect(line).not.toContain(secret);
    }
    // and the attempts are all audited
    const audit = t.lines.map((line) => JSON.parse(line)).filter((entry) => entry.audit === 'login');
    expect(audit.map((entry) => `${entry.grant}:${entry.result}`)).toEqual([
      'password:success',
      'password:failure',
      'password:failure',
      'refresh_token:success',
      'refresh_token:failure',
      'password:success',
      'password:success',
    ]);
    expect(audit[2]).toMatchObject({ client: 'cli', reason: 'invalid_client' });
  });
});
