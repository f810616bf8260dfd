/**
 * `lm-bench serve` and `lm-bench sim serve` given inputs that must fail before anything listens. They
 * run in a child process (serve-runner.ts) with a time limit per case, so a case the product wrongly
 * accepts is reported as such and its server dies with the child instead of outliving the test.
 * `$PORT_IN_USE` is a loopback port the runner holds open for the duration.
 */
import { withFlag, type CliCase } from './cli-harness.js';

const SERVE = ['serve', '--db', '$DB', '--quiet', '--port', '0'];
const serve = (config: string): string[] => ['serve', '--config', config, '--db', '$DB', '--quiet'];
const SIM = ['sim', 'serve', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--port', '0'];
const CONFIG = 'LMB_ERR_CONFIG_INVALID';
const INVALID = 'LMB_ERR_INVALID_ARGUMENT';

export const SERVE_CASES: readonly CliCase[] = [
  /* -------------------------------------------------- serve --config FILE */
  { id: 'cli-serve-config-syntax', argv: serve('$F/svc-syntax.yaml'), code: CONFIG, names: /svc-syntax\.yaml:3/ },
  { id: 'cli-serve-config-unknown-key', argv: serve('$F/svc-unknown-key.yaml'), code: CONFIG, names: /svc-unknown-key\.yaml:\d+.*"prot"/ },
  { id: 'cli-serve-config-wrong-type', argv: serve('$F/svc-wrong-type.yaml'), code: CONFIG, names: /svc-wrong-type\.yaml:1.*port/ },
  { id: 'cli-serve-config-port-huge', argv: serve('$F/svc-huge-port.yaml'), code: CONFIG, names: /svc-huge-port\.yaml:1.*port/ },
  { id: 'cli-serve-config-target-unknown-kind', argv: serve('$F/svc-bad-target.yaml'), code: CONFIG, names: /svc-bad-target\.yaml:3.*targets\.warp\.kind/ },
  { id: 'cli-serve-config-target-command-missing', argv: serve('$F/svc-target-command-bad.yaml'), code: CONFIG, names: /svc-target-command-bad\.yaml:3.*targets\.slurm\.command/ },
  { id: 'cli-serve-config-token-file-missing', argv: serve('$F/svc-missing-token-file.yaml'), code: 'LMB_ERR_FILE_NOT_FOUND', names: /token_file.*no-such-token\.txt/ },
  { id: 'cli-serve-config-token-too-short', argv: serve('$F/svc-short-token.yaml'), code: CONFIG, names: /token_file.*short-token\.txt/ },
  { id: 'cli-serve-config-space-missing', argv: serve('$F/svc-space-missing.yaml'), code: 'LMB_ERR_FILE_NOT_FOUND', names: /no-such-space\.yaml/ },
  { id: 'cli-serve-config-space-broken', argv: serve('$F/svc-space-broken.yaml'), code: 'LMB_ERR_SPACE_INVALID', names: /space-syntax\.yaml:4/ },
  { id: 'cli-serve-config-rate-limit-negative', argv: serve('$F/svc-negative-rate.yaml'), code: CONFIG, names: /svc-negative-rate\.yaml:2.*rate_limit\.max/ },
  { id: 'cli-serve-config-threads-huge', argv: serve('$F/svc-threads-huge.yaml'), code: CONFIG, names: /svc-threads-huge\.yaml:2.*recommend_threads/ },
  { id: 'cli-serve-config-duplicate-key', argv: serve('$F/svc-duplicate-key.yaml'), code: CONFIG, names: /svc-duplicate-key\.yaml:2/ },
  { id: 'cli-serve-config-list', argv: serve('$F/svc-list.yaml'), code: CONFIG, names: /svc-list\.yaml/ },
  { id: 'cli-serve-config-empty', argv: serve('$F/empty.yaml'), code: CONFIG, names: /empty\.yaml/ },
  { id: 'cli-serve-config-yaml-bomb', argv: serve('$F/wl-yaml-bomb.yaml'), code: CONFIG, names: /wl-yaml-bomb\.yaml/ },
  { id: 'cli-serve-config-binary', argv: serve('$T/garbage.bin'), code: CONFIG, names: /garbage\.bin/ },
  { id: 'cli-serve-config-missing', argv: serve('$F/no-such-service.yaml'), code: 'LMB_ERR_FILE_NOT_FOUND', names: /no-such-service\.yaml/ },
  { id: 'cli-serve-config-directory', argv: serve('$F/'), code: ['LMB_ERR_FILE_NOT_FOUND', CONFIG, INVALID], names: /bad-inputs\/files/ },
  /* ---------------------------------------------------------- serve flags */
  { id: 'cli-serve-port-huge', argv: withFlag(SERVE, '--port', '70000'), code: INVALID, names: /--port/ },
  { id: 'cli-serve-port-word', argv: withFlag(SERVE, '--port', 'abc'), code: INVALID, names: /--port.*"abc"/ },
  { id: 'cli-serve-port-negative', argv: withFlag(SERVE, '--port', '-1'), code: INVALID, names: /--port/ },
  { id: 'cli-serve-unknown-flag', argv: [...SERVE, '--bogus'], code: INVALID, names: /--bogus/ },
  { id: 'cli-serve-host-unresolvable', argv: [...SERVE, '--host', 'not a host!'], code: INVALID, names: /--host|not a host!/ },
  { id: 'cli-serve-port-in-use', argv: [...withFlag(SERVE, '--port', '$PORT_IN_USE'), '--host', '127.0.0.1'], code: INVALID, names: /\$PORT_IN_USE|in use/ },
  { id: 'cli-serve-db-not-sqlite', argv: ['serve', '--db', '$T/not-a-db.db', '--quiet', '--port', '0'], code: ['LMB_ERR_STORE_FAILED', INVALID], names: /not-a-db\.db/ },
  /* ------------------------------------------------------------ sim serve */
  { id: 'cli-sim-serve-port-huge', argv: withFlag(SIM, '--port', '70000'), code: INVALID, names: /--port/ },
  { id: 'cli-sim-serve-port-word', argv: withFlag(SIM, '--port', 'abc'), code: INVALID, names: /--port.*"abc"/ },
  { id: 'cli-sim-serve-speed-zero', argv: [...SIM, '--speed', '0'], code: INVALID, names: /--speed/ },
  { id: 'cli-sim-serve-speed-huge', argv: [...SIM, '--speed', '1e9'], code: INVALID, names: /--speed/ },
  { id: 'cli-sim-serve-set-not-number', argv: [...SIM, '--set', 'max_num_seqs=abc'], code: 'LMB_ERR_KNOB_OUT_OF_DOMAIN', names: /max_num_seqs/ },
  { id: 'cli-sim-serve-set-unknown-knob', argv: [...SIM, '--set', 'swap_space=4'], code: 'LMB_ERR_UNKNOWN_KNOB', names: /"swap_space"/ },
  { id: 'cli-sim-serve-cert-without-key', argv: [...SIM, '--ssl-certfile', '$F/no-such-cert.pem'], code: INVALID, names: /--ssl-keyfile/ },
  { id: 'cli-sim-serve-cert-missing', argv: [...SIM, '--ssl-certfile', '$F/no-such-cert.pem', '--ssl-keyfile', '$F/no-such-key.pem'], code: 'LMB_ERR_FILE_NOT_FOUND', names: /no-such-cert\.pem/ },
  { id: 'cli-sim-serve-tp-above-gpus', argv: [...SIM, '--tensor-parallel-size', '8'], code: 'LMB_ERR_STARTUP_FAILED', names: /tensor_parallel_size/ },
  { id: 'cli-sim-serve-missing-model', argv: ['sim', 'serve', '--gpu', 'H100-SXM', '--port', '0'], code: INVALID, names: /--model/ },
  { id: 'cli-sim-serve-model-unknown', argv: ['sim', 'serve', '--gpu', 'H100-SXM', '--model', 'gpt-9', '--port', '0'], code: 'LMB_ERR_UNKNOWN_MODEL', names: /"gpt-9"/ },
  { id: 'cli-sim-serve-unknown-flag', argv: [...SIM, '--bogus'], code: INVALID, names: /--bogus/ },
  { id: 'cli-sim-serve-seed-float', argv: [...SIM, '--seed', '1.5'], code: INVALID, names: /--seed/ },
  { id: 'cli-sim-serve-host-unresolvable', argv: [...SIM, '--host', 'not a host!'], code: INVALID, names: /--host|not a host!/ },
  { id: 'cli-sim-serve-port-in-use', argv: [...withFlag(SIM, '--port', '$PORT_IN_USE'), '--host', '127.0.0.1'], code: INVALID, names: /\$PORT_IN_USE|in use/ },
];
