/** Indices are daily, `<prefix>-YYYY.MM.DD` (UTC), as Fluent Bit's Logstash format writes them for KubeSphere. */
const DAY_MS = 86_400_000;
/** KubeSphere searches every index beyond 30 days rather than list them. */
const MAX_LISTED_DAYS = 30;

/**
 * The indices a time range can touch: every day from the start's to the end's (KubeSphere's own list can miss the
 * start day when the range crosses midnight), or `<prefix>*` with no start or over 30 days.
 */
export function indexNames(prefix: string, startSeconds: number | undefined, endSeconds: number): string[] {
  if (startSeconds === undefined) return [`${prefix}*`];
  const first = Math.floor((startSeconds * 1000) / DAY_MS);
  const last = Math.floor((endSeconds * 1000) / DAY_MS);
  if (last - first + 1 > MAX_LISTED_DAYS) return [`${prefix}*`];
  const names: string[] = [];
  for (let day = last; day >= first; day--) {
    names.push(`${prefix}-${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '.')}`);
  }
  return names;
}
