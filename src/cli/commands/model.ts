import { LmBenchError } from '../../errors.js';
import type { Command } from '../io.js';
import { command as surrogate, runSurrogate } from './surrogate.js';

/**
 * `lm-bench model train|eval`: the old name of `lm-bench surrogate train|eval`, kept for one release so
 * scripts keep working while "model" comes to mean the LLM everywhere. It runs the same command; the note
 * goes to stderr only, so `--json` output on stdout stays one parseable document. Delete this file and its
 * registry entry to drop the alias.
 */
export const DEPRECATION_NOTE = 'lm-bench: `model train|eval` is deprecated and goes in the next release; use `lm-bench surrogate train|eval`\n';

export const command: Command = {
  name: 'model',
  summary: 'deprecated: the old name of `surrogate`',
  usage: `Deprecated: \`lm-bench model\` is now \`lm-bench surrogate\`.\n${surrogate.usage}`,
  run(argv, io) {
    // `model show X` is `models show X` mistyped, not a surrogate subcommand: say where it lives.
    if (argv[0] === 'show') {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `the LLM a name resolves to is \`lm-bench models show ${argv[1] ?? 'MODEL'}\`; \`lm-bench model\` is the deprecated name of \`surrogate\``, {
        details: { field: 'subcommand', value: 'show' },
      });
    }
    io.stderr.write(DEPRECATION_NOTE);
    return runSurrogate(argv, io, 'model');
  },
};
