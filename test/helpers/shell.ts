/**
 * Splits a command line the way a POSIX shell splits the simple commands lm-bench prints (words,
 * single quotes with `'\''` escapes): the tests paste printed commands through this, never a shell.
 */
export function shellWords(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated quote in: ${line}`);
      cur += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      if (/[;&|<>$`"]/.test(c)) throw new Error(`a printed command should need no shell, found ${c} in: ${line}`);
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}
