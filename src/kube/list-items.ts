/**
 * Reads a Kubernetes list answer (`{"kind":…,"metadata":{…},"items":[{…},{…}]}`) as it streams in, handing each
 * element of `items` to a callback as soon as its last byte arrived, parsed on its own. A page of 500 pods is a few
 * megabytes of JSON; parsed whole, every one of its objects is alive at once (and old enough to be promoted out of
 * the young generation) before the cache trims it to the few fields it keeps. Parsed one item at a time, each item's
 * garbage dies young and the page never exists as one string: the initial list's peak is the cache, not the page.
 *
 * Any valid JSON is read (whitespace, escapes, members in any order); everything but `items` is collected and parsed
 * at the end (`rest()`). Bytes are scanned with `indexOf` between the few that matter (quotes, brackets, braces), so
 * string contents — most of a Kubernetes object — cost native memchr speed, not a JavaScript loop.
 */
export class ListItemScanner {
  /** Bytes not yet consumed: the unfinished item or top-level member (name included), and what arrived after it. */
  private pending: Buffer = Buffer.alloc(0);
  /** Where scanning resumes in `pending`. */
  private cursor = 0;
  /** Start (in `pending`) of the value being collected: an item, or a top-level member other than items. */
  private valueStart = -1;
  private depth = 0;
  private inString = false;
  private state: 'start' | 'members' | 'items' | 'end' = 'start';
  /** The top-level member's key once its colon was read; `undefined` between members. */
  private memberKey: string | undefined;
  /** Where the current top-level member's name starts and ends (exclusive) in `pending`. */
  private keyStart = -1;
  private keyEnd = -1;
  private readonly members: string[] = [];

  constructor(private readonly onItem: (item: unknown) => void) {}

  /** Feeds the next chunk of the answer; calls `onItem` for every item completed in it. */
  push(chunk: Buffer): void {
    // Only the unconsumed tail is kept: a completed item's bytes are dropped here.
    const keepFrom = this.keyStart >= 0 ? this.keyStart : this.valueStart >= 0 ? this.valueStart : this.cursor;
    const tail = this.pending.subarray(keepFrom);
    this.pending = tail.length === 0 ? chunk : Buffer.concat([tail, chunk]);
    this.cursor -= keepFrom;
    if (this.valueStart >= 0) this.valueStart -= keepFrom;
    if (this.keyStart >= 0) this.keyStart -= keepFrom;
    if (this.keyEnd >= 0) this.keyEnd -= keepFrom;
    this.scan();
  }

  /** Bytes held now: the unfinished part of the answer (at most the last chunk and one unfinished item). */
  get bufferedBytes(): number {
    return this.pending.length;
  }

  /** The list's members other than `items` (`metadata`, `kind`…), once the answer ended. Throws on bad JSON. */
  rest(): Record<string, unknown> {
    if (this.state !== 'end') throw new SyntaxError('the list answer ended before its closing brace');
    for (let i = this.cursor; i < this.pending.length; i++) {
      if (!isSpace(this.pending[i]!)) throw new SyntaxError('unexpected data after the list answer');
    }
    return JSON.parse(`{${this.members.join(',')}}`) as Record<string, unknown>;
  }

  private scan(): void {
    const bytes = this.pending;
    let i = this.cursor;
    while (i < bytes.length) {
      if (this.inString) {
        const quote = bytes.indexOf(QUOTE, i);
        if (quote === -1) {
          i = bytes.length;
          break;
        }
        i = quote + 1;
        if (!escaped(bytes, quote)) {
          this.inString = false;
          if (this.keyStart >= 0 && this.memberKey === undefined && this.depth === 1) this.keyEnd = i;
        }
        continue;
      }
      const byte = bytes[i]!;
      if (isSpace(byte)) {
        i++;
        continue;
      }
      switch (this.state) {
        case 'start':
          if (byte !== OPEN_BRACE) throw new SyntaxError('a list answer must be a JSON object');
          this.depth = 1;
          this.state = 'members';
          i++;
          break;
        case 'members':
          i = this.member(bytes, i, byte);
          break;
        case 'items':
          i = this.item(bytes, i, byte);
          break;
        case 'end':
          throw new SyntaxError('unexpected data after the list answer');
      }
    }
    this.cursor = i;
  }

