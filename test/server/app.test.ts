import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import type { ForwardRequest } from '../../src/proxy/forwarder.js';
import request from 'supertest';
import { createLogger, type LogLevel } from '../../src/observability/logger.js';
import { Metrics } from '../../src/observability/metrics.js';
import { createApp } from '../../src/server/app.js';
import { UnauthorizedError } from '../../src/server/errors.js';
import { FixedAllocations, InMemoryNodeCache } from '../apis/resources/v1alpha3/fixtures.js';

const TOKEN = 'app-test-token-0123456789';

/** kapi's logger writing JSON lines into `lines`; `formatted` counts the lines it formatted at all. */
function capturingLogger(level: LogLevel) {
  const lines: Record<string, unknown>[] = [];
  const counter = { formatted: 0 };
  const logger = createLogger(level, {
    sink: (line) => {
      counter.formatted++;
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { logger, lines, counter };
}

function setup(level: LogLevel = 'info', trustedProxies: string[] = []) {
  const { logger, lines, counter } = capturingLogger(level);
  const metrics = new Metrics({ processMetrics: false });
  const forwarded: string[] = [];
  const user = { username: 'alice', groups: ['dev'] };
  const authenticate: RequestHandler = (req, _res, next) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return next(new UnauthorizedError());
    req.user = user;
    next();
  };
  const authenticateRequest = (req: IncomingMessage) =>
    req.headers.authorization === `Bearer ${TOKEN}` ? Promise.resolve(user) : Promise.reject(new UnauthorizedError());
  const forward: ForwardRequest = (req, res) => {
    forwarded.push(req.url);
    // As the forwarder does: kapi's request id goes out with the answer's head.
    res
      .writeHead(200, { 'Content-Type': 'application/json', 'X-Request-Id': req.requestId })
      .end(JSON.stringify({ kind: 'Node', url: req.url }));
  };
  const app = createApp({
    logger,
    readiness: [],
    nodes: new InMemoryNodeCache([]),
    allocations: new FixedAllocations({}),
    authenticate,
    forwarding: { authenticate: authenticateRequest, forward },
    metrics,
    trustedProxies,
  });
  return { app, lines, counter, metrics, forwarded };
}

const audit = (lines: Record<string, unknown>[]) => lines.filter((line) => line.audit === true);

describe('createApp: forwarded paths', () => {
  test('when an authenticated request is forwarded, then the audit line and metrics name its full path', async () => {
    const { app, lines, metrics, forwarded } = setup();
    const res = await request(app)
      .get('/api/v1/nodes/node-1?labelSelector=a%3Db')
      .set('Authorization', `Bearer ${TOKEN}`)
      .set('X-Request-Id', 'req-forwarded-1')
      .expect(200);
    // Express strips no prefix: the forwarder sees the whole target
    expect(res.body).toEqual({ kind: 'Node', url: '/api/v1/nodes/node-1?labelSelector=a%3Db' });
    expect(forwarded).toEqual(['/api/v1/nodes/node-1?labelSelector=a%3Db']);
    expect(audit(lines)).toEqual([
      expect.objectContaining({
        requestId: res.headers['x-request-id'],
        clientRequestId: 'req-forwarded-1',
        user: 'alice',
        verb: 'GET',
        path: '/api/v1/nodes/node-1',
        status: 200,
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    expect(await metrics.registry.metrics()).toContain(
      'kapi_http_requests_total{route="/api/v1/nodes",method="GET",code="200"} 1',
    );
  });

  test('when a forwarded request has no valid token, then it is a 401 Status and never reaches the forwarder', async () => {
    const { app, lines, forwarded } = setup();
    const res = await request(app).get('/apis/apps/v1/deployments').set('Authorization', 'Bearer wrong').expect(401);
    expect(res.body).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
    expect(forwarded).toEqual([]);
    expect(audit(lines)).toEqual([expect.objectContaining({ path: '/apis/apps/v1/deployments', status: 401 })]);
  });

  test.each([
    ['authentication', 'authenticate'],
    ['the forwarder', 'forward'],
  ])('when %s throws instead of answering, then the answer is a 500 Status without detail', async (_case, step) => {
    const { logger, lines } = capturingLogger('info');
    const boom = () => {
      throw new Error('internal detail 7f3a');
    };
    const app = createApp({
      logger,
      readiness: [],
      nodes: new InMemoryNodeCache([]),
      allocations: new FixedAllocations({}),
      forwarding: {
        authenticate: step === 'authenticate' ? boom : () => Promise.resolve({ username: 'alice', groups: [] }),
        forward: step === 'forward' ? boom : () => undefined,
      },
    });
    for (let i = 0; i < 2; i++) {
      const res = await request(app).get('/api/v1/nodes').expect(500);
      expect(res.body).toMatchObject({ kind: 'Status', code: 500 });
      expect(res.text).not.toContain('7f3a');
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(lines.filter((line) => line.level === 'error')).toHaveLength(2);
  });

  test.each(['/api', '/apis', '/version', '/openapi/v2', '/api/v1/namespaces'])(
    'when %s is requested, then it is forwarded without kapi’s browser security headers',
    async (path) => {
      const { app, forwarded } = setup();
      const res = await request(app).get(path).set('Authorization', `Bearer ${TOKEN}`).expect(200);
      expect(forwarded).toEqual([path]);
      expect(res.headers['x-content-type-options']).toBeUndefined();
    },
  );

  test.each(['/apiary', '/apis-x/v1', '/kapis/resources.kapi.io/v1alpha3/nodes/absent'])(
    'when %s is requested, then it is kapi’s own path: not forwarded, security headers on',
    async (path) => {
      const { app, forwarded } = setup();
      const res = await request(app).get(path).set('Authorization', `Bearer ${TOKEN}`).expect(404);
      expect(res.body).toMatchObject({ kind: 'Status', code: 404 });
      expect(forwarded).toEqual([]);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    },
  );

  test('when kapi’s own path is requested without a token, then it is a 401 with security headers', async () => {
    const { app } = setup();
    const res = await request(app).get('/kapis/resources.kapi.io/v1alpha3/nodes').expect(401);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('createApp: the audit line', () => {
  test('when info lines are kept, then each answered request has one', async () => {
    const { app, lines } = setup('info');
    await request(app).get('/healthz').expect(200);
    expect(audit(lines)).toEqual([expect.objectContaining({ verb: 'GET', path: '/healthz', status: 200 })]);
  });

  test('when two requests carry the same client X-Request-Id, then each gets its own kapi id and the client’s is kept apart', async () => {
    const { app, lines } = setup('info');
    const answers = [];
    for (let i = 0; i < 2; i++)
      answers.push(await request(app).get('/healthz').set('X-Request-Id', 'chosen-by-client'));
    const ids = answers.map((res) => res.headers['x-request-id'] as string);
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids).not.toContain('chosen-by-client');
    expect(audit(lines).map((line) => [line.requestId, line.clientRequestId])).toEqual([
      [ids[0], 'chosen-by-client'],
      [ids[1], 'chosen-by-client'],
    ]);
  });

  test('when a client X-Request-Id could forge a log line, then it is not logged at all', async () => {
    const { app, lines } = setup('info');
    await request(app).get('/healthz').set('X-Request-Id', 'a b"c');
    expect(audit(lines)[0]).not.toHaveProperty('clientRequestId');
  });

  test('when the log level drops info lines, then the audit line is not even formatted', async () => {
    const { app, lines, counter } = setup('warn');
    await request(app).get('/api/v1/nodes').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    expect(lines).toEqual([]);
    expect(counter.formatted).toBe(0);
  });
});

describe('createApp: the client address', () => {
  // kapi's own paths (Express's req.ip) and forwarded paths (their own pipeline) must agree.
  const paths = [
    ['kapi’s own path', '/healthz'],
    ['a forwarded path', '/api/v1/nodes'],
  ];

  test.each(paths)('when no proxy is trusted, then a forged X-Forwarded-For is ignored (%s)', async (_case, path) => {
    const { app, lines } = setup('info');
    await request(app).get(path).set('Authorization', `Bearer ${TOKEN}`).set('X-Forwarded-For', '203.0.113.9');
    expect(audit(lines)[0]!.sourceIp).toMatch(/127\.0\.0\.1|::1/);
  });

  test.each(paths)(
    'when the peer is a trusted proxy, then the client it names is the source address (%s)',
    async (_case, path) => {
      const { app, lines } = setup('info', ['127.0.0.1', '::1', '::ffff:127.0.0.1']);
      await request(app).get(path).set('Authorization', `Bearer ${TOKEN}`).set('X-Forwarded-For', '203.0.113.9');
      expect(audit(lines)[0]!.sourceIp).toBe('203.0.113.9');
    },
  );
});
