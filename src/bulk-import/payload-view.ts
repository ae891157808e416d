/**
 * The console's view of a payload: its first part pretty-printed, with the records that per-record
 * errors name marked. Pure, and tolerant of a text cut anywhere (the view shows the first bytes of a
 * payload of any size): it indents by the brackets it meets instead of parsing the JSON.
 *
 * Records are the elements of the array the integration's Records Path names, when the path is a
 * plain one (`$`, `$.data`, `$.data.items`, each optionally with `[*]`); otherwise of the root array.
 */

/** A piece of the pretty-printed text and the record (1-based) it belongs to, or null. */
export interface PayloadPiece {
  readonly text: string;
  readonly record: number | null;
}

const TOKEN = /"(?:[^"\\]|\\.)*"|"(?:[^"\\]|\\.)*\\?$|[{}[\],:]|[^{}[\],:"\s]+|\s+/gy;

/** The object keys leading to the records array, or null when the path is not a plain one. */
export function recordsPathKeys(recordsPath: string): string[] | null {
  const path = recordsPath.trim().replace(/\[\*\]$/, '');
  if (path === '$' || path === '') return [];
  if (!/^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(path)) return null;
  return path.slice(2).split('.');
}

interface Level {
  readonly kind: 'object' | 'array';
  /** The keys (and '*' for array elements) leading to this container. */
  readonly path: readonly string[];
  key: string | null;
  expectKey: boolean;
  count: number;
}

/** Pretty-prints `text` (2 spaces a level) into pieces, each tagged with the record it is part of. */
export function prettyPayload(text: string, recordsPath: string): PayloadPiece[] {
  const keys = recordsPathKeys(recordsPath) ?? [];
  const records = keys.join('\u0000');
  const pieces: PayloadPiece[] = [];
  const stack: Level[] = [];
  let record: number | null = null;
  /** The stack depth at which the current record's value began. */
  let recordDepth = -1;
  const emit = (piece: string) => {
    const last = pieces[pieces.length - 1];
    if (last !== undefined && last.record === record) pieces[pieces.length - 1] = { text: last.text + piece, record };
    else pieces.push({ text: piece, record });
  };
  const newline = () => emit(`\n${'  '.repeat(stack.length)}`);
  /** A value begins: an element of the records array is a record. */
  const valueStarts = () => {
    const top = stack[stack.length - 1];
    if (top === undefined) return;
    if (top.kind === 'object') {
      top.expectKey = false;
      return;
    }
    top.count++;
    if (record === null && top.path.join('\u0000') === records) {
      record = top.count;
      recordDepth = stack.length;
    }
  };
  const valueEnds = () => {
    if (record !== null && stack.length === recordDepth) record = null;
  };

  TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (TOKEN.lastIndex < text.length && (m = TOKEN.exec(text)) !== null) {
    const token = m[0];
    const top = stack[stack.length - 1];
    if (/^\s+$/.test(token)) continue;
    if (token === '{' || token === '[') {
      valueStarts();
      emit(token);
      const path = top === undefined ? [] : [...top.path, top.kind === 'object' ? (top.key ?? '') : '*'];
      stack.push({ kind: token === '{' ? 'object' : 'array', path, key: null, expectKey: token === '{', count: 0 });
      newline();
    } else if (token === '}' || token === ']') {
      stack.pop();
      // Back to the enclosing level: the closing bracket on a line of its own.
      const last = pieces[pieces.length - 1];
      if (last !== undefined && /\n {0,}$/.test(last.text)) pieces[pieces.length - 1] = { ...last, text: last.text.replace(/ {2}$/, '') };
      else newline();
      emit(token);
      valueEnds();
    } else if (token === ',') {
      emit(',');
      if (top?.kind === 'object') top.expectKey = true;
      // The next element begins outside the record just ended.
      newline();
    } else if (token === ':') {
      emit(': ');
    } else if (top?.kind === 'object' && top.expectKey && token.startsWith('"')) {
      top.key = keyText(token);
      emit(token);
    } else {
      valueStarts();
      emit(token);
      valueEnds();
    }
  }
  return pieces;
}

/** A key's text; a key cut off by the end of the text is what there is of it. */
function keyText(token: string): string {
  try {
    return JSON.parse(token) as string;
  } catch {
    return token.slice(1);
  }
}
