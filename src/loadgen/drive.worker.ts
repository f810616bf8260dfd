import { workerHandler } from '../workers/pool.js';
import { drive, type DriveResult, type DriveSpec } from './drive.js';

/** Worker entry: drives one thread's share of the streams. Plain data in, plain records out. */
function driveTask(spec: DriveSpec | 'ping'): Promise<DriveResult | 'pong'> {
  if (spec === 'ping') return Promise.resolve('pong');
  return drive(spec);
}

export default workerHandler(driveTask);
