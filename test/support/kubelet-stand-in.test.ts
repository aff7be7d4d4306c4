/**
 * The e2e harness's kubelet stand-in (test/e2e/kubelet-stand-in.ts) answers `GET /containerLogs/…` as a kubelet does,
 * so what a real kube-apiserver relays from it is what it would relay from a node.
 */
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  firstSentLine,
  kubeletTimestamp,
  parseKubeletLogQuery,
  type KubeletLogOptions,
  type WrittenLine,
} from '../e2e/kubelet-lines.js';
import { startKubeletStandIn, type KubeletStandIn } from '../e2e/kubelet-stand-in.js';

const NOW = Date.parse('2026-11-25T10:00:00Z');
/** Five lines, a minute apart, the last one a minute before NOW. */
const LINES: WrittenLine[] = [5, 4, 3, 2, 1].map((minutesAgo, i) => ({
  ms: NOW - minutesAgo * 60_000 + i,
  nano: 500,
  text: `line ${i + 1}`,
}));

function options(query: string): KubeletLogOptions {
  return parseKubeletLogQuery(new URLSearchParams(query), NOW);
}

describe('when the kubelet stand-in reads its query', () => {
  it.each([
    ['follow=false', 0],
    ['tailLines=2', 3],
    ['tailLines=0', 5],
    ['tailLines=9', 0],
    ['tail=2', 3],
    ['tail=all&tailLines=1', 0],
    ['sinceSeconds=150', 3],
    ['sinceTime=2026-11-25T09:57:00Z', 2],
    ['sinceTime=2026-11-25T09:57:00Z&tailLines=1', 4],
    ['sinceTime=2026-11-25T09:58:00Z&tailLines=4', 3],
  ])('then %s starts at line index %d (the tail first, then the since time)', (query, first) => {
    expect(firstSentLine(LINES, options(query))).toBe(first);
  });

  it.each([
    ['tailLines=-1', 422],
    ['limitBytes=0', 422],
    ['sinceSeconds=0', 422],
    ['sinceSeconds=5&sinceTime=2026-11-25T09:57:00Z', 422],
    ['tailLines=ten', 400],
    ['follow=maybe', 400],
    ['sinceTime=yesterday', 400],
  ])('then %s is refused with %d, as the kubelet does', (query, status) => {
    expect(() => options(query)).toThrow(expect.objectContaining({ status }));
  });

  it('then a line’s time is written with nine fraction digits, in UTC', () => {
    expect(kubeletTimestamp({ ms: Date.parse('2026-11-25T09:55:00.120Z'), nano: 45 })).toBe(
      '2026-11-25T09:55:00.120000045Z',
    );
    expect(kubeletTimestamp({ ms: Date.parse('2026-11-25T09:55:00Z'), nano: 0 })).toBe(
      '2026-11-25T09:55:00.000000000Z',
    );
  });
});

describe('when kube-apiserver asks the kubelet stand-in for a container log', () => {
  let standIn: KubeletStandIn;

  beforeAll(async () => {
    standIn = await startKubeletStandIn(() => NOW);
    standIn.write('ns', 'pod', 'app', LINES);
  });

  afterAll(async () => {
    await standIn.stop();
  });

  function get(path: string): Promise<{ status: number; body: string; contentType?: string }> {
    return new Promise((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port: standIn.port, path, rejectUnauthorized: false }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body, contentType: res.headers['content-type'] }));
        })
        .on('error', reject);
    });
  }

  it('then it serves the lines over HTTPS, with timestamps when asked, and records the request', async () => {
    const plain = await get('/containerLogs/ns/pod/app?tailLines=2');
    expect(plain).toMatchObject({ status: 200, body: 'line 4\nline 5\n' });
    const timed = await get('/containerLogs/ns/pod/app?tailLines=1&timestamps=true');
    expect(timed.body).toBe(`${kubeletTimestamp(LINES[4]!)} line 5\n`);
    expect(standIn.requests).toContain('/containerLogs/ns/pod/app?tailLines=1&timestamps=true');
  });

  it('then limitBytes cuts the output, mid-line if need be', async () => {
    expect((await get('/containerLogs/ns/pod/app?limitBytes=10')).body).toBe('line 1\nlin');
  });

  it('then an unknown pod or container is a 404 and an invalid option a 422, with the kubelet’s bodies', async () => {
    expect(await get('/containerLogs/ns/other/app')).toMatchObject({ status: 404, body: 'pod "other" does not exist' });
    expect(await get('/containerLogs/ns/pod/sidecar')).toMatchObject({
      status: 404,
      body: 'container "sidecar" not found in pod "pod"',
    });
    expect(await get('/containerLogs/ns/pod/app?limitBytes=0')).toMatchObject({
      status: 422,
      body: '{"message": "Invalid request."}',
    });
  });

  it('then a follow gets the lines written while it is open, until the stand-in stops', async () => {
    const follower = await startKubeletStandIn(() => NOW);
    follower.write('ns', 'pod', 'app', LINES.slice(0, 1));
    const received: string[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      https
        .get(
          {
            host: '127.0.0.1',
            port: follower.port,
            path: '/containerLogs/ns/pod/app?follow=true',
            rejectUnauthorized: false,
          },
          (res) => {
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => received.push(chunk));
            res.on('end', resolve);
          },
        )
        .on('error', reject);
    });
    while (received.join('') !== 'line 1\n') await new Promise((resolve) => setTimeout(resolve, 10));
    follower.write('ns', 'pod', 'app', [{ ms: NOW, nano: 0, text: 'written while following' }]);
    while (!received.join('').endsWith('written while following\n')) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await follower.stop();
    await ended;
    expect(received.join('')).toBe('line 1\nwritten while following\n');
  });
});
