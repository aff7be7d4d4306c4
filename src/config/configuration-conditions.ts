/**
 * The `status.conditions` kapi-apiserver writes on its ClusterConfiguration, as pure functions so that "write only
 * when something changed" — what keeps our own status write (a MODIFIED event) from causing another — is tested
 * alone. Every replica computes the same conditions from the same object, so replicas agree and do not take turns
 * rewriting them; `lastTransitionTime` moves only when a condition's status flips, as the API conventions ask.
 */
export interface StatusCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export type Verdict = { valid: true } | { valid: false; error: string };

export const VALID = 'Valid';
export const READY = 'Ready';
const OWNED = new Set([VALID, READY]);
/** The CRD allows 32 KiB; a message this long is already unreadable in `kubectl describe`. */
const MAX_MESSAGE = 4096;

/** The conditions the object should carry, or `undefined` when it already carries them. */
export function nextConditions(
  existing: readonly StatusCondition[] | undefined,
  verdict: Verdict,
  generation: number | undefined,
  now: Date,
): StatusCondition[] | undefined {
  const current = existing ?? [];
  const wanted = wantedConditions(verdict, generation);
  const unchanged = wanted.every((want) => {
    const have = current.find((c) => c.type === want.type);
    return (
      have !== undefined &&
      have.status === want.status &&
      have.reason === want.reason &&
      have.message === want.message &&
      have.observedGeneration === want.observedGeneration
    );
  });
  if (unchanged) return undefined;
  const time = now.toISOString().replace(/\.\d+Z$/, 'Z');
  const written = wanted.map((want): StatusCondition => {
    const have = current.find((c) => c.type === want.type);
    const lastTransitionTime =
      have && have.status === want.status && have.lastTransitionTime ? have.lastTransitionTime : time;
    return { ...want, lastTransitionTime };
  });
  // conditions of other types (written by someone else) are kept as they are
  return [...current.filter((c) => !OWNED.has(c.type)), ...written];
}

function wantedConditions(
  verdict: Verdict,
  generation: number | undefined,
): Omit<StatusCondition, 'lastTransitionTime'>[] {
  const observed = generation === undefined ? {} : { observedGeneration: generation };
  const which = generation === undefined ? 'this configuration' : `generation ${generation}`;
  if (verdict.valid) {
    return [
      { type: VALID, status: 'True', reason: 'Applied', message: 'the configuration is valid', ...observed },
      { type: READY, status: 'True', reason: 'Applied', message: `${which} is in effect`, ...observed },
    ];
  }
  const error = verdict.error.length > MAX_MESSAGE ? `${verdict.error.slice(0, MAX_MESSAGE)}…` : verdict.error;
  return [
    { type: VALID, status: 'False', reason: 'InvalidConfiguration', message: error, ...observed },
    {
      type: READY,
      status: 'False',
      reason: 'InvalidConfiguration',
      message: `${which} is invalid (see the Valid condition): running replicas keep their last valid configuration, starting ones stay unready`,
      ...observed,
    },
  ];
}
