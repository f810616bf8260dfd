import type { Command } from '../io.js';
import { LmBenchError } from '../../errors.js';

// Placeholder until the command lands; replaced by its owner.
export const command: Command = {
  name: 'run',
  summary: 'run',
  usage: 'lm-bench run',
  run: () => Promise.reject(new LmBenchError('LMB_ERR_UNKNOWN_COMMAND', 'run is not available yet')),
};