  /** One byte at depth ≥ 1 outside `items`: keys, colons, values of other members, commas, the closing brace. */
  private member(bytes: Buffer, i: number, byte: number): number {
    if (this.depth > 1) {
      // inside another member's value: only nesting and strings matter until it closes
      if (byte === QUOTE) this.inString = true;
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++;
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        this.depth--;
        if (this.depth === 1) return this.finishMember(bytes, i + 1);
      }
      return i + 1;
    }
    if (this.memberKey === undefined) {
      if (this.keyStart < 0) {
        if (byte === COMMA) return i + 1;
        if (byte === CLOSE_BRACE) {
          this.depth = 0;
          this.state = 'end';
          return i + 1;
        }
        if (byte !== QUOTE) throw new SyntaxError('expected a member name in the list answer');
        this.keyStart = i;
        this.keyEnd = -1;
        this.inString = true;
        return i + 1;
      }
      if (byte !== COLON || this.keyEnd < 0) throw new SyntaxError('expected ":" after a member name');
      this.memberKey = JSON.parse(bytes.toString('utf8', this.keyStart, this.keyEnd)) as string;
      return i + 1;
    }
    if (this.valueStart < 0) {
      // the first byte of a member's value
      if (this.memberKey === 'items' && byte === OPEN_BRACKET) {
        this.state = 'items';
        this.depth = 2;
        // nothing before the first item needs keeping
        this.keyStart = -1;
        return i + 1;
      }
      this.valueStart = i;
      if (byte === QUOTE) this.inString = true;
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++;
      return i + 1;
    }
    // a scalar value (number, true, false, null) runs until a comma or the closing brace
    if (byte === COMMA || byte === CLOSE_BRACE) return this.finishMember(bytes, i);
    return i + 1;
  }

  private finishMember(bytes: Buffer, end: number): number {
    if (this.memberKey !== 'items') {
      this.members.push(
        `${bytes.toString('utf8', this.keyStart, this.keyEnd)}:${bytes.toString('utf8', this.valueStart, end)}`,
      );
    } else if (bytes.toString('utf8', this.valueStart, end).trim() !== 'null') {
      throw new SyntaxError('"items" of a list answer must be an array');
    }
    this.memberKey = undefined;
    this.keyStart = -1;
    this.valueStart = -1;
    return end;
  }

  /** One byte inside the `items` array (depth ≥ 2). */
  private item(bytes: Buffer, i: number, byte: number): number {
    if (this.depth === 2 && this.valueStart < 0) {
      if (byte === COMMA) return i + 1;
      if (byte === CLOSE_BRACKET) {
        // the items are done: back to the list's other members
        this.depth = 1;
        this.state = 'members';
        this.memberKey = undefined;
        this.keyStart = -1;
        return i + 1;
      }
      if (byte !== OPEN_BRACE) throw new SyntaxError('every item of a list answer must be an object');
      this.valueStart = i;
      this.depth = 3;
      return i + 1;
    }
    if (byte === QUOTE) this.inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      this.depth--;
      if (this.depth === 2) {
        const text = bytes.toString('utf8', this.valueStart, i + 1);
        this.valueStart = -1;
        this.onItem(JSON.parse(text));
      }
    }
    return i + 1;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** A quote preceded by an odd number of backslashes is part of the string. */
function escaped(bytes: Buffer, quote: number): boolean {
  let backslashes = 0;
  for (let j = quote - 1; j >= 0 && bytes[j] === BACKSLASH; j--) backslashes++;
  return backslashes % 2 === 1;
}
