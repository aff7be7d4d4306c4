/**
 * A small reader for kube's protobuf request bodies (`application/vnd.kubernetes.protobuf`), which kubectl's typed
 * clients send for built-in kinds (`kubectl auth whoami`, `auth can-i`, `create configmap`, `create rolebinding`). It decodes the kinds
 * listed in KINDS into the same JSON the client would have sent; answers stay JSON, which those clients accept.
 * Envelope: the magic "k8s\0", then runtime.Unknown {1: TypeMeta {1: apiVersion, 2: kind}, 2: raw object}.
 */
type Scalar = 'string' | 'bytes' | 'bool' | 'int64' | 'time';

interface Field {
  name: string;
  type: Scalar | 'message' | 'map';
  repeated?: boolean;
  message?: Schema;
  /** Map value: a scalar or a message. */
  value?: Scalar | Schema;
}

type Schema = Readonly<Record<number, Field>>;

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const TIME: Schema = { 1: { name: 'seconds', type: 'int64' }, 2: { name: 'nanos', type: 'int64' } };

const OBJECT_META: Schema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'generation', type: 'int64' },
  8: { name: 'creationTimestamp', type: 'time' },
  9: { name: 'deletionTimestamp', type: 'time' },
  10: { name: 'deletionGracePeriodSeconds', type: 'int64' },
  11: { name: 'labels', type: 'map', value: 'string' },
  12: { name: 'annotations', type: 'map', value: 'string' },
  14: { name: 'finalizers', type: 'string', repeated: true },
};

const RESOURCE_ATTRIBUTES: Schema = {
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
};

const NON_RESOURCE_ATTRIBUTES: Schema = { 1: { name: 'path', type: 'string' }, 2: { name: 'verb', type: 'string' } };

const SAR_SPEC: Schema = {
  1: { name: 'resourceAttributes', type: 'message', message: RESOURCE_ATTRIBUTES },
  2: { name: 'nonResourceAttributes', type: 'message', message: NON_RESOURCE_ATTRIBUTES },
  3: { name: 'user', type: 'string' },
  4: { name: 'groups', type: 'string', repeated: true },
  5: { name: 'extra', type: 'map', value: { 1: { name: 'items', type: 'string', repeated: true } } },
  6: { name: 'uid', type: 'string' },
};

const metadata: Field = { name: 'metadata', type: 'message', message: OBJECT_META };

const POLICY_RULE: Schema = {
  1: { name: 'verbs', type: 'string', repeated: true },
  2: { name: 'apiGroups', type: 'string', repeated: true },
  3: { name: 'resources', type: 'string', repeated: true },
  4: { name: 'resourceNames', type: 'string', repeated: true },
  5: { name: 'nonResourceURLs', type: 'string', repeated: true },
};

const LABEL_SELECTOR: Schema = {
  1: { name: 'matchLabels', type: 'map', value: 'string' },
  2: {
    name: 'matchExpressions',
    type: 'message',
    repeated: true,
    message: {
      1: { name: 'key', type: 'string' },
      2: { name: 'operator', type: 'string' },
      3: { name: 'values', type: 'string', repeated: true },
    },
  },
};

const RBAC_BINDING: Schema = {
  1: metadata,
  2: {
    name: 'subjects',
    type: 'message',
    repeated: true,
    message: {
      1: { name: 'kind', type: 'string' },
      2: { name: 'apiGroup', type: 'string' },
      3: { name: 'name', type: 'string' },
      4: { name: 'namespace', type: 'string' },
    },
  },
  3: {
    name: 'roleRef',
    type: 'message',
    message: {
      1: { name: 'apiGroup', type: 'string' },
      2: { name: 'kind', type: 'string' },
      3: { name: 'name', type: 'string' },
    },
  },
};

