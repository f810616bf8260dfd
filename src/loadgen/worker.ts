import { drive, type DriveResult, type DriveSpec } from './drive.js';

/** Piscina entry: drives one thread's share of the streams. Plain data in, plain records out. */
export default function driveTask(spec: DriveSpec | 'ping'): Promise<DriveResult | 'pong'> {
  if (spec === 'ping') return Promise.resolve('pong');
  return drive(spec);
}
