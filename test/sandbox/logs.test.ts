import type { Sandbox } from '../../src/sandbox/index.js';
import {
  containerLog,
  lineCount,
  lineTime,
  parseLogOptions,
  rfc3339Nano,
  selectLines,
} from '../../src/sandbox/pod-logs.js';
import type { KubeObject } from '../../src/sandbox/resource-types.js';
import { StatusError } from '../../src/sandbox/status.js';
import { call, testSandbox, type Json } from './helpers.js';

const START = Date.parse('2025-01-01T00:00:00Z');
const SANDBOX_START = Date.parse('2025-01-02T00:00:00Z');

function pod(state: Record<string, unknown>, containers = ['app'], init: string[] = []): KubeObject {
  return {
    metadata: { name: 'p', namespace: 'demo', creationTimestamp: '2025-01-01T00:00:00Z' },
    spec: { containers: containers.map((name) => ({ name })), initContainers: init.map((name) => ({ name })) },
    status: { containerStatuses: containers.map((name) => ({ name, state })) },
  };
}

const running = { running: { startedAt: '2025-01-01T00:00:00Z' } };
const options = (query = '') => parseLogOptions(new URLSearchParams(query), 'p');

describe('pod logs (pure)', () => {
  test('when a running container is read, then it has a few dozen historic lines, then one per interval', () => {
    const log = containerLog(pod(running), options(), SANDBOX_START, 1000);
    expect(log.historic).toBeGreaterThanOrEqual(24);
    expect(log.historic).toBeLessThanOrEqual(60);
    expect(lineCount(log, SANDBOX_START)).toBe(log.historic);
    expect(lineCount(log, SANDBOX_START + 5500)).toBe(log.historic + 5);
    for (let i = 1; i < log.historic + 5; i++) expect(lineTime(log, i)).toBeGreaterThanOrEqual(lineTime(log, i - 1));
    expect(lineTime(log, 0)).toBeGreaterThan(START);
  });

  test('when tailLines and sinceTime are given, then the selection narrows from the end and by time', () => {
    const log = containerLog(pod(running), options(), SANDBOX_START, 1000);
    expect(selectLines(log, options('tailLines=3'), SANDBOX_START)).toEqual({
      from: log.historic - 3,
      to: log.historic,
    });
    expect(selectLines(log, options('tailLines=0'), SANDBOX_START)).toEqual({ from: log.historic, to: log.historic });
    const since = new Date(lineTime(log, 10)).toISOString();
    expect(selectLines(log, options(`sinceTime=${since}`), SANDBOX_START).from).toBe(10);
    expect(selectLines(log, options('sinceSeconds=2'), SANDBOX_START + 3000).from).toBe(log.historic);
  });

  test.each([
    [
      'a multi-container pod without container',
      pod(running, ['a', 'b'], ['init']),
      '',
      /a container name must be specified for pod p, choose one of: \[a b\] or one of the init containers: \[init\]/,
    ],
    ['an unknown container', pod(running), 'container=nope', /container nope is not valid for pod p/],
    [
      'a container still waiting',
      pod({ waiting: { reason: 'ContainerCreating' } }),
      '',
      /container "app" in pod "p" is waiting to start: ContainerCreating/,
    ],
    [
      'the previous container',
      pod(running),
      'previous=true',
      /previous terminated container "app" in pod "p" not found/,
    ],
  ])("when asking for %s, then it is a 400 with kube's message", (_name, p, query, message) => {
    let error: unknown;
    try {
      containerLog(p, options(query), SANDBOX_START, 1000);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(StatusError);
    expect((error as StatusError).code).toBe(400);
    expect((error as StatusError).message).toMatch(message);
  });

  test('when options are out of range, then they are 422 Invalid on PodLogOptions', () => {
    for (const query of [
      'tailLines=-1',
      'limitBytes=0',
      'sinceSeconds=0',
      'sinceSeconds=5&sinceTime=2025-01-01T00:00:00Z',
    ]) {
      expect(() => options(query)).toThrow(
        expect.objectContaining({ code: 422, message: expect.stringMatching(/^PodLogOptions "p" is invalid/) }),
      );
    }
    expect(() => options('sinceTime=yesterday')).toThrow(
      expect.objectContaining({
        code: 400,
        message: 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
      }),
    );
    expect(() => options('tailLines=x')).toThrow(
      expect.objectContaining({ code: 400, message: 'strconv.ParseInt: parsing "x": invalid syntax' }),
    );
    // kube's query conversion: anything but "0", "" and "false" is true
    expect(options('follow=maybe').follow).toBe(true);
    expect(options('follow=FALSE').follow).toBe(false);
  });

  test('when a timestamp is rendered, then it is RFC3339Nano with trailing zeros trimmed', () => {
    expect(rfc3339Nano(Date.parse('2025-01-01T00:00:01.500Z'), 0)).toBe('2025-01-01T00:00:01.5Z');
    expect(rfc3339Nano(Date.parse('2025-01-01T00:00:01.000Z'), 0)).toBe('2025-01-01T00:00:01Z');
    expect(rfc3339Nano(Date.parse('2025-01-01T00:00:01.000Z'), 1234)).toBe('2025-01-01T00:00:01.000001234Z');
  });
});

describe('pod logs over HTTP', () => {
  let sandbox: Sandbox;
  let podPath: string;
  beforeAll(async () => {
    sandbox = await testSandbox({ logLineIntervalMs: 100 });
    const pods = await call<Json>(
      sandbox,
      'GET',
      '/api/v1/namespaces/kube-system/pods?labelSelector=app%3Dkube-proxy&limit=1',
    );
    podPath = `/api/v1/namespaces/kube-system/pods/${pods.body.items[0].metadata.name}`;
  });
  afterAll(() => sandbox.stop());

  test("when a seeded pod's log is read, then it is text/plain lines each starting with an RFC3339 time, stable between reads", async () => {
    const res = await fetch(`${sandbox.url}${podPath}/log?tailLines=5`, {
      headers: { Authorization: `Bearer ${sandbox.adminToken}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain');
    const lines = (await res.text()).trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO|WARN|ERROR|DEBUG) /);
    const again = await call<string>(sandbox, 'GET', `${podPath}/log?tailLines=50&timestamps=true`);
    expect(again.body.split('\n')[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z \d{4}-/);
  });

  test('when limitBytes is set, then the answer stops at that many bytes', async () => {
    const res = await call<string>(sandbox, 'GET', `${podPath}/log?limitBytes=40`);
    expect(Buffer.byteLength(res.body)).toBe(40);
  });

  test('when follow is set, then new lines stream until the client goes away', async () => {
    const abort = new AbortController();
    const res = await fetch(`${sandbox.url}${podPath}/log?follow=true&tailLines=1`, {
      headers: { Authorization: `Bearer ${sandbox.adminToken}` },
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    const deadline = Date.now() + 3000;
    while (text.split('\n').length < 4 && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    abort.abort();
    expect(text.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(3);
  });

  test('when the pod is missing or a container is not chosen, then the errors are Status objects', async () => {
    expect((await call(sandbox, 'GET', '/api/v1/namespaces/demo/pods/ghost/log')).status).toBe(404);
    const multi = await call<Json>(
      sandbox,
      'GET',
      '/api/v1/namespaces/kube-system/pods?labelSelector=app%3Dcalico-node&limit=1',
    );
    const res = await call<Json>(
      sandbox,
      'GET',
      `/api/v1/namespaces/kube-system/pods/${multi.body.items[0].metadata.name}/log?container=install-cni&tailLines=1`,
    );
    expect(res.status).toBe(200);
    const previous = await call<Json>(sandbox, 'GET', `${podPath}/log?previous=true`);
    expect(previous.status).toBe(400);
    expect(previous.body.kind).toBe('Status');
  });
});
