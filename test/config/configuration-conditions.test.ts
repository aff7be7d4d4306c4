import { nextConditions, type StatusCondition } from '../../src/config/configuration-conditions.js';

const NOW = new Date('2025-01-02T03:04:05.678Z');
const EARLIER = '2024-12-31T00:00:00Z';

function condition(
  type: string,
  status: StatusCondition['status'],
  extra: Partial<StatusCondition> = {},
): StatusCondition {
  return { type, status, reason: 'X', message: 'm', lastTransitionTime: EARLIER, ...extra };
}

describe('nextConditions', () => {
  it('when the object has no conditions and is valid, then Valid and Ready become True at the current second', () => {
    expect(nextConditions(undefined, { valid: true }, 3, NOW)).toEqual([
      {
        type: 'Valid',
        status: 'True',
        reason: 'Applied',
        message: 'the configuration is valid',
        observedGeneration: 3,
        lastTransitionTime: '2025-01-02T03:04:05Z',
      },
      {
        type: 'Ready',
        status: 'True',
        reason: 'Applied',
        message: 'generation 3 is in effect',
        observedGeneration: 3,
        lastTransitionTime: '2025-01-02T03:04:05Z',
      },
    ]);
  });

  it('when the object is invalid, then Valid carries the error and Ready says the last valid configuration is kept', () => {
    const next = nextConditions([], { valid: false, error: 'spec.x: bad' }, 4, NOW);
    expect(next).toEqual([
      expect.objectContaining({
        type: 'Valid',
        status: 'False',
        reason: 'InvalidConfiguration',
        message: 'spec.x: bad',
        observedGeneration: 4,
      }),
      expect.objectContaining({
        type: 'Ready',
        status: 'False',
        reason: 'InvalidConfiguration',
        message: expect.stringContaining('generation 4 is invalid') as unknown as string,
      }),
    ]);
  });

  it('when the object already carries the same conditions, then nothing is written (no write loop)', () => {
    const first = nextConditions(undefined, { valid: false, error: 'e' }, 2, NOW)!;
    expect(nextConditions(first, { valid: false, error: 'e' }, 2, new Date(NOW.getTime() + 60_000))).toBeUndefined();
  });

  it.each([
    ['the generation moved', { valid: true } as const, 6],
    ['the error text changed', { valid: false, error: 'other' } as const, 5],
    ['the verdict flipped', { valid: true } as const, 5],
  ])('when %s, then new conditions are written', (_case, verdict, generation) => {
    const existing = nextConditions(undefined, { valid: false, error: 'e' }, 5, NOW)!;
    expect(nextConditions(existing, verdict, generation, NOW)).toBeDefined();
  });

  it('when only the message changes, then lastTransitionTime is kept; when the status flips, it moves', () => {
    const existing = [condition('Valid', 'False', { reason: 'InvalidConfiguration' }), condition('Ready', 'False')];
    const sameStatus = nextConditions(existing, { valid: false, error: 'new problem' }, 1, NOW)!;
    expect(sameStatus.map((c) => c.lastTransitionTime)).toEqual([EARLIER, EARLIER]);
    const flipped = nextConditions(existing, { valid: true }, 1, NOW)!;
    expect(flipped.map((c) => c.lastTransitionTime)).toEqual(['2025-01-02T03:04:05Z', '2025-01-02T03:04:05Z']);
  });

  it('when the object carries conditions of other types, then they are kept unchanged', () => {
    const other = condition('Progressing', 'True');
    const next = nextConditions([other], { valid: true }, 1, NOW)!;
    expect(next[0]).toBe(other);
    expect(next.map((c) => c.type)).toEqual(['Progressing', 'Valid', 'Ready']);
  });

  it('when the error is very long, then the message is cut to 4096 characters', () => {
    const next = nextConditions(undefined, { valid: false, error: 'e'.repeat(10_000) }, 1, NOW)!;
    expect(next[0]!.message).toHaveLength(4097);
  });

  it('when the object has no generation, then observedGeneration is left out', () => {
    const next = nextConditions(undefined, { valid: true }, undefined, NOW)!;
    expect(next[0]).not.toHaveProperty('observedGeneration');
    expect(next[1]!.message).toBe('this configuration is in effect');
  });
});
