import {
  answerFormat,
  auditPath,
  errorAnswer,
  parserFailure,
  requestTargetIn,
} from '../../src/server/framing-errors.js';

describe('answerFormat', () => {
  test.each([
    ['/oauth/token', 'oauth'],
    ['/oauth', 'oauth'],
    ['/OAuth/Token', 'oauth'],
    ['/oauth?x=1', 'oauth'],
    ['http://kapi.example.com/oauth/token', 'oauth'],
    ['/oauthx', 'status'],
    ['/api/v1/nodes', 'status'],
    ['/kapis/resources.kapi.io/v1alpha3/nodes', 'status'],
    ['/healthz', 'status'],
    ['kapi.example.com:443', 'status'],
    [undefined, 'either'],
  ])('when the request was for %s, then the answer is %s', (target, format) => {
    expect(answerFormat(target)).toBe(format);
  });
});

describe('errorAnswer', () => {
  const header = (headers: string[], name: string) => headers[headers.indexOf(name) + 1];

  test('when the format is oauth, then the body is RFC 6749 JSON only, never cached', () => {
    const answer = errorAnswer(431, 'too large', 'oauth');
    expect(JSON.parse(answer.body)).toEqual({ error: 'invalid_request', error_description: 'too large' });
    expect(header(answer.headers, 'Cache-Control')).toBe('no-store');
    expect(header(answer.headers, 'Pragma')).toBe('no-cache');
    expect(header(answer.headers, 'Connection')).toBe('close');
    expect(Number(header(answer.headers, 'Content-Length'))).toBe(Buffer.byteLength(answer.body));
  });

  test('when the format is status, then the body is a Kubernetes Status', () => {
    expect(JSON.parse(errorAnswer(408, 'late', 'status').body)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'late',
      reason: 'Timeout',
      code: 408,
    });
  });

  test('when the path is unknown, then the body is a Status that also carries the RFC 6749 fields', () => {
    expect(JSON.parse(errorAnswer(400, 'broken', 'either').body)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'broken',
      reason: 'BadRequest',
      code: 400,
      error: 'invalid_request',
      error_description: 'broken',
    });
  });
});

describe('parserFailure', () => {
  test.each([
    ['HPE_HEADER_OVERFLOW', 431],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 413],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408],
    ['HPE_INVALID_CHUNK_SIZE', 400],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 400],
    ['HPE_INVALID_METHOD', 400],
  ])('when Node reports %s, then the answer is %i', (code, status) => {
    expect(parserFailure(code, { maxHeaderBytes: 16384 })?.status).toBe(status);
  });

  test.each([
    'ECONNRESET',
    'EPIPE',
    'HPE_INVALID_EOF_STATE',
    'ERR_TLS_HANDSHAKE_TIMEOUT',
    'ERR_SSL_WRONG_VERSION_NUMBER',
    undefined,
  ])('when Node reports %s, then nobody is answered', (code) => {
    expect(parserFailure(code, { maxHeaderBytes: 16384 })).toBeUndefined();
  });
});

describe('requestTargetIn', () => {
  test.each([
    ['GET /oauth/token HTTP/1.1\r\nHost: x\r\n', '/oauth/token'],
    ['POST /api/v1/namespaces?x=1 HTTP/1.1\r\n', '/api/v1/namespaces?x=1'],
    ['GET /oauth/token?' + 'a'.repeat(100), '/oauth/token?' + 'a'.repeat(100)],
    ['GET http://kapi/oauth/token HTTP/1.1\r\n', 'http://kapi/oauth/token'],
    ['X-Padding: aaaa\r\nMore: b\r\n', undefined],
    ['\r\n\r\n', undefined],
    ['', undefined],
  ])('when the bytes are %j, then the target is %j', (text, target) => {
    expect(requestTargetIn(Buffer.from(text, 'latin1'))).toBe(target);
  });
});

describe('auditPath', () => {
  test.each([
    ['/oauth/token?password=secret', '/oauth/token'],
    ['/api/v1/nodes', '/api/v1/nodes'],
    ['http://admin:s3cret@kapi.example.com/api/v1/nodes?token=t', '/api/v1/nodes'],
    ['HTTPS://admin:s3cret@kapi.example.com', '/'],
    ['admin:s3cret@kapi.example.com:443', undefined],
    ['kapi.example.com:443', undefined],
    ['*', undefined],
    [undefined, undefined],
  ])('when the request target is %s, then the audit line names the path %s and no credentials', (target, path) => {
    expect(auditPath(target)).toBe(path);
    expect(String(auditPath(target))).not.toContain('s3cret');
  });
});
