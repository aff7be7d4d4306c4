/**
 * kube-apiserver's audit log names kapi's request ids only: whatever id a client sends (X-Request-Id, Audit-ID), the
 * audit event of its forwarded request carries the id kapi generated and answered with. The sandbox takes a proxy's
 * Audit-ID as its audit id, as kube-apiserver does.
 */
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { auth, send, startKapi, type Kapi } from './harness.js';

let sandbox: Sandbox;
let kapi: Kapi;

beforeAll(async () => {
  sandbox = await startSandbox({ nodes: 1, podsPerNode: 0, crdDir: '/nonexistent' });
  kapi = await startKapi(sandbox.url, {
    connection: connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox'),
    user: { username: 'admin', groups: [] },
  });
});

afterAll(async () => {
  await kapi.stop();
  await sandbox.stop();
});

const clientIds = ['X-Request-Id', 'client-chosen-id', 'Audit-ID', 'client-chosen-audit'];

it.each([
  ['a get', 'GET', '/api/v1/namespaces/default', undefined],
  ['a create with a body', 'POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{"name":"audited"}}'],
])(
  'when %s carries client ids, then kube-apiserver’s audit event has kapi’s id and never the client’s',
  async (_case, method, path, body) => {
    const answer = await send(kapi.url, {
      method,
      path,
      headers: [...auth, 'Content-Type', 'application/json', ...clientIds],
      body,
    });
    expect(answer.status).toBeLessThan(300);
    const kapiId = answer.headers['x-request-id'];
    expect(kapiId).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.headers['audit-id']).toBe(kapiId);
    expect(sandbox.audit.filter((entry) => entry.path === path).map((entry) => entry.auditId)).toContain(kapiId);
    expect(JSON.stringify(sandbox.audit)).not.toContain('client-chosen');
  },
);
