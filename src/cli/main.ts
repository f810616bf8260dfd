import { COMMANDS, isCommandName } from './registry.js';
import { processIo, writeJson, type CliIo } from './io.js';
import { LmBenchError, toLmBenchError } from '../errors.js';

const VERSION = '0.1.0';

function help(io: CliIo): void {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  io.stdout.write(`lm-bench ${VERSION}: find the best vLLM configuration within latency SLOs\n\nUsage: lm-bench <command> [flags]\n\nCommands:\n${lines.join('\n')}\n\nRun \`lm-bench <command> --help\` for a command's flags.\n`);
}

/** Runs one CLI invocation and returns its exit status; errors are printed, never thrown. */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  const json = rest.includes('--json');
  try {
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      help(io);
      return 0;
    }
    if (name === '--version' || name === '-v') {
      io.stdout.write(`${VERSION}\n`);
      return 0;
    }
    if (!isCommandName(name)) {
      throw new LmBenchError('LMB_ERR_UNKNOWN_COMMAND', `unknown command "${name}"; run \`lm-bench --help\``, { details: { field: 'command', value: name } });
    }
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout.write(`${(await COMMANDS[name].usage()).usage.trimEnd()}\n`);
      return 0;
    }
    const { command } = await COMMANDS[name].load();
    return await command.run(rest, io);
  } catch (err) {
    const e = toLmBenchError(err);
    if (json) writeJson(io, { error: e.toJSON() });
    else io.stderr.write(`lm-bench: error ${e.code}: ${e.message}\n`);
    if (e.kind === 'unexpected' && io.env['LMB_DEBUG'] !== undefined) {
      const cause = e.cause instanceof Error ? e.cause : e;
      io.stderr.write(`${cause.stack ?? ''}\n`);
    }
    return e.exitCode;
  }
}

// Run when executed as the entry point (bin/lm-bench.js imports this module).
if (process.argv[1] !== undefined && /lm-bench(\.js)?$|main\.ts$/.test(process.argv[1])) {
  const code = await main(process.argv.slice(2));
  process.exitCode = code;
}
