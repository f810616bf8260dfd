/** `lm-bench trial-run --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench trial-run --trial FILE --result FILE

Runs one trial where it stands — inside a Slurm batch job that \`lm-bench tune --target slurm\`
submitted: starts the engine the trial file names (\`vllm serve\` with the trial's configuration on a
free loopback port, or the embedded simulator), waits for it to be healthy (an engine that exits
first fails at once), drives the bundled load runner against it, stops it, and writes the outcome
to --result (written whole or not at all). The server's output goes to this command's stderr, i.e.
the job's log. Exits 0 when the trial was measured, 3 when the configuration failed, 130 when a
signal (scancel, the time limit) stopped it.
`;
