/**
 * What a kubelet sends for `GET /containerLogs/{namespace}/{pod}/{container}` (pure): the options kube-apiserver
 * passes on from `pods/log` (pkg/registry/core/pod LogLocation: follow, previous, timestamps, sinceSeconds, sinceTime,
 * tailLines, limitBytes) and the lines they select, as the kubelet's CRI log reader does (kuberuntime/logs): the last
 * `tailLines` lines first, then those written at or after the since time; `timestamps` prefixes each line with its
 * time in RFC 3339 with nine fraction digits and a space; `limitBytes` cuts the output, mid-line if need be.
 */

/** One line a container wrote: when (epoch ms plus nanoseconds within that millisecond) and what. */
export interface WrittenLine {
  readonly ms: number;
  readonly nano: number;
  readonly text: string;
}

export interface KubeletLogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines: number | undefined;
  /** Epoch ms: sinceTime, or now − sinceSeconds. */
  sinceMs: number | undefined;
  limitBytes: number | undefined;
}

/** An answer the kubelet gives instead of the log: status and plain-text body, as its go-restful WriteError does. */
export class KubeletError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function integer(query: URLSearchParams, name: string): number | undefined {
  const text = query.get(name);
  if (text === null || text === '') return undefined;
  if (!/^-?\d+$/.test(text)) throw new KubeletError(400, '{"message": "Unable to decode query."}');
  return Number(text);
}

function bool(query: URLSearchParams, name: string): boolean {
  const text = query.get(name);
  if (text === null || text === '') return false;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw new KubeletError(400, '{"message": "Unable to decode query."}');
}

/** The query as the kubelet decodes and validates it (400 undecodable, 422 invalid, with the kubelet's bodies). */
export function parseKubeletLogQuery(query: URLSearchParams, nowMs: number): KubeletLogOptions {
  // The kubelet's backward-compatible `tail` (a number, or "all").
  const tail = query.get('tail');
  if (tail) {
    if (tail === 'all') query.delete('tailLines');
    else query.set('tailLines', tail);
  }
  const sinceSeconds = integer(query, 'sinceSeconds');
  const sinceTimeText = query.get('sinceTime');
  const sinceTime = sinceTimeText ? Date.parse(sinceTimeText) : undefined;
  if (sinceTime !== undefined && Number.isNaN(sinceTime)) {
    throw new KubeletError(400, '{"message": "Unable to decode query."}');
  }
  const options: KubeletLogOptions = {
    follow: bool(query, 'follow'),
    previous: bool(query, 'previous'),
    timestamps: bool(query, 'timestamps'),
    tailLines: integer(query, 'tailLines'),
    sinceMs: sinceTime ?? (sinceSeconds !== undefined ? nowMs - sinceSeconds * 1000 : undefined),
    limitBytes: integer(query, 'limitBytes'),
  };
  const invalid =
    (options.tailLines !== undefined && options.tailLines < 0) ||
    (options.limitBytes !== undefined && options.limitBytes < 1) ||
    (sinceSeconds !== undefined && (sinceSeconds < 1 || sinceTime !== undefined));
  if (invalid) throw new KubeletError(422, '{"message": "Invalid request."}');
  return options;
}

/** RFC 3339 with all nine fraction digits, UTC, as the kubelet writes a line's time (RFC3339NanoFixed). */
export function kubeletTimestamp(line: Pick<WrittenLine, 'ms' | 'nano'>): string {
  const whole = Math.floor(line.ms / 1000) * 1000;
  const nanos = (line.ms - whole) * 1_000_000 + line.nano;
  return `${new Date(whole).toISOString().slice(0, 19)}.${String(nanos).padStart(9, '0')}Z`;
}

/** One line as sent. */
export function renderKubeletLine(line: WrittenLine, timestamps: boolean): string {
  return timestamps ? `${kubeletTimestamp(line)} ${line.text}\n` : `${line.text}\n`;
}

/** The index of the first line sent before following: the tail first, then the since time. */
export function firstSentLine(lines: readonly WrittenLine[], options: KubeletLogOptions): number {
  let first = options.tailLines === undefined ? 0 : Math.max(0, lines.length - options.tailLines);
  if (options.sinceMs !== undefined) {
    while (first < lines.length && lineMs(lines[first]!) < options.sinceMs) first++;
  }
  return first;
}

/** Whether a line written while following is sent: at or after the since time. */
export function sentWhileFollowing(line: WrittenLine, options: KubeletLogOptions): boolean {
  return options.sinceMs === undefined || lineMs(line) >= options.sinceMs;
}

function lineMs(line: WrittenLine): number {
  return line.ms + line.nano / 1e6;
}

/** A byte budget (limitBytes): what of `text` may still go out, cut at the budget. */
export class ByteBudget {
  private left: number;

  constructor(limit: number | undefined) {
    this.left = limit ?? Infinity;
  }

  take(text: string): Buffer {
    const bytes = Buffer.from(text);
    const sent = bytes.length <= this.left ? bytes : bytes.subarray(0, this.left);
    this.left -= sent.length;
    return sent;
  }

  get spent(): boolean {
    return this.left <= 0;
  }
}
