import type { UserInfo } from '../../src/auth/identity.js';
import {
  forwardRequestHeaders,
  forwardResponseHeaders,
  impersonationHeaders,
  withoutBearerSubprotocol,
  type ForwardContext,
} from '../../src/proxy/forward-headers.js';

const alice: UserInfo = { username: 'alice', groups: ['dev', 'ops'] };
const context: ForwardContext = {
  user: alice,
  credentials: { Authorization: 'Bearer kapi-sa-token' },
  backendHost: '10.0.0.1:6443',
  clientIp: '192.0.2.7',
  clientProto: 'https',
  requestId: 'req-1',
};

/** The outgoing headers as [name, value] pairs with lower-cased names, in order. */
function pairs(raw: readonly string[], ctx: ForwardContext = context): [string, string][] {
  const result = forwardRequestHeaders(raw, ctx);
  if (!result.ok) throw new Error(`refused: ${result.message}`);
  const out: [string, string][] = [];
  for (let i = 0; i < result.headers.length; i += 2)
    out.push([result.headers[i]!.toLowerCase(), result.headers[i + 1]!]);
  return out;
}

function values(raw: readonly string[], name: string, ctx: ForwardContext = context): string[] {
  return pairs(raw, ctx)
    .filter(([n]) => n === name)
    .map(([, v]) => v);
}

describe('forwardRequestHeaders: refusing impersonation', () => {
  it.each([
    ['Impersonate-User', ['Impersonate-User', 'admin']],
    ['Impersonate-Group', ['Impersonate-Group', 'system:masters']],
    ['Impersonate-Uid', ['Impersonate-Uid', '42']],
    ['Impersonate-Extra-scopes', ['Impersonate-Extra-scopes', 'everything']],
    ['a mixed-case iMpErSoNaTe-GrOuP', ['iMpErSoNaTe-GrOuP', 'system:masters']],
    ['a lower-case impersonate-user', ['impersonate-user', 'admin']],
    ['an Impersonate header among others', ['Accept', 'application/json', 'IMPERSONATE-USER', 'admin', 'X-A', 'b']],
    ['duplicated Impersonate-Group headers', ['Impersonate-Group', 'a', 'Impersonate-Group', 'b']],
    ['Connection: Impersonate-User (named only, no header)', ['Connection', 'Impersonate-User']],
    ['Connection: keep-alive, impersonate-group', ['Connection', 'keep-alive, impersonate-group']],
    ['a second Connection header naming Impersonate-Uid', ['Connection', 'close', 'Connection', ' Impersonate-Uid ']],
  ])('when the client sends %s, then the request is refused as impersonation', (_case, raw) => {
    const result = forwardRequestHeaders(raw, context);
    expect(result).toEqual({
      ok: false,
      reason: 'impersonation',
      message: expect.stringMatching(/impersonation through kapi is not allowed/),
    });
  });

  it('when a header merely contains the word (X-Impersonate-User), then it is not impersonation and passes', () => {
    expect(values(['X-Impersonate-User', 'x'], 'x-impersonate-user')).toEqual(['x']);
  });
});

