import type { Command } from '../io.js';
import { LmBenchError } from '../../errors.js';

// Placeholder until the command lands; replaced by its owner.
export const command: Command = {
  name: 'sim',
  summary: 'sim',
  usage: 'lm-bench sim',
  run: () => Promise.reject(new LmBenchError('LMB_ERR_UNKNOWN_COMMAND', 'sim is not available yet')),
};
