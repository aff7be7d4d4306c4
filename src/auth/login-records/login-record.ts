import { USERNAME_LABEL, usernameLabelValue } from '../sessions/session-record.js';

/**
 * Login records (SPEC §14), pure: one record per attempt, kept per user in one `LoginHistory` object
 * (iam.kapi.io/v1beta1, named after the User, owned by it), newest first, trimmed by age and count at every write.
 */
export interface LoginRecord {
  /** Milliseconds since the epoch. */
  time: number;
  /** password, refresh_token, authorization_code, upstream (a sign-in at an identity provider). */
  grant: string;
  /** `local`, or the identity provider that vouched for the user. */
  provider: string;
  client: string;
  sourceIP: string;
  userAgent: string;
  /** success, failure, limited (a brute-force limit held), error (kapi or the directory could not answer). */
  result: string;
  reason: string;
  /** Where a password came from when not the token endpoint (`login_page`). */
  via?: string;
}

export const LOGIN_HISTORIES_PATH = '/apis/iam.kapi.io/v1beta1/loginhistories';
const MAX_TEXT = {
  grant: 32,
  provider: 63,
  client: 253,
  sourceIP: 64,
  userAgent: 256,
  result: 16,
  reason: 256,
  via: 32,
};

/** A record's text as the CRD holds it: printable, bounded (a user agent is whatever a client sends). */
export function boundedRecord(record: LoginRecord): LoginRecord {
  const bounded: LoginRecord = {
    time: record.time,
    grant: printable(record.grant, MAX_TEXT.grant),
    provider: printable(record.provider, MAX_TEXT.provider),
    client: printable(record.client, MAX_TEXT.client),
    sourceIP: printable(record.sourceIP, MAX_TEXT.sourceIP),
    userAgent: printable(record.userAgent, MAX_TEXT.userAgent),
    result: printable(record.result, MAX_TEXT.result),
    reason: printable(record.reason, MAX_TEXT.reason),
  };
  if (record.via) bounded.via = printable(record.via, MAX_TEXT.via);
  return bounded;
}

/**
 * The records kept: within `maxAgeSeconds` of now, newest first, at most `maxPerUser`, each attempt once. `records`
 * come in the order they happened (oldest first), which decides between records of the same millisecond.
 */
export function keptRecords(
  records: readonly LoginRecord[],
  nowMs: number,
  limits: { maxAgeSeconds: number; maxPerUser: number },
): LoginRecord[] {
  const oldest = nowMs - limits.maxAgeSeconds * 1000;
  const seen = new Set<string>();
  return records
    .map((record, order) => ({ record, order }))
    .filter(({ record }) => record.time >= oldest)
    .sort((a, b) => b.record.time - a.record.time || b.order - a.order)
    .map(({ record }) => record)
    .filter((record) => {
      const key = JSON.stringify(record);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, limits.maxPerUser);
}

export interface LoginHistory {
  username: string;
  /** The uid of the User it belongs to; a User deleted and created again under the name does not inherit it. */
  ownerUid?: string;
  resourceVersion: string;
  records: LoginRecord[];
}

export function loginHistoryFrom(raw: unknown): LoginHistory {
  const object = asObject(raw);
  const metadata = asObject(object.metadata);
  const name = metadata.name;
  if (typeof name !== 'string' || name === '') throw new Error('a LoginHistory without metadata.name');
  const owner = (Array.isArray(metadata.ownerReferences) ? metadata.ownerReferences : [])
    .map(asObject)
    .find((ref) => ref.kind === 'User' && typeof ref.uid === 'string');
  const records = asObject(object.spec).records;
  return {
    username: name,
    ownerUid: owner?.uid as string | undefined,
    resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
    records: (Array.isArray(records) ? records : []).flatMap((entry: unknown) => {
      const record = asObject(entry);
      const time = typeof record.time === 'string' ? Date.parse(record.time) : NaN;
      if (!Number.isFinite(time)) return [];
      const text = (key: string) => (typeof record[key] === 'string' ? (record[key] as string) : '');
      const read: LoginRecord = {
        time,
        grant: text('grant'),
        provider: text('provider'),
        client: text('client'),
        sourceIP: text('sourceIP'),
        userAgent: text('userAgent'),
        result: text('result'),
        reason: text('reason'),
      };
      if (text('via')) read.via = text('via');
      return [read];
    }),
  };
}

/** The object to create (no `resourceVersion`) or replace (with it). */
export function loginHistoryObject(history: LoginHistory): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    name: history.username,
    labels: { [USERNAME_LABEL]: usernameLabelValue(history.username) },
  };
  if (history.ownerUid) {
    // the cluster's garbage collector deletes the records with their User (kapi's own sweep does too)
    metadata.ownerReferences = [
      { apiVersion: 'iam.kapi.io/v1beta1', kind: 'User', name: history.username, uid: history.ownerUid },
    ];
  }
  if (history.resourceVersion) metadata.resourceVersion = history.resourceVersion;
  return {
    apiVersion: 'iam.kapi.io/v1beta1',
    kind: 'LoginHistory',
    metadata,
    spec: { records: history.records.map(recordObject) },
  };
}

/** A record as the API shows it (and the object holds it): times in RFC 3339 with milliseconds. */
export function recordObject(record: LoginRecord): Record<string, string> {
  const { time, via, ...rest } = record;
  return { time: new Date(time).toISOString(), ...rest, ...(via ? { via } : {}) };
}

/** A record as KubeSphere 3.4 answers one (a LoginRecord object), for its console's login history. */
export function kubeSphereLoginRecord(user: string, record: LoginRecord): Record<string, unknown> {
  return {
    apiVersion: 'iam.kapi.io/v1alpha2',
    kind: 'LoginRecord',
    metadata: {
      name: `${user}-${record.time}`,
      creationTimestamp: new Date(record.time).toISOString().replace(/\.\d+Z$/, 'Z'),
      labels: { 'iam.kapi.io/user-ref': user },
    },
    spec: {
      type: 'Token',
      provider: record.provider,
      sourceIP: record.sourceIP,
      userAgent: record.userAgent,
      success: record.result === 'success',
      reason: record.reason,
    },
  };
}

/** Whether a history holds nothing worth keeping: every record older than the age limit. */
export function isStale(history: LoginHistory, nowMs: number, maxAgeSeconds: number): boolean {
  return history.records.every((record) => record.time < nowMs - maxAgeSeconds * 1000);
}

function printable(text: string, max: number): string {
  let safe = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    safe += code < 0x20 || code === 0x7f ? '?' : char;
  }
  return [...safe].length > max ? [...safe].slice(0, max).join('') : safe;
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