describe('forwardRequestHeaders: removing what must not reach kube-apiserver', () => {
  it.each([
    ['Authorization', ['Authorization', 'Bearer user-token'], 'authorization', ['Bearer kapi-sa-token']],
    [
      'a lower-case, duplicated authorization',
      ['authorization', 'Bearer a', 'AUTHORIZATION', 'Basic b'],
      'authorization',
      ['Bearer kapi-sa-token'],
    ],
    ['Proxy-Authorization', ['Proxy-Authorization', 'Basic x'], 'proxy-authorization', []],
    ['Cookie', ['Cookie', 'session=abc'], 'cookie', []],
    ['Connection', ['Connection', 'keep-alive'], 'connection', []],
    ['Keep-Alive', ['Keep-Alive', 'timeout=5'], 'keep-alive', []],
    ['Proxy-Connection', ['Proxy-Connection', 'keep-alive'], 'proxy-connection', []],
    ['TE', ['TE', 'trailers'], 'te', []],
    ['Trailer', ['Trailer', 'X-Checksum'], 'trailer', []],
    [
      'Upgrade on an ordinary request',
      ['Upgrade', 'h2c', 'Connection', 'Upgrade, HTTP2-Settings', 'HTTP2-Settings', 'AAA'],
      'upgrade',
      [],
    ],
    ['a header named in Connection', ['Connection', 'X-Secret-Hop', 'X-Secret-Hop', 'v'], 'x-secret-hop', []],
    [
      'a header named in Connection in another case',
      ['Connection', 'x-secret-hop', 'X-SECRET-HOP', 'v'],
      'x-secret-hop',
      [],
    ],
    ['Expect', ['Expect', '100-continue'], 'expect', []],
    ['a forged X-Forwarded-For', ['X-Forwarded-For', '1.2.3.4'], 'x-forwarded-for', ['192.0.2.7']],
    ['a forged X-Real-Ip', ['X-Real-Ip', '1.2.3.4'], 'x-real-ip', []],
    ['a forged Forwarded', ['Forwarded', 'for=1.2.3.4'], 'forwarded', []],
    ['a forged X-Forwarded-Proto', ['X-Forwarded-Proto', 'http'], 'x-forwarded-proto', ['https']],
    ['the client Host', ['Host', 'kapi.example.com'], 'host', ['10.0.0.1:6443']],
    ['a client Audit-ID', ['Audit-ID', 'forged'], 'audit-id', ['req-1']],
    ['a client X-Request-Id', ['X-Request-Id', 'forged'], 'x-request-id', []],
    ['a front-proxy X-Remote-User', ['X-Remote-User', 'admin'], 'x-remote-user', []],
    ['a front-proxy X-Remote-Group', ['x-remote-group', 'system:masters'], 'x-remote-group', []],
    ['a front-proxy X-Remote-Extra-*', ['X-Remote-Extra-Scopes', 'all'], 'x-remote-extra-scopes', []],
  ])('when the client sends %s, then only kapi’s value (if any) arrives', (_case, raw, name, expected) => {
    expect(values(raw, name)).toEqual(expected);
  });

  it('when the client sends a chunked body, then Transfer-Encoding is re-declared as chunked once', () => {
    expect(values(['Transfer-Encoding', 'gzip, chunked'], 'transfer-encoding')).toEqual(['chunked']);
  });

  it('when the client sends end-to-end headers, then they pass unchanged, in order, in their case, duplicates kept', () => {
    const raw = ['Accept', 'application/json', 'User-Agent', 'kubectl/v1.35', 'X-Custom', 'a', 'x-custom', 'b'];
    const result = forwardRequestHeaders(raw, context);
    expect(result.ok && result.headers.slice(0, raw.length)).toEqual(raw);
  });

  it('when the client sends a Content-Length, then exactly that one framing header arrives', () => {
    expect(values(['Content-Length', '12'], 'content-length')).toEqual(['12']);
    expect(values(['Content-Length', '12'], 'transfer-encoding')).toEqual([]);
  });

  it.each([
    [
      'Connection: content-length',
      ['Connection', 'keep-alive, content-length', 'Content-Length', '73'],
      'content-length',
      ['73'],
    ],
    [
      'Connection: Transfer-Encoding',
      ['Connection', 'Transfer-Encoding', 'Transfer-Encoding', 'chunked'],
      'transfer-encoding',
      ['chunked'],
    ],
  ])(
    'when %s tries to strip the body framing (request smuggling), then the framing still arrives',
    (_case, raw, name, expected) => {
      expect(values(raw, name)).toEqual(expected);
    },
  );

  it('when the client was on HTTPS with a Host, then X-Forwarded-Proto/Host/For tell kube-apiserver what kapi saw', () => {
    const headers = pairs(['Host', 'kapi.example.com:9443']);
    expect(headers).toEqual(
      expect.arrayContaining([
        ['host', '10.0.0.1:6443'],
        ['x-forwarded-for', '192.0.2.7'],
        ['x-forwarded-proto', 'https'],
        ['x-forwarded-host', 'kapi.example.com:9443'],
        ['audit-id', 'req-1'],
      ]),
    );
  });
});

describe('forwardRequestHeaders: identity', () => {
  it('when forwarding, then kapi’s Authorization and the caller’s identity are added after the client’s headers', () => {
    expect(pairs(['Accept', '*/*']).slice(-4)).toEqual([
      ['authorization', 'Bearer kapi-sa-token'],
      ['impersonate-user', 'alice'],
      ['impersonate-group', 'dev'],
      ['impersonate-group', 'ops'],
    ]);
  });

  it('when the connection has no credentials of its own (client certificate), then no Authorization is sent', () => {
    expect(values(['Authorization', 'Bearer user'], 'authorization', { ...context, credentials: {} })).toEqual([]);
  });

  it('when the caller has a name the header cannot carry (a newline), then the request is refused, not mangled', () => {
    const result = forwardRequestHeaders([], {
      ...context,
      user: { username: 'eve\r\nImpersonate-User: admin', groups: [] },
    });
    expect(result).toMatchObject({ ok: false, reason: 'identity' });
  });
});