/** The kinds the sandbox can read as protobuf, by apiVersion/kind. */
const KINDS: Record<string, Schema> = {
  'authentication.k8s.io/v1/SelfSubjectReview': { 1: metadata },
  // The same message where 1.27 (v1beta1) and 1.26 (v1alpha1) serve it.
  'authentication.k8s.io/v1beta1/SelfSubjectReview': { 1: metadata },
  'authentication.k8s.io/v1alpha1/SelfSubjectReview': { 1: metadata },
  'authorization.k8s.io/v1/SelfSubjectAccessReview': {
    1: metadata,
    2: { name: 'spec', type: 'message', message: { 1: SAR_SPEC[1] as Field, 2: SAR_SPEC[2] as Field } },
  },
  'authorization.k8s.io/v1/SelfSubjectRulesReview': {
    1: metadata,
    2: { name: 'spec', type: 'message', message: { 1: { name: 'namespace', type: 'string' } } },
  },
  'authorization.k8s.io/v1/SubjectAccessReview': {
    1: metadata,
    2: { name: 'spec', type: 'message', message: SAR_SPEC },
  },
  'authorization.k8s.io/v1/LocalSubjectAccessReview': {
    1: metadata,
    2: { name: 'spec', type: 'message', message: SAR_SPEC },
  },
  'v1/ConfigMap': {
    1: metadata,
    2: { name: 'data', type: 'map', value: 'string' },
    3: { name: 'binaryData', type: 'map', value: 'bytes' },
    4: { name: 'immutable', type: 'bool' },
  },
  'v1/Secret': {
    1: metadata,
    2: { name: 'data', type: 'map', value: 'bytes' },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: 'map', value: 'string' },
    5: { name: 'immutable', type: 'bool' },
  },
  'v1/Namespace': {
    1: metadata,
    2: { name: 'spec', type: 'message', message: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
  },
  'v1/ServiceAccount': { 1: metadata, 4: { name: 'automountServiceAccountToken', type: 'bool' } },
  // kubectl create role / clusterrole / rolebinding / clusterrolebinding
  'rbac.authorization.k8s.io/v1/Role': {
    1: metadata,
    2: { name: 'rules', type: 'message', repeated: true, message: POLICY_RULE },
  },
  'rbac.authorization.k8s.io/v1/ClusterRole': {
    1: metadata,
    2: { name: 'rules', type: 'message', repeated: true, message: POLICY_RULE },
    3: {
      name: 'aggregationRule',
      type: 'message',
      message: { 1: { name: 'clusterRoleSelectors', type: 'message', repeated: true, message: LABEL_SELECTOR } },
    },
  },
  'rbac.authorization.k8s.io/v1/RoleBinding': RBAC_BINDING,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': RBAC_BINDING,
};

export class ProtobufError extends Error {}

class Reader {
  private offset = 0;

  constructor(private readonly buffer: Buffer) {}

  get done(): boolean {
    return this.offset >= this.buffer.length;
  }

  varint(): number {
    let result = 0;
    let multiplier = 1;
    for (let i = 0; i < 10; i++) {
      if (this.offset >= this.buffer.length) throw new ProtobufError('truncated varint');
      const byte = this.buffer[this.offset++] as number;
      result += (byte & 0x7f) * multiplier;
      if ((byte & 0x80) === 0) return result;
      multiplier *= 128;
    }
    throw new ProtobufError('varint too long');
  }

  bytes(): Buffer {
    const length = this.varint();
    if (this.offset + length > this.buffer.length) throw new ProtobufError('truncated field');
    const out = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.offset += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.offset += 4;
    else throw new ProtobufError(`unsupported wire type ${wireType}`);
  }
}

function scalar(type: Scalar, reader: Reader): unknown {
  switch (type) {
    case 'string':
      return reader.bytes().toString('utf8');
    case 'bytes':
      return reader.bytes().toString('base64');
    case 'bool':
      return reader.varint() !== 0;
    case 'int64':
      return reader.varint();
    case 'time': {
      const time = decode(reader.bytes(), TIME) as { seconds?: number; nanos?: number };
      return new Date((time.seconds ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    }
  }
}

function decode(buffer: Buffer, schema: Schema): Record<string, unknown> {
  const reader = new Reader(buffer);
  const out: Record<string, unknown> = {};
  while (!reader.done) {
    const key = reader.varint();
    const number = Math.floor(key / 8);
    const wireType = key & 7;
    const field = schema[number];
    if (!field) {
      reader.skip(wireType);
      continue;
    }
    let value: unknown;
    if (field.type === 'map') {
      const entry = reader.bytes();
      const valueSchema = field.value ?? 'string';
      const decoded = decode(
        entry,
        typeof valueSchema === 'string'
          ? { 1: { name: 'key', type: 'string' }, 2: { name: 'value', type: valueSchema } }
          : { 1: { name: 'key', type: 'string' }, 2: { name: 'value', type: 'message', message: valueSchema } },
      );
      const map = (out[field.name] ??= {}) as Record<string, unknown>;
      const mapValue = decoded.value ?? (valueSchema === 'string' || valueSchema === 'bytes' ? '' : {});
      map[String(decoded.key ?? '')] =
        typeof valueSchema === 'string' ? mapValue : ((mapValue as { items?: unknown }).items ?? []);
      continue;
    }
    if (field.type === 'message') value = decode(reader.bytes(), field.message ?? {});
    else value = scalar(field.type, reader);
    if (field.repeated) ((out[field.name] ??= []) as unknown[]).push(value);
    else out[field.name] = value;
  }
  return out;
}

/** The object in a protobuf request body as JSON, or a ProtobufError for a kind this reader does not know. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw new ProtobufError('missing the k8s protobuf envelope');
  const unknown = decode(body.subarray(4), {
    1: {
      name: 'typeMeta',
      type: 'message',
      message: { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } },
    },
    2: { name: 'raw', type: 'bytes' },
  }) as { typeMeta?: { apiVersion?: string; kind?: string }; raw?: string };
  const apiVersion = unknown.typeMeta?.apiVersion ?? '';
  const kind = unknown.typeMeta?.kind ?? '';
  const schema = KINDS[`${apiVersion}/${kind}`];
  if (!schema) throw new ProtobufError(`the sandbox cannot read ${kind || 'this kind'} (${apiVersion}) as protobuf`);
  return { apiVersion, kind, ...decode(Buffer.from(unknown.raw ?? '', 'base64'), schema) };
}
