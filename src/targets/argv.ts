import { z } from 'zod';
import { LmBenchError } from '../errors.js';

/**
 * Command strings a user writes (`--command`, a Slurm config's `vllm:` and `lm_bench:` lines) and the
 * argv lm-bench runs them as: whitespace separates words, '…' and "…" quote, a backslash escapes the
 * next character (inside "…" too). No shell, ever. The string is split when the spec or config holding
 * it is parsed (`argvCommand`), so a stray quote is a catalog error naming the field there, not a
 * failure when the first trial starts.
 */

/** The argv, or why the text cannot be one. */
export function argvOf(command: string): { readonly argv: string[] } | { readonly problem: string } {
  const out: string[] = [];
  let cur = '';
  let quote: '"' | "'" | null = null;
  let has = false;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i] as string;
    if (quote !== null) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < command.length) cur += command[++i];
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur !== '') out.push(cur);
      cur = '';
      has = false;
    } else if (ch === '\\' && i + 1 < command.length) {
      cur += command[++i];
      has = true;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (quote !== null) return { problem: `unterminated ${quote} in command` };
  if (has || cur !== '') out.push(cur);
  if (out.length === 0) return { problem: 'names no program (only whitespace)' };
  return { argv: out };
}

/** Splits a command string into argv the way a user means it; an unsplittable one is LMB_ERR_INVALID_ARGUMENT naming `field`. */
export function splitArgv(command: string, field = 'command'): string[] {
  const r = argvOf(command);
  if ('problem' in r) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `${field}: ${r.problem}: ${command}`, { details: { field, value: command } });
  return r.argv;
}

/** A command string that splits into a non-empty argv; the string itself is kept (it is what studies store). */
export const argvCommand = z
  .string()
  .min(1)
  .superRefine((s, ctx) => {
    const r = argvOf(s);
    if ('problem' in r) ctx.addIssue({ code: 'custom', message: r.problem });
  });
