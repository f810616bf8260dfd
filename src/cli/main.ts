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
  // `--json=true` is refused (a boolean takes no value), but its error is still wanted as JSON.
  const json = argv.some((a) => a === '--json' || a.startsWith('--json='));
  try {
    // `lm-bench help sim` as git's `help CMD`: the command's usage, not the list it was picked from.
    const topic = name === 'help' && rest[0] !== undefined && !rest[0].startsWith('-') ? rest[0] : undefined;
    if (name === undefined || name === '--help' || name === '-h' || (name === 'help' && topic === undefined)) {
      help(io);
      return 0;
    }
    if (topic !== undefined) return await main([topic, '--help'], io);
    if (name === '--version' || name === '-v') {
      io.stdout.write(`${VERSION}\n`);
      return 0;
    }
    if (name.startsWith('-') && rest.length > 0) {
      // `lm-bench --json models show M`: flags belong to a command and follow its name.
      const at = rest.findIndex(isCommandName);
      const hint = at < 0 ? 'give a command first: `lm-bench <command> [flags]`' : `write it after the command: \`lm-bench ${rest[at] ?? ''} … ${name}\``;
      throw new LmBenchError('LMB_ERR_UNKNOWN_COMMAND', `"${name}" is a flag, not a command; ${hint}`, { details: { field: 'command', value: name } });
    }
    if (!isCommandName(name)) {
      // Loaded only here, so `lm-bench --help` still loads nothing of zod; the deprecated alias is never suggested.
      const { nearestName } = await import('./args.js');
      const near = nearestName(name, Object.keys(COMMANDS).filter((c) => c !== 'model'));
      const hint = near === undefined ? 'run `lm-bench --help`' : `did you mean \`lm-bench ${near}\`?`;
      throw new LmBenchError('LMB_ERR_UNKNOWN_COMMAND', `unknown command "${name}"; ${hint}`, { details: { field: 'command', value: name } });
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
    } else if (e.kind === 'unexpected') {
      // The catalog asks for a report of a bug; say how to get the one thing a report needs.
      io.stderr.write('lm-bench: run again with LMB_DEBUG=1 to print the stack trace for the report\n');
    }
    return e.exitCode;
  }
}

/** 128 + SIGPIPE: the status a shell reports for a Unix tool whose reader went away (`yes | head -1`). */
const CLOSED_STDOUT_EXIT = 141;

/**
 * `lm-bench … | head -1`: once the reader has gone, the next write fails with EPIPE, which Node raises
 * as an unhandled 'error' event, a stack trace on stderr. The output is unwanted, not broken: stop at
 * once and quietly, as a tool killed by SIGPIPE does. Any other error of stdout is still raised.
 */
function exitQuietlyOnClosedStdout(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(CLOSED_STDOUT_EXIT);
  });
}

// Run when executed as the entry point (bin/lm-bench.js imports this module).
if (process.argv[1] !== undefined && /lm-bench(\.js)?$|main\.ts$/.test(process.argv[1])) {
  exitQuietlyOnClosedStdout();
  const code = await main(process.argv.slice(2));
  process.exitCode = code;
}
