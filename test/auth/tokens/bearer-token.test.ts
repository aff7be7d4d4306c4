import type { IncomingHttpHeaders } from 'node:http';
import { isWebSocketUpgrade, presentedToken, withoutBearerSubprotocol } from '../../../src/auth/tokens/bearer-token.js';

const ws = { upgrade: 'websocket', connection: 'Upgrade' };
const carrying = (token: string) => `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`;

describe('presentedToken', () => {
  const cases: Array<[string, IncomingHttpHeaders, unknown]> = [
    ['when nothing is presented, then there is no token', {}, undefined],
    [
      'when the header is Bearer, then its token is used',
      { authorization: 'Bearer abc.def.ghi' },
      { token: 'abc.def.ghi', from: 'header' },
    ],
    [
      'when the scheme is lower case, then it is still Bearer',
      { authorization: 'bearer abc' },
      { token: 'abc', from: 'header' },
    ],
    [
      'when the header is Basic, then it is a problem (no fallback)',
      { authorization: 'Basic YTpi' },
      { problem: expect.any(String) },
    ],
    ['when Bearer has no token, then it is a problem', { authorization: 'Bearer ' }, { problem: expect.any(String) }],
    [
      'when Bearer has two words, then it is a problem',
      { authorization: 'Bearer a b' },
      { problem: expect.any(String) },
    ],
    [
      'when a WebSocket upgrade carries the token subprotocol beside a real one, then the token is used',
      { ...ws, 'sec-websocket-protocol': `${carrying('tok.en')}, v4.channel.k8s.io` },
      { token: 'tok.en', from: 'subprotocol' },
    ],
    [
      'when the token subprotocol comes alone, then it is a problem (kube-apiserver needs another one to agree on)',
      { ...ws, 'sec-websocket-protocol': carrying('tok') },
      { problem: expect.stringMatching(/another subprotocol/) },
    ],
    [
      'when two token subprotocols come, then it is a problem',
      {
        ...ws,
        'sec-websocket-protocol': [`${carrying('a')}, v4.channel.k8s.io`, carrying('b')],
      } as unknown as IncomingHttpHeaders,
      { problem: expect.stringMatching(/more than one/) },
    ],
    [
      'when the token subprotocol is not base64url, then it is a problem',
      { ...ws, 'sec-websocket-protocol': 'base64url.bearer.authorization.k8s.io.a+b/c, v4.channel.k8s.io' },
      { problem: expect.stringMatching(/base64url/) },
    ],
    [
      'when a plain request carries the subprotocol header, then it is ignored (upgrades only)',
      { 'sec-websocket-protocol': `${carrying('tok')}, v4.channel.k8s.io` },
      undefined,
    ],
    [
      'when both the header and a subprotocol are present, then the header wins',
      { ...ws, authorization: 'Bearer head', 'sec-websocket-protocol': `${carrying('sub')}, v4.channel.k8s.io` },
      { token: 'head', from: 'header' },
    ],
  ];
  test.each(cases)('%s', (_name, headers, expected) => {
    expect(presentedToken(headers)).toEqual(expected);
  });
});

describe('withoutBearerSubprotocol', () => {
  test('when the token entry is among others, then only it is removed', () => {
    expect(withoutBearerSubprotocol(`v5.channel.k8s.io, ${carrying('t')}, v4.channel.k8s.io`)).toBe(
      'v5.channel.k8s.io, v4.channel.k8s.io',
    );
  });
  test('when the header repeats, then all values are joined without the token', () => {
    expect(withoutBearerSubprotocol([carrying('t'), 'v4.channel.k8s.io'])).toBe('v4.channel.k8s.io');
  });
  test('when only the token entry was there, then nothing remains', () => {
    expect(withoutBearerSubprotocol(carrying('t'))).toBeUndefined();
  });
});

describe('isWebSocketUpgrade', () => {
  test.each([
    [{ upgrade: 'websocket', connection: 'Upgrade' }, true],
    [{ upgrade: 'WebSocket', connection: 'keep-alive, Upgrade' }, true],
    [{ upgrade: 'SPDY/3.1', connection: 'Upgrade' }, false],
    [{ upgrade: 'websocket' }, false],
  ] as Array<[IncomingHttpHeaders, boolean]>)('when the headers are %p, then upgrade is %p', (headers, expected) => {
    expect(isWebSocketUpgrade(headers)).toBe(expected);
  });
});
