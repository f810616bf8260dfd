import { resolve } from 'node:path';
import { ServiceConfig, loadServiceConfig } from '../../http/config.js';
import { startServer } from '../../http/server.js';
import { defaultDbPath } from '../../store/sqlite-store.js';
import { numberFlag, parseFlags } from '../args.js';
import type { CliIo, Command } from '../io.js';
import { usage as USAGE } from '../usage/serve.js';



const OPTIONS = {
  config: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  db: { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(argv, OPTIONS);
  if (values.help === true) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const base = values.config === undefined ? ServiceConfig.parse({}) : loadServiceConfig(resolve(io.cwd, values.config));
  const port = numberFlag(values.port, 'port', { int: true, min: 0, max: 65535 });
  const config: ServiceConfig = { ...base, ...(values.host === undefined ? {} : { host: values.host }), ...(port === undefined ? {} : { port }) };
  const dbPath = values.db !== undefined ? resolve(io.cwd, values.db) : (config.db ?? defaultDbPath(io));
  const server = await startServer({ config, dbPath, env: io.env, logger: values.quiet === true ? false : { level: 'info' } });
  io.stderr.write(`lm-bench serve: listening on ${server.url} (store ${dbPath}; docs at ${server.url}/docs)\n`);
  await server.closed;
  return 0;
}

export const command: Command = { name: 'serve', summary: 'the HTTP service: recommendations, studies, history', usage: USAGE, run };
