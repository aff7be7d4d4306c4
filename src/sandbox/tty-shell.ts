/**
 * The shell a container's terminal reaches in the sandbox (and in the tests' kubelet stand-in), as a tty shows it: a
 * prompt, what is typed echoed back (a terminal's line discipline), and on Enter the line run: `echo …` prints its
 * words, `stty size` the window's rows and columns as the last resize set them, `exit` ends the session; anything
 * else is not found. Pure: bytes in, bytes out.
 */
export class TtyShell {
  static readonly PROMPT = '$ ';
  private line = '';
  private rows = 24;
  private cols = 80;
  /** Set once `exit` ran: the session is over. */
  exited = false;

  /** What the shell shows when it starts. */
  start(): string {
    return TtyShell.PROMPT;
  }

  /** The window's new size (the exec resize channel). */
  resize(rows: number, cols: number): void {
    this.rows = rows;
    this.cols = cols;
  }

  /** What the terminal shows after these bytes were typed. */
  input(typed: string): string {
    let out = '';
    for (const char of typed) {
      if (this.exited) break;
      if (char === '\r' || char === '\n') {
        out += `\r\n${this.run(this.line.trim())}`;
        this.line = '';
        if (!this.exited) out += TtyShell.PROMPT;
      } else if (char === '\x7f' || char === '\b') {
        if (this.line.length > 0) {
          this.line = this.line.slice(0, -1);
          out += '\b \b';
        }
      } else if (char >= ' ') {
        this.line += char;
        out += char;
      }
    }
    return out;
  }

  private run(line: string): string {
    if (line === '') return '';
    const [command, ...words] = line.split(/\s+/);
    if (command === 'echo') return `${words.join(' ')}\r\n`;
    if (line === 'stty size') return `${this.rows} ${this.cols}\r\n`;
    if (command === 'exit') {
      this.exited = true;
      return '';
    }
    return `sh: ${command}: not found\r\n`;
  }
}
