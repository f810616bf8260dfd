import type { Command } from '../io.js';
import { LmBenchError } from '../../errors.js';

// Placeholder until the command lands; replaced by its owner.
export const command: Command = {
  name: 'space',
  summary: 'space',
  usage: 'lm-bench space',
  run: () => Promise.reject(new LmBenchError('LMB_ERR_UNKNOWN_COMMAND', 'space is not available yet')),
};
