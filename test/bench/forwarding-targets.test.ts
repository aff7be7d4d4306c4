/** The bench's forwarding verdicts on a real kube-apiserver (issue 16's targets, judged as ratios). */
import { describe, expect, it } from '@jest/globals';
import { forwardingOnKubeRows, kapiOverBareProxyRow, type ForwardingCpu } from '../../bench/forwarding-targets.js';

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
    ['kube-apiserver within 15 % through kapi', cpu(150, 600, 660), cpu(60, 400, 440), ['info', 'pass']],
    ['kube-apiserver at exactly +15 %', cpu(180, 600, 690), cpu(60, 400, 460), ['info', 'pass']],
    ['kube-apiserver 16 % dearer through kapi at c16', cpu(150, 600, 600), cpu(60, 400, 464), ['info', 'MISS']],
    ['kube-apiserver cheaper through kapi', cpu(150, 600, 500), cpu(60, 400, 300), ['info', 'pass']],
    ['kube-apiserver’s CPU not read', cpu(150, NaN, NaN), cpu(60, NaN, NaN), ['info', 'not measured']],
  ])('then %s: kapi’s share is shown, kube-apiserver’s extra judged', (_case, c1, c16, expected) => {
    expect(verdicts(c1, c16)).toEqual(expected);
  });

  it('then, with direct GETs paced as kapi paces them, kube-apiserver through kapi is judged against those', () => {
    const paced = (c: ForwardingCpu, kubeApiserverPaced: number) => ({ ...c, kubeApiserverPaced });
    // +20 % over full-pace direct, but +5 % over the same GETs paced alike: kapi's requests cost what anyone's do
    const rows = forwardingOnKubeRows({
      c1: paced(cpu(150, 600, 720), 686),
      c16: paced(cpu(60, 400, 480), 457),
      addedP50Ms: 0.5,
      errors: 0,
    });
    expect(rows[1]).toMatchObject({
      metric: 'forwarding: kube-apiserver CPU per GET through kapi vs direct paced alike',
      verdict: 'pass',
      value: '+5 % @c1 (720 µs vs 686 µs), +5 % @c16 (480 µs vs 457 µs); at full pace +20 % @c1, +20 % @c16',
    });
    expect(
      forwardingOnKubeRows({
        c1: paced(cpu(150, 600, 720), 600),
        c16: paced(cpu(60, 400, 480), 457),
        addedP50Ms: 0.5,
        errors: 0,
      })[1]!.verdict,
    ).toBe('MISS');
  });

  it('then failed requests miss the target', () => {
    expect(verdicts(cpu(150, 600, 660), cpu(60, 400, 440), 3)).toEqual(['info', 'MISS']);
  });

  it('then each row prints the ratio and the figures it comes from', () => {
    const [shares, through] = forwardingOnKubeRows({
      c1: cpu(437, 746, 848),
      c16: cpu(349, 560, 643),
      addedP50Ms: 0.86,
      errors: 0,
    });
    expect(shares!.value).toBe('0.59× at c1 (kapi 437 µs, kube-apiserver 746 µs), 0.62× at c16 (349 µs, 560 µs)');
    expect(through!.value).toBe('+14 % @c1 (848 µs vs 746 µs), +15 % @c16 (643 µs vs 560 µs)');
  });
});

describe('when kapi’s CPU is judged against the bare proxy’s (SPEC §11: ≤ 1.15× at c1 and c16)', () => {
  it.each([
    ['both within', { c1: 500, c16: 240 }, 0, 'pass'],
    ['exactly 1.15× at both', { c1: 575, c16: 253 }, 0, 'pass'],
    ['above at c1', { c1: 576, c16: 240 }, 0, 'MISS'],
    ['above at c16', { c1: 500, c16: 254 }, 0, 'MISS'],
    ['within, but requests failed', { c1: 500, c16: 240 }, 2, 'MISS'],
    ['c16 not measured', { c1: 500 }, 0, 'not measured'],
  ])('then %s', (_case, kapi: { c1: number; c16?: number }, errors, expected) => {
    const bare = { c1: 500, c16: 220 };
    const ratios = { c1: kapi.c1 / bare.c1, ...(kapi.c16 !== undefined && { c16: kapi.c16 / bare.c16 }) };
    const row = kapiOverBareProxyRow(ratios, errors as number);
    expect(row.verdict).toBe(expected);
  });

  it('then the row prints both ratios', () => {
    expect(kapiOverBareProxyRow({ c1: 640 / 500, c16: 286 / 220 }, 0).value).toBe(
      "1.28× at c1, 1.30× at c16 (median of the rounds, each kapi's run ÷ the bare proxy's right after it)",
    );
  });
});
