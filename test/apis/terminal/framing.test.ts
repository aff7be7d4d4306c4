import { describe, expect, test } from '@jest/globals';
import {
  closeReason,
  consoleMessage,
  consoleOutput,
  execFrame,
  execTarget,
  resizeFrame,
  stdinFrame,
} from '../../../src/apis/terminal/framing.js';
import { terminalRequestOf } from '../../../src/apis/terminal/terminal.js';

describe('consoleMessage', () => {
  test.each([
    ['keystrokes', '{"Op":"stdin","Data":"ls\\r"}', { op: 'stdin', data: 'ls\r' }],
    ['a window size', '{"Op":"resize","Rows":40,"Cols":120}', { op: 'resize', rows: 40, cols: 120 }],
    [
      'a size of zero',
      '{"Op":"resize","Rows":0,"Cols":120}',
      { op: 'invalid', reason: "unknown message type 'resize'" },
    ],
    [
      'a size too large',
      '{"Op":"resize","Rows":70000,"Cols":1}',
      { op: 'invalid', reason: "unknown message type 'resize'" },
    ],
    ['stdin without data', '{"Op":"stdin"}', { op: 'invalid', reason: "unknown message type 'stdin'" }],
    ['another op', '{"Op":"bind"}', { op: 'invalid', reason: "unknown message type 'bind'" }],
    ['no JSON', 'ls', { op: 'invalid', reason: 'a terminal message is JSON' }],
    ['JSON null', 'null', { op: 'invalid', reason: "unknown message type ''" }],
  ])('when the console sends %s, then it is read as such', (_case, text, message) => {
    expect(consoleMessage(text)).toEqual(message);
  });
});

describe('frames', () => {
  test('when keystrokes and a size go to kube-apiserver, then they are channels 0 and 4 (client-go’s size JSON)', () => {
    expect(stdinFrame('é')).toEqual(Buffer.from([0, 0xc3, 0xa9]));
    expect(resizeFrame(40, 120)).toEqual(Buffer.concat([Buffer.from([4]), Buffer.from('{"Width":120,"Height":40}')]));
  });

  test.each([
    ['stdout', Buffer.from([1, 0x6f, 0x6b]), { kind: 'output', data: Buffer.from('ok') }],
    ['stderr', Buffer.from([2, 0x21]), { kind: 'output', data: Buffer.from('!') }],
    [
      'a success',
      Buffer.concat([Buffer.from([3]), Buffer.from('{"status":"Success"}')]),
      { kind: 'outcome', success: true, message: 'Process exited' },
    ],
    [
      'a failure',
      Buffer.concat([
        Buffer.from([3]),
        Buffer.from('{"status":"Failure","message":"command terminated with non-zero exit code"}'),
      ]),
      { kind: 'outcome', success: false, message: 'command terminated with non-zero exit code' },
    ],
    [
      'an outcome that is no JSON',
      Buffer.concat([Buffer.from([3]), Buffer.from('boom')]),
      { kind: 'outcome', success: false, message: 'boom' },
    ],
    ['the resize channel', Buffer.from([4, 1]), { kind: 'other' }],
    ['an empty frame', Buffer.alloc(0), { kind: 'other' }],
  ])('when kube-apiserver sends %s, then it is read as such', (_case, frame, read) => {
    expect(execFrame(frame)).toEqual(read);
  });

  test('when output goes to the console, then it is KubeSphere’s JSON', () => {
    expect(JSON.parse(consoleOutput('a"b'))).toEqual({ Op: 'stdout', Data: 'a"b' });
    expect(JSON.parse(consoleOutput('gone', 'toast'))).toEqual({ Op: 'toast', Data: 'gone' });
  });
});

describe('execTarget', () => {
  test.each([
    ['sh', ['sh']],
    ['bash', ['bash']],
    [undefined, ['sh', '-c', 'command -v bash >/dev/null 2>&1 && exec bash || exec sh']],
    ['zsh; rm -rf /', ['sh', '-c', 'command -v bash >/dev/null 2>&1 && exec bash || exec sh']],
  ])('when the shell asked is %s, then the command is one of KubeSphere’s shells', (shell, command) => {
    const url = new URL(execTarget('ns', 'p', 'c', shell), 'http://x');
    expect(url.pathname).toBe('/api/v1/namespaces/ns/pods/p/exec');
    expect(url.searchParams.getAll('command')).toEqual(command);
    expect(url.searchParams.get('container')).toBe('c');
    for (const stream of ['stdin', 'stdout', 'stderr', 'tty']) expect(url.searchParams.get(stream)).toBe('true');
  });
});

describe('terminalRequestOf', () => {
  test.each([
    [
      '/kapis/terminal.kapi.io/v1alpha2/namespaces/a/pods/b/exec?container=c&shell=sh',
      { namespace: 'a', pod: 'b', container: 'c', shell: 'sh' },
    ],
    ['/kapis/terminal.kapi.io/v1alpha2/namespaces/a/pods/b/exec', { namespace: 'a', pod: 'b' }],
    ['/kapis/terminal.kapi.io/v1alpha2/nodes/n/exec', undefined],
    ['/kapis/terminal.kapi.io/v1alpha2/namespaces/a/pods/b', undefined],
    ['/kapis/terminal.kapi.io/v1alpha2/namespaces/%E0%A4%A/pods/b/exec', undefined],
  ])('when the path is %s, then the terminal is as read', (url, request) => {
    expect(terminalRequestOf(url)).toEqual(request);
  });
});

test('when a reason is longer than a close frame holds, then it is cut on a character to 123 bytes', () => {
  const reason = closeReason('é'.repeat(100));
  expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
  expect(reason).toBe('é'.repeat(61));
});
