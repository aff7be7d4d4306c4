import { describe, expect, it } from '@jest/globals';
import { CacheHealth, describeError } from '../../src/kube/cache-health.js';
import { KubeApiError } from '../../src/kube/client.js';
import { capturingLogger } from './fake-kube-apiserver.js';

function health() {
  let now = 1_000_000;
  const { logger, lines } = capturingLogger();
  const h = new CacheHealth(logger, 30_000, () => now);
  return { h, lines, advance: (ms: number) => (now += ms) };
}

const synced = { synced: true, stopped: false };

describe('CacheHealth', () => {
  it.each<[string, (t: ReturnType<typeof health>) => void, { synced: boolean; stopped: boolean }, string | undefined]>([
    ['nothing happened yet', () => undefined, { synced: false, stopped: false }, 'not synced yet'],
    [
      'the first list failed',
      ({ h }) => h.failed(new KubeApiError(403, undefined, 'forbidden'), 1, 200),
      { synced: false, stopped: false },
      'not synced yet (last error: HTTP 403: forbidden)',
    ],
    ['synced and current', () => undefined, synced, undefined],
    [
      'synced, broken for 30 s exactly',
      ({ h, advance }) => {
        h.failed(new Error('connect ECONNREFUSED'), 1, 200);
        advance(30_000);
      },
      synced,
      undefined,
    ],
    [
      'synced, broken for 31 s',
      ({ h, advance }) => {
        h.failed(new Error('connect ECONNREFUSED'), 1, 200);
        advance(20_000);
        h.failed(new Error('socket hang up'), 2, 400);
        advance(11_000);
      },
      synced,
      'not kept current for 31 s (last error: socket hang up)',
    ],
    [
      'broken for a minute, then current again',
      ({ h, advance }) => {
        h.failed(new Error('x'), 1, 200);
        advance(60_000);
        h.current();
      },
      synced,
      undefined,
    ],
    ['stopped', () => undefined, { synced: true, stopped: true }, 'stopped'],
  ])('when %s, then readiness says so', (_case, steps, state, reason) => {
    const t = health();
    steps(t);
    expect(t.h.notReadyReason(state)).toBe(reason);
  });

  it('when an outage goes on, then warnings come at 1, 2, 4, 8 failures, one stale error, and one recovery line', () => {
    const { h, lines, advance } = health();
    for (let failures = 1; failures <= 10; failures++) {
      h.failed(new Error('down'), failures, 5000);
      advance(5000);
    }
    h.current();
    h.current();
    const summary = lines.map((l) => `${l.level}:${(l.failures as number | undefined) ?? ''}:${l.message}`);
    expect(summary.filter((l) => !l.startsWith('debug'))).toEqual([
      'warn:1:list/watch failed; retrying',
      'warn:2:list/watch failed; retrying',
      'warn:4:list/watch failed; retrying',
      'warn:8:list/watch failed; retrying', // at 35 s: past staleAfterMs
      'error::cache is stale: not ready until the watch recovers',
      'info::cache is current again',
    ]);
  });

  it('when an error message is very long, then it is cut to 300 characters', () => {
    expect(describeError(new Error('x'.repeat(1000)))).toHaveLength(301);
  });
});