describe('forwardRequestHeaders: one list of groups, several callers', () => {
  // The headers are made once per list of groups (authenticate.ts hands a session the same list while its User is
  // unchanged); a list seen with another name or uid must never give the headers made for the first.
  it('when the same groups come with another name or uid, then the headers are that caller’s', () => {
    const groups = ['dev'];
    const of = (user: UserInfo) =>
      values([], 'impersonate-user', { ...context, user }).concat(
        values([], 'impersonate-uid', { ...context, user }),
        values([], 'impersonate-group', { ...context, user }),
      );
    expect(of({ username: 'alice', uid: 'a-1', groups })).toEqual(['alice', 'a-1', 'dev']);
    expect(of({ username: 'alice', uid: 'a-1', groups })).toEqual(['alice', 'a-1', 'dev']);
    expect(of({ username: 'bob', uid: 'a-1', groups })).toEqual(['bob', 'a-1', 'dev']);
    expect(of({ username: 'bob', uid: 'b-2', groups })).toEqual(['bob', 'b-2', 'dev']);
    expect(of({ username: 'bob', groups })).toEqual(['bob', 'dev']);
    expect(of({ username: 'alice', uid: 'a-1', groups: ['dev'] })).toEqual(['alice', 'a-1', 'dev']);
  });

  it('when a name cannot be sent, then it is refused however often the list was seen before', () => {
    const groups = ['dev'];
    expect(forwardRequestHeaders([], { ...context, user: { username: 'alice', groups } })).toMatchObject({ ok: true });
    for (let i = 0; i < 2; i++)
      expect(forwardRequestHeaders([], { ...context, user: { username: 'eve\nx', groups } })).toMatchObject({
        ok: false,
        reason: 'identity',
      });
  });
});

describe('impersonationHeaders', () => {
  // kube-apiserver authorizes each Impersonate-* value on its own: the list pins that no value is sent that the
  // caller's identity does not need (system:authenticated is added by kube-apiserver itself).
  it.each<[string, UserInfo, string[]]>([
    ['no groups', { username: 'bob', groups: [] }, ['Impersonate-User', 'bob']],
    [
      'system:authenticated among the groups (as the authenticator adds it)',
      { username: 'bob', groups: ['system:authenticated', 'dev'] },
      ['Impersonate-User', 'bob', 'Impersonate-Group', 'dev'],
    ],
    [
      'duplicated and empty groups',
      { username: 'bob', groups: ['dev', '', 'dev', 'system:authenticated'] },
      ['Impersonate-User', 'bob', 'Impersonate-Group', 'dev'],
    ],
    ['a uid', { username: 'bob', uid: 'u-1', groups: [] }, ['Impersonate-User', 'bob', 'Impersonate-Uid', 'u-1']],
    [
      'system:unauthenticated among the groups (kube would then not add system:authenticated)',
      { username: 'bob', groups: ['system:unauthenticated', 'system:authenticated'] },
      [
        'Impersonate-User',
        'bob',
        'Impersonate-Group',
        'system:unauthenticated',
        'Impersonate-Group',
        'system:authenticated',
      ],
    ],
    [
      'the anonymous name (kube adds system:unauthenticated to it, not system:authenticated)',
      { username: 'system:anonymous', groups: ['system:authenticated'] },
      ['Impersonate-User', 'system:anonymous', 'Impersonate-Group', 'system:authenticated'],
    ],
  ])('when the caller has %s, then the headers are as kube-apiserver needs them', (_case, user, expected) => {
    expect(impersonationHeaders(user)).toEqual(expected);
  });

  it('when a group is not ASCII, then it travels as its UTF-8 bytes (latin1 string for Node)', () => {
    const headers = impersonationHeaders({ username: 'zoë', groups: ['équipe'] })!;
    expect(Buffer.from(headers[1]!, 'latin1').toString('utf8')).toBe('zoë');
    expect(Buffer.from(headers[3]!, 'latin1').toString('utf8')).toBe('équipe');
  });

  it.each([
    ['an empty name', { username: '', groups: [] }],
    ['a group with a control character', { username: 'bob', groups: ['a\u0000b'] }],
    ['a uid with a newline', { username: 'bob', uid: 'a\nb', groups: [] }],
  ])('when the caller has %s, then there are no headers for it', (_case, user) => {
    expect(impersonationHeaders(user)).toBeUndefined();
  });
});

