/*
 * Just enough JSON reading to see ids as they were written: `7.5`, `7` and `"7"` are different
 * ids on the wire, and this backend exists to check that nobody in between changes one into another.
 */

/** The raw JSON text of a top-level member of the JSON object in `text`, or undefined. */
export function rawTopLevelMember(text: string, name: string): string | undefined {
  let found: string | undefined;
  let i = ws(text, 0);
  if (text[i] !== '{') return undefined;
  i = ws(text, i + 1);
  while (i < text.length && text[i] === '"') {
    const keyEnd = endOfString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd));
    i = ws(text, ws(text, keyEnd) + 1);
    const valueEnd = endOfValue(text, i);
    if (key === name) found = text.slice(i, valueEnd);
    i = ws(text, valueEnd);
    if (text[i] === ',') i = ws(text, i + 1);
  }
  return found;
}

/** `string`, `integer` or `float`, judged from the raw token the way a strict reader would. */
export function jsonIdType(raw: string | undefined): 'string' | 'integer' | 'float' | 'other' {
  if (raw === undefined) return 'other';
  if (raw.startsWith('"')) return 'string';
  if (/^-?\d+$/.test(raw)) return 'integer';
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(raw)) return 'float';
  return 'other';
}

function ws(text: string, start: number): number {
  let i = start;
  while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  return i;
}

function endOfString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

function endOfValue(text: string, i: number): number {
  if (text[i] === '"') return endOfString(text, i);
  if (text[i] === '{' || text[i] === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      if (text[j] === '"') j = endOfString(text, j) - 1;
      else if (text[j] === '{' || text[j] === '[') depth++;
      else if (text[j] === '}' || text[j] === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return text.length;
  }
  let j = i;
  while (j < text.length && !',}] \t\n\r'.includes(text[j])) j++;
  return j;
}
