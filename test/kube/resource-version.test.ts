import { describe, expect, it } from '@jest/globals';
import { SharedVersionRead, resourceVersionReached } from '../../src/kube/resource-version.js';

describe('resourceVersionReached', () => {
  it.each([
    ['when the seen version is the target, then it is reached', '120', '120', true],
    ['when the seen version is newer, then it is reached', '121', '120', true],
    ['when the seen version is older, then it is not', '119', '120', false],
    ['when they differ in length, then they compare as numbers, not text', '99', '100', false],
    ['when they pass 2^53, then they still compare exactly', '9007199254740993', '9007199254740992', true],
    ['when they pass 2^53 the other way, then too', '9007199254740992', '9007199254740993', false],
    ['when the seen version is not a decimal integer, then it is not comparable', 'abc', '120', undefined],
    ['when the target is not a decimal integer, then it is not comparable', '120', '12a', undefined],
    ['when a version has a leading zero, then it is not comparable', '0120', '120', undefined],
    ['when the cache has seen nothing yet, then it is not comparable', '', '120', undefined],
    ['when a version is negative, then it is not comparable', '-1', '120', undefined],
  ])('%s', (_name, seen, target, reached) => {
    expect(resourceVersionReached(seen, target)).toBe(reached);
  });
});

function gatedReads() {
  let now = 0;
  const pending: Array<{ resolve: (rv: string) => void; reject: (error: Error) => void }> = [];
  const shared = new SharedVersionRead(
    () => new Promise<string>((resolve, reject) => pending.push({ resolve, reject })),
    1000,
    () => now,
  );
  return {
    shared,
    pending,
    advance: (ms: number) => (now += ms),
  };
}

describe('SharedVersionRead', () => {
  it('when many callers ask while a read is in flight, then they all share that one read', async () => {
    const { shared, pending } = gatedReads();
    const answers = Array.from({ length: 50 }, () => shared.current());
    expect(pending).toHaveLength(1);
    pending[0]!.resolve('42');
    expect(await Promise.all(answers)).toEqual(Array(50).fill('42'));
  });

  it('when a read is in flight longer than the reuse window, then later callers still share it', async () => {
    const { shared, pending, advance } = gatedReads();
    const first = shared.current();
    advance(5000);
    const second = shared.current();
    expect(pending).toHaveLength(1);
    pending[0]!.resolve('7');
    expect([await first, await second]).toEqual(['7', '7']);
  });

  it('when a read has settled, then it is reused until the window after its start, and read again after', async () => {
    const { shared, pending, advance } = gatedReads();
    const first = shared.current();
    pending[0]!.resolve('10');
    await first;
    advance(999);
    expect(await shared.current()).toBe('10');
    expect(pending).toHaveLength(1);
    advance(1);
    const fresh = shared.current();
    expect(pending).toHaveLength(2);
    pending[1]!.resolve('11');
    expect(await fresh).toBe('11');
  });

  it('when a read fails, then the failure is shared for the window too (a failing cluster is not asked per caller)', async () => {
    const { shared, pending, advance } = gatedReads();
    const first = shared.current();
    pending[0]!.reject(new Error('ECONNREFUSED'));
    await expect(first).rejects.toThrow('ECONNREFUSED');
    await expect(shared.current()).rejects.toThrow('ECONNREFUSED');
    expect(pending).toHaveLength(1);
    advance(1000);
    const retried = shared.current();
    pending[1]!.resolve('12');
    expect(await retried).toBe('12');
  });
});
