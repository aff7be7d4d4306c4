/**
 * Reading a username and a password from the terminal (the password without echo), or a password from a piped
 * stdin for scripts. Prompts go to stderr: stdout carries the ExecCredential kubectl reads.
 */
export function canPrompt(): boolean {
  return process.stdin.isTTY === true;
}

export async function promptLine(question: string): Promise<string> {
  return readTerminal(question, true);
}

export async function promptSecret(question: string): Promise<string> {
  return readTerminal(question, false);
}

/** All of stdin, without the final line break (`echo "$PASSWORD" | kubectl kapi login --password-stdin`). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function readTerminal(question: string, echo: boolean): Promise<string> {
  const input = process.stdin;
  return new Promise((resolve, reject) => {
    let value = '';
    // Echo off before the question shows: what is typed once it is seen must never be echoed by the terminal.
    input.setRawMode(true);
    process.stderr.write(question);
    input.resume();
    input.setEncoding('utf8');
    const finish = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (text: string) => {
      for (const char of text) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003') return finish(new Error('interrupted'));
        if (char === '\u0004') return finish(value === '' ? new Error('no input') : undefined);
        if (char === '\u007f' || char === '\b') {
          if (value.length > 0) {
            value = value.slice(0, -1);
            if (echo) process.stderr.write('\b \b');
          }
          continue;
        }
        value += char;
        if (echo) process.stderr.write(char);
      }
    };
    input.on('data', onData);
  });
}
