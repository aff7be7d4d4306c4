/**
 * The 400s kube-apiserver gives for a body it cannot decode, in its words: Go's encoding/json syntax errors (what its
 * scanner says at the first bad byte) inside the REST handler's "the object provided is unrecognized" message with a
 * summary of the body, and the conversion error of a body naming another built-in kind. Pure.
 */

/** Go's quoteChar: `'x'`, `'\''`, `'"'`, `'\n'`, `'\x01'`, `'\u0081'`. */
function quoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  const code = c.codePointAt(0) ?? 0;
  const escapes: Record<string, string> = {
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\b': '\\b',
    '\f': '\\f',
    '\v': '\\v',
  };
  if (escapes[c]) return `'${escapes[c]}'`;
  if (code === 0x07) return `'\\a'`;
  if (code < 0x20 || code === 0x7f) return `'\\x${code.toString(16).padStart(2, '0')}'`;
  if (code >= 0x80 && code < 0xa0) return `'\\u${code.toString(16).padStart(4, '0')}'`;
  if (c === '\\') return `'\\\\'`;
  return `'${c}'`;
}

const END = 'unexpected end of JSON input';

/** What Go's json.Unmarshal says about the first syntax error of `text`, or undefined when it is valid JSON. */
export function goJsonSyntaxError(text: string): string | undefined {
  let i = 0;
  const n = text.length;
  const fail = (context: string): never => {
    throw new Error(i >= n ? END : `invalid character ${quoteChar(text[i]!)} ${context}`);
  };
  const space = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const digits = () => {
    while (i < n && text[i]! >= '0' && text[i]! <= '9') i++;
  };
  const isDigit = () => i < n && text[i]! >= '0' && text[i]! <= '9';
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (text[i] !== word[k]) fail(`in literal ${word} (expecting ${quoteChar(word[k]!)})`);
    }
    i++;
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= n) fail('');
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        i++;
        if (i >= n) fail('');
        if ('bfnrt"\\/'.includes(text[i]!)) i++;
        else if (text[i] === 'u') {
          i++;
          for (let k = 0; k < 4; k++, i++) {
            if (i >= n) fail('');
            if (!/[0-9a-fA-F]/.test(text[i]!)) fail('in \\u hexadecimal character escape');
          }
        } else fail('in string escape code');
        continue;
      }
      if (c < ' ') fail('in string literal');
      i++;
    }
  };
  const number = () => {
    if (text[i] === '-') {
      i++;
      if (!isDigit()) fail('in numeric literal');
    }
    if (text[i] === '0') i++;
    else digits();
    if (text[i] === '.') {
      i++;
      if (!isDigit()) fail('after decimal point in numeric literal');
      digits();
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!isDigit()) fail('in exponent of numeric literal');
      digits();
    }
  };
  const value = (): void => {
    space();
    if (i >= n) fail('');
    const c = text[i]!;
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return string();
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    fail('looking for beginning of value');
  };
  const object = () => {
    i++;
    space();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      space();
      if (text[i] !== '"') fail('looking for beginning of object key string');
      string();
      space();
      if (text[i] !== ':') fail('after object key');
      i++;
      value();
      space();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return;
      }
      fail('after object key:value pair');
    }
  };
  const array = () => {
    i++;
    space();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      value();
      space();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return;
      }
      fail('after array element');
    }
  };
  try {
    value();
    space();
    if (i < n) fail('after top-level value');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** kube's summarizeData: the body's first 30 bytes, as text when it starts like an object, else in hex. */
export function summarizeBody(body: Buffer, maxLength = 30): string {
  if (body.length === 0) return '<empty>';
  const head = body.subarray(0, maxLength);
  const more = body.length > maxLength ? ' ...' : '';
  return body[0] === 0x7b ? `${head.toString('utf8')}${more}` : `${head.toString('hex')}${more}`;
}

const TYPE_META_STRUCT =
  'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/**
 * Why kube could not read a body's apiVersion and kind (its meta factory unmarshals them first): a syntax error, or
 * valid JSON that is no object. Undefined when the body is a JSON object (or null).
 */
export function typeMetaError(body: Buffer): string | undefined {
  const text = body.toString('utf8');
  const syntax = goJsonSyntaxError(text);
  if (syntax) return syntax;
  const first = text.trimStart()[0];
  const kinds: Record<string, string> = { '[': 'array', '"': 'string', t: 'bool', f: 'bool' };
  const kind =
    first === undefined ? undefined : (kinds[first] ?? (first === '{' || first === 'n' ? undefined : 'number'));
  return kind ? `json: cannot unmarshal ${kind} into Go value of type ${TYPE_META_STRUCT}` : undefined;
}

/** The message of kube's 400 for an undecodable body sent to an endpoint of `kind`. */
export function unrecognizedObjectMessage(kind: string, why: string, body: Buffer): string {
  return `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${why} (${summarizeBody(body)})`;
}

/** kube's internal API package of a built-in group, as its conversion errors name it: core, apps, rbac, … */
function internalPackage(group: string): string {
  return group === '' ? 'core' : (group.split('.')[0] as string);
}

/** A built-in endpoint given a body of another kind: the scheme has no conversion between them. */
export function kindMismatchMessage(bodyKind: string, bodyVersion: string, group: string, kind: string): string {
  return (
    `${bodyKind} in version "${bodyVersion}" cannot be handled as a ${kind}: ` +
    `converting (${bodyVersion}.${bodyKind}) to (${internalPackage(group)}.${kind}): unknown conversion`
  );
}

const RFC3339 = '2006-01-02T15:04:05Z07:00';

/**
 * Why Go's time.Parse(time.RFC3339, value) refuses `value` (kube's `sinceTime`, any metav1.Time query parameter), in
 * its words, or undefined when it parses.
 */
export function goRfc3339Error(value: string): string | undefined {
  const quoted = JSON.stringify(value);
  const cannot = (rest: string, element: string) =>
    `parsing time ${quoted} as "${RFC3339}": cannot parse ${JSON.stringify(rest)} as "${element}"`;
  const outOfRange = (what: string) => `parsing time ${quoted}: ${what} out of range`;
  let rest = value;
  const number = (element: string, width: number, max: number, min: number, what: string): string | undefined => {
    const digits = rest.slice(0, width);
    if (digits.length !== width || !/^\d+$/.test(digits)) return cannot(rest, element);
    const n = Number(digits);
    if (n < min || n > max) return outOfRange(what);
    rest = rest.slice(width);
    return undefined;
  };
  const literal = (text: string): string | undefined => {
    if (!rest.startsWith(text)) return cannot(rest, text);
    rest = rest.slice(text.length);
    return undefined;
  };
  const steps: (() => string | undefined)[] = [
    () => number('2006', 4, 9999, 0, 'year'),
    () => literal('-'),
    () => number('01', 2, 12, 1, 'month'),
    () => literal('-'),
    () => number('02', 2, 31, 1, 'day'),
    () => literal('T'),
    () => number('15', 2, 23, 0, 'hour'),
    () => literal(':'),
    () => number('04', 2, 59, 0, 'minute'),
    () => literal(':'),
    () => {
      const error = number('05', 2, 59, 0, 'second');
      // A fraction of a second is read even where the layout has none.
      const fraction = /^[.,]\d+/.exec(rest);
      if (!error && fraction) rest = rest.slice(fraction[0].length);
      return error;
    },
    () => {
      if (rest.startsWith('Z')) {
        rest = rest.slice(1);
        return undefined;
      }
      if (!/^[+-]\d{2}:\d{2}/.test(rest)) return cannot(rest, 'Z07:00');
      rest = rest.slice(6);
      return undefined;
    },
  ];
  for (const step of steps) {
    const error = step();
    if (error) return error;
  }
  return rest ? `parsing time ${quoted}: extra text: ${JSON.stringify(rest)}` : undefined;
}