describe('forwardRequestHeaders: upgrades', () => {
  const upgrade = { ...context, upgrade: true };

  it('when upgrading to WebSocket, then Connection: Upgrade and Upgrade are kept and Sec-WebSocket-* pass', () => {
    const headers = pairs(
      [
        'Connection',
        'Upgrade',
        'Upgrade',
        'websocket',
        'Sec-WebSocket-Key',
        'dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version',
        '13',
        'Sec-WebSocket-Protocol',
        'v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.dXNlci10b2tlbg, v4.channel.k8s.io',
      ],
      upgrade,
    );
    expect(headers).toEqual(
      expect.arrayContaining([
        ['connection', 'Upgrade'],
        ['upgrade', 'websocket'],
        ['sec-websocket-key', 'dGhlIHNhbXBsZSBub25jZQ=='],
        ['sec-websocket-version', '13'],
        ['sec-websocket-protocol', 'v5.channel.k8s.io, v4.channel.k8s.io'],
      ]),
    );
    expect(headers.filter(([n]) => n === 'connection' || n === 'upgrade')).toHaveLength(2);
  });

  it('when upgrading to SPDY/3.1 with Connection naming other headers, then those are still dropped', () => {
    const headers = pairs(
      [
        'Connection',
        'Upgrade, X-Hop',
        'Upgrade',
        'SPDY/3.1',
        'X-Hop',
        'v',
        'X-Stream-Protocol-Version',
        'v4.channel.k8s.io',
      ],
      upgrade,
    );
    expect(headers).toEqual(
      expect.arrayContaining([
        ['upgrade', 'SPDY/3.1'],
        ['x-stream-protocol-version', 'v4.channel.k8s.io'],
      ]),
    );
    expect(headers.map(([n]) => n)).not.toContain('x-hop');
  });

  it('when the only subprotocol offered is the bearer token, then Sec-WebSocket-Protocol is dropped', () => {
    const raw = ['Sec-WebSocket-Protocol', 'base64url.bearer.authorization.k8s.io.dG9r'];
    expect(values(raw, 'sec-websocket-protocol', upgrade)).toEqual([]);
  });
});

describe('withoutBearerSubprotocol', () => {
  it.each([
    ['v5.channel.k8s.io', 'v5.channel.k8s.io'],
    ['base64url.bearer.authorization.k8s.io.dG9r,v5.channel.k8s.io', 'v5.channel.k8s.io'],
    [
      'v5.channel.k8s.io , BASE64URL.BEARER.AUTHORIZATION.K8S.IO.dG9r , channel.k8s.io',
      'v5.channel.k8s.io, channel.k8s.io',
    ],
    ['base64url.bearer.authorization.k8s.io.dG9r', ''],
    [' , ', ''],
  ])('when the offer is "%s", then "%s" remains', (offer, expected) => {
    expect(withoutBearerSubprotocol(offer)).toBe(expected);
  });
});

describe('forwardResponseHeaders', () => {
  it('when kube-apiserver answers with hop-by-hop headers, then only end-to-end headers come back, in order and case', () => {
    const raw = [
      'Audit-Id',
      'a-1',
      'Content-Type',
      'application/json',
      'Connection',
      'keep-alive, X-Hop',
      'Keep-Alive',
      'timeout=5',
      'Transfer-Encoding',
      'chunked',
      'X-Hop',
      'v',
      'Trailer',
      'X-T',
      'Upgrade',
      'h2c',
      'Proxy-Connection',
      'close',
      'Warning',
      '299 - "a"',
      'Warning',
      '299 - "b"',
      'X-Kubernetes-Pf-Flowschema-Uid',
      'f',
    ];
    expect(forwardResponseHeaders(raw)).toEqual([
      'Audit-Id',
      'a-1',
      'Content-Type',
      'application/json',
      'Warning',
      '299 - "a"',
      'Warning',
      '299 - "b"',
      'X-Kubernetes-Pf-Flowschema-Uid',
      'f',
    ]);
  });
});
