import { randomBytes } from 'node:crypto';

/**
 * A fresh prompt salt (8 hex digits) for a run against a real server: its prompts' words are then
 * ones no earlier run sent, so the server's prefix cache holds none of them (loadgen/prompts.ts). Drawn
 * here, at the edge, because it must differ between invocations that share a seed.
 */
export function newPromptSalt(): string {
  return randomBytes(4).toString('hex');
}
