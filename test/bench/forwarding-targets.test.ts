/** The bench's forwarding verdicts on a real kube-apiserver (issue 16's targets, judged as ratios). */
import { describe, expect, it } from '@jest/globals';
import { forwardingOnKubeRows, type ForwardingCpu } from '../../bench/forwarding-targets.js';

const cpu = (kapi: number, kubeApiserverDirect: number, kubeApiserverThroughKapi: number): ForwardingCpu => ({
  kapi,
  kubeApiserverDirect,
  kubeApiserverThroughKapi,
});

function verdicts(c1: ForwardingCpu, c16: ForwardingCpu, errors = 0): string[] {
  return forwardingOnKubeRows({ c1, c16, addedP50Ms: 0.2, errors }).map((row) => row.verdict);
}

describe('when forwarding is judged against kube-apiserver’s own CPU', () => {
  it.each([
    ['every share within its target', cpu(150, 600, 660), cpu(60, 400, 440), ['pass', 'pass', 'pass']],
    [
      'kapi at exactly 0.3× and 0.15×, kube-apiserver at exactly +15 %',
      cpu(180, 600, 690),
      cpu(60, 400, 460),
      ['pass', 'pass', 'pass'],
    ],
    ['kapi above 0.3× at c1', cpu(181, 600, 600), cpu(60, 400, 400), ['MISS', 'pass', 'pass']],
    ['kapi above 0.15× at c16', cpu(150, 600, 600), cpu(61, 400, 400), ['pass', 'MISS', 'pass']],
    ['kube-apiserver 16 % dearer through kapi at c16', cpu(150, 600, 600), cpu(60, 400, 464), ['pass', 'pass', 'MISS']],
    ['kube-apiserver cheaper through kapi', cpu(150, 600, 500), cpu(60, 400, 300), ['pass', 'pass', 'pass']],
    [
      'kube-apiserver’s CPU not read',
      cpu(150, NaN, NaN),
      cpu(60, NaN, NaN),
      ['not measured', 'not measured', 'not measured'],
    ],
  ])('then %s: the verdicts of c1, c16 and kube-apiserver’s share', (_case, c1, c16, expected) => {
    expect(verdicts(c1, c16)).toEqual(expected);
  });

  it('then failed requests miss every target', () => {
    expect(verdicts(cpu(150, 600, 660), cpu(60, 400, 440), 3)).toEqual(['MISS', 'MISS', 'MISS']);
  });

  it('then each row prints the ratio and the figures it comes from', () => {
    const [c1, c16, through] = forwardingOnKubeRows({
      c1: cpu(437, 746, 848),
      c16: cpu(349, 560, 643),
      addedP50Ms: 0.86,
      errors: 0,
    });
    expect(c1!.value).toBe('0.59× (kapi 437 µs, kube-apiserver 746 µs)');
    expect(c16!.value).toBe('0.62× (kapi 349 µs, kube-apiserver 560 µs)');
    expect(through!.value).toBe('+14 % @c1 (848 µs vs 746 µs), +15 % @c16 (643 µs vs 560 µs)');
  });
});
