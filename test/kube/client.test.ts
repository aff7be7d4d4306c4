import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeApiError, KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';

let server: http.Server;
let base: string;
const seen: string[] = [];
let answer: (res: http.ServerResponse) => void = (res) => res.end('{}');

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function clientFor(url: string): { client: KubeClient; connection: KubeConnection } {
  const connection = connectionFor(tokenAccess(url, 'test-token'), 'sandbox');
  return { client: new KubeClient(connection), connection };
}

describe('KubeClient', () => {
  test('when kube-apiserver is reached under a path prefix, then requests stay under it', async () => {
    const { client, connection } = clientFor(`${base}/k8s/clusters/c-1/`);
    answer = (res) => res.end('{"kind":"NodeList","items":[]}');
    await client.request({ path: '/api/v1/nodes', query: { limit: 1 } });
    connection.close();
    expect(seen.at(-1)).toBe('/k8s/clusters/c-1/api/v1/nodes?limit=1');
  });

  test.each(['/api/v1/namespaces/../secrets', '/api/v1/namespaces/%2E%2E/secrets', '/api/v1/namespaces/x/secrets/.'])(
    'when a path has a "." or ".." segment (%s), then it is refused as a 400 Status and never sent',
    async (path) => {
      const { client, connection } = clientFor(base);
      const before = seen.length;
      await expect(client.request({ path })).rejects.toMatchObject({ code: 400, status: { reason: 'BadRequest' } });
      connection.close();
      expect(seen.length).toBe(before);
    },
  );

  test('when a name only starts with dots, then it is sent as it is', async () => {
    const { client, connection } = clientFor(base);
    answer = (res) => res.end('{}');
    await client.request({ path: '/api/v1/configmaps/..data' });
    connection.close();
    expect(seen.at(-1)).toBe('/api/v1/configmaps/..data');
  });

  test('when a 200 answer is not JSON, then it is a cluster error (502), never a SyntaxError', async () => {
    const { client, connection } = clientFor(base);
    answer = (res) => res.end('<html>proxy error</html>');
    const failure = client.request({ path: '/api/v1/nodes' });
    await expect(failure).rejects.toBeInstanceOf(KubeApiError);
    await expect(failure).rejects.toMatchObject({ code: 502 });
    connection.close();
  });

  test('when the cluster answers a Status error, then the code and the Status come through', async () => {
    const { client, connection } = clientFor(base);
    answer = (res) => {
      res.statusCode = 404;
      res.end(
        '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes \\"x\\" not found","reason":"NotFound","code":404}',
      );
    };
    await expect(client.request({ path: '/api/v1/nodes/x' })).rejects.toMatchObject({
      code: 404,
      status: { reason: 'NotFound' },
    });
    connection.close();
  });
});
