import type { Command } from '../io.js';
import { LmBenchError } from '../../errors.js';

// Placeholder until the command lands; replaced by its owner.
export const command: Command = {
  name: 'ingest',
  summary: 'ingest',
  usage: 'lm-bench ingest',
  run: () => Promise.reject(new LmBenchError('LMB_ERR_UNKNOWN_COMMAND', 'ingest is not available yet')),
};
