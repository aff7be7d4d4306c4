import type { Row } from './report.js';

/**
 * Issue 16's forwarding targets on a real kube-apiserver, judged as ratios so that a slower or busier machine does not
 * move the goal: kapi's CPU per forwarded GET against kube-apiserver's own per direct GET (≤ 0.3× at c1, ≤ 0.15× at
 * c16), kube-apiserver's own CPU per GET through kapi at most 15 % above direct, and at most 0.3 ms added to p50 at c1.
 */
export const FORWARDING_TARGETS = {
  kapiShareC1: 0.3,
  kapiShareC16: 0.15,
  kubeApiserverThroughKapi: 0.15,
  addedP50Ms: 0.3,
};

/** CPU µs per GET, measured in one pair of runs at one concurrency. */
export interface ForwardingCpu {
  /** kapi's per forwarded GET. */
  kapi: number;
  /** kube-apiserver's per GET sent straight to it. */
  kubeApiserverDirect: number;
  /** kube-apiserver's per GET that came through kapi. */
  kubeApiserverThroughKapi: number;
}

const us = (value: number) => (Number.isFinite(value) ? `${Math.round(value).toLocaleString('en-US')} µs` : 'n/a');
const times = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a');
const percent = (value: number) =>
  Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${Math.round(value * 100)} %` : 'n/a';
const verdictOf = (ok: boolean, measured: boolean) => (measured ? (ok ? 'pass' : 'MISS') : 'not measured');

/** The rows that judge forwarding against kube-apiserver's own cost; `errors` (failed requests) fail every target. */
export function forwardingOnKubeRows(input: {
  c1: ForwardingCpu;
  c16: ForwardingCpu;
  addedP50Ms: number;
  errors: number;
}): Row[] {
  const { c1, c16 } = input;
  const share1 = c1.kapi / c1.kubeApiserverDirect;
  const share16 = c16.kapi / c16.kubeApiserverDirect;
  const extra1 = c1.kubeApiserverThroughKapi / c1.kubeApiserverDirect - 1;
  const extra16 = c16.kubeApiserverThroughKapi / c16.kubeApiserverDirect - 1;
  const clean = input.errors === 0;
  const T = FORWARDING_TARGETS;
  return [
    {
      metric: 'forwarding: kapi CPU ÷ kube-apiserver CPU per direct GET @c1',
      value: `${times(share1)} (kapi ${us(c1.kapi)}, kube-apiserver ${us(c1.kubeApiserverDirect)})`,
      target: `≤ ${T.kapiShareC1}×`,
      verdict: verdictOf(clean && share1 <= T.kapiShareC1, Number.isFinite(share1)),
      reference: '0.45–0.7×',
    },
    {
      metric: 'forwarding: kapi CPU ÷ kube-apiserver CPU per direct GET @c16',
      value: `${times(share16)} (kapi ${us(c16.kapi)}, kube-apiserver ${us(c16.kubeApiserverDirect)})`,
      target: `≤ ${T.kapiShareC16}×`,
      verdict: verdictOf(clean && share16 <= T.kapiShareC16, Number.isFinite(share16)),
      reference: '0.45–0.7×',
    },
    {
      metric: 'forwarding: kube-apiserver CPU per GET through kapi vs direct',
      value:
        `${percent(extra1)} @c1 (${us(c1.kubeApiserverThroughKapi)} vs ${us(c1.kubeApiserverDirect)}), ` +
        `${percent(extra16)} @c16 (${us(c16.kubeApiserverThroughKapi)} vs ${us(c16.kubeApiserverDirect)})`,
      target: `≤ +${Math.round(T.kubeApiserverThroughKapi * 100)} % at both`,
      verdict: verdictOf(
        clean && extra1 <= T.kubeApiserverThroughKapi && extra16 <= T.kubeApiserverThroughKapi,
        Number.isFinite(extra1) && Number.isFinite(extra16),
      ),
    },
  ];
}
