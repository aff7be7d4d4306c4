/**
 * Splits a text stream into lines, whatever the chunk boundaries: a watch event may arrive in many pieces, and one
 * chunk may hold many events. Pieces of an unfinished line are kept in a list and joined once, so a large object
 * split into many chunks costs linear time.
 */
export class JsonLineSplitter {
  private pending: string[] = [];

  /** Feeds one decoded chunk; calls `onLine` for every complete, non-blank line in it. */
  push(chunk: string, onLine: (line: string) => void): void {
    let start = 0;
    let newline = chunk.indexOf('\n');
    while (newline !== -1) {
      let line = chunk.slice(start, newline);
      if (this.pending.length > 0) {
        this.pending.push(line);
        line = this.pending.join('');
        this.pending = [];
      }
      if (line.trim()) onLine(line);
      start = newline + 1;
      newline = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) this.pending.push(chunk.slice(start));
  }

  /** The text after the last newline, when the stream ended without one. */
  rest(): string {
    const rest = this.pending.join('');
    this.pending = [];
    return rest.trim();
  }
}
