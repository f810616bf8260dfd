/**
 * Quotes an argv for display only: commands lm-bench prints for a user to paste. lm-bench itself never
 * passes anything through a shell.
 */
export function shellQuote(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(' ');
}
