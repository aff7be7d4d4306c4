import { decodeProtobufObject, ProtobufError } from '../../src/sandbox/protobuf.js';
import { call, testSandbox, type Json } from './helpers.js';

/** A minimal protobuf writer for the tests: varint keys, length-delimited strings and messages. */
function varint(n: number): Buffer {
  const bytes: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    bytes.push(byte);
  } while (n > 0);
  return Buffer.from(bytes);
}
const field = (number: number, value: Buffer | string): Buffer => {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([varint(number * 8 + 2), varint(bytes.length), bytes]);
};
const mapEntry = (number: number, key: string, value: string) =>
  field(number, Buffer.concat([field(1, key), field(2, value)]));
const envelope = (apiVersion: string, kind: string, raw: Buffer) =>
  Buffer.concat([
    Buffer.from('k8s\0', 'binary'),
    field(1, Buffer.concat([field(1, apiVersion), field(2, kind)])),
    field(2, raw),
  ]);

describe('protobuf request bodies', () => {
  test('when a ConfigMap arrives as protobuf, then it decodes to the JSON a client would have sent', () => {
    const meta = Buffer.concat([field(1, 'cm'), field(3, 'demo'), mapEntry(11, 'app', 'web')]);
    const raw = Buffer.concat([field(1, meta), mapEntry(2, 'key', 'value'), Buffer.from([0x20, 0x01])]);
    expect(decodeProtobufObject(envelope('v1', 'ConfigMap', raw))).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'demo', labels: { app: 'web' } },
      data: { key: 'value' },
      immutable: true,
    });
  });

  test('when a SubjectAccessReview arrives as protobuf, then spec, groups and attributes decode', () => {
    const attributes = Buffer.concat([field(1, 'demo'), field(2, 'list'), field(5, 'pods')]);
    const spec = Buffer.concat([field(1, attributes), field(3, 'alice'), field(4, 'g1'), field(4, 'g2')]);
    expect(decodeProtobufObject(envelope('authorization.k8s.io/v1', 'SubjectAccessReview', field(2, spec)))).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        resourceAttributes: { namespace: 'demo', verb: 'list', resource: 'pods' },
        user: 'alice',
        groups: ['g1', 'g2'],
      },
    });
  });

  test('when RBAC kinds arrive as protobuf (kubectl create role/rolebinding), then rules, subjects and roleRef decode', () => {
    const rule = Buffer.concat([field(1, 'get'), field(1, 'list'), field(2, ''), field(3, 'pods'), field(4, 'p1')]);
    const role = Buffer.concat([field(1, field(1, 'reader')), field(2, rule)]);
    expect(decodeProtobufObject(envelope('rbac.authorization.k8s.io/v1', 'Role', role))).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'reader' },
      rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], resourceNames: ['p1'] }],
    });
    const subject = Buffer.concat([field(1, 'ServiceAccount'), field(3, 'builder'), field(4, 'demo')]);
    const roleRef = Buffer.concat([field(1, 'rbac.authorization.k8s.io'), field(2, 'Role'), field(3, 'reader')]);
    const binding = Buffer.concat([field(1, field(1, 'b')), field(2, subject), field(3, roleRef)]);
    expect(decodeProtobufObject(envelope('rbac.authorization.k8s.io/v1', 'RoleBinding', binding))).toMatchObject({
      subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace: 'demo' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
    });
    const selector = field(1, mapEntry(1, 'rbac.example.com/aggregate', 'true'));
    const clusterRole = Buffer.concat([field(1, field(1, 'agg')), field(3, selector)]);
    expect(decodeProtobufObject(envelope('rbac.authorization.k8s.io/v1', 'ClusterRole', clusterRole))).toMatchObject({
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate': 'true' } }] },
    });
  });

  test('when the envelope is missing, truncated or of an unknown kind, then it is a ProtobufError', () => {
    expect(() => decodeProtobufObject(Buffer.from('{}'))).toThrow(ProtobufError);
    expect(() => decodeProtobufObject(envelope('v1', 'Pod', Buffer.alloc(0)))).toThrow(/cannot read Pod/);
    expect(() =>
      decodeProtobufObject(Buffer.concat([Buffer.from('k8s\0', 'binary'), Buffer.from([0x0a, 0x10])])),
    ).toThrow(ProtobufError);
  });

  test('when kubectl-style protobuf requests are posted, then the sandbox answers them in JSON (auth whoami, create configmap)', async () => {
    const sandbox = await testSandbox();
    try {
      const post = (path: string, body: Buffer) =>
        fetch(sandbox.url + path, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${sandbox.adminToken}`,
            'Content-Type': 'application/vnd.kubernetes.protobuf',
            Accept: 'application/vnd.kubernetes.protobuf,application/json',
          },
          body,
        });
      const whoami = await post(
        '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        envelope('authentication.k8s.io/v1', 'SelfSubjectReview', Buffer.alloc(0)),
      );
      expect(whoami.status).toBe(201);
      expect(((await whoami.json()) as Json).status.userInfo.username).toBe('sandbox-admin');
      const created = await post(
        '/api/v1/namespaces/default/configmaps',
        envelope('v1', 'ConfigMap', Buffer.concat([field(1, field(1, 'from-proto')), mapEntry(2, 'a', 'b')])),
      );
      expect(created.status).toBe(201);
      expect((await call<Json>(sandbox, 'GET', '/api/v1/namespaces/default/configmaps/from-proto')).body.data).toEqual({
        a: 'b',
      });
      const pod = await post('/api/v1/namespaces/default/pods', envelope('v1', 'Pod', Buffer.alloc(0)));
      expect(pod.status).toBe(415);
    } finally {
      await sandbox.stop();
    }
  });
});
