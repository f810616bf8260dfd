import type { Command } from '../io.js';
import { LmBenchError } from '../../errors.js';

// Placeholder until the command lands; replaced by its owner.
export const command: Command = {
  name: 'demo',
  summary: 'demo',
  usage: 'lm-bench demo',
  run: () => Promise.reject(new LmBenchError('LMB_ERR_UNKNOWN_COMMAND', 'demo is not available yet')),
};
