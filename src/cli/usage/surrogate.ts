/** `lm-bench surrogate --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench surrogate train [--db PATH] [--folds K] [--members N] [--rounds N] [--seed S] [--space FILE] [--threads N] [--json]
  lm-bench surrogate eval  [--db PATH] [--folds K] [--members N] [--rounds N] [--seed S] [--space FILE] [--threads N] [--json]

train: fits the surrogate (XGBoost bootstrap ensembles per target, plus classifiers of whether a
configuration starts and whether it keeps up with the load) on every run in the store, validates it
by k-fold (default 3; 0 skips) and saves it with its feature schema and metrics. eval: k-fold validation only (default 5): MAPE and R² per target and the
permutation importance of each knob. --members 1 fits one tree ensemble a target, which has no spread
of its own: its intervals are the simulator's known error about it. Fitting runs in worker threads
(--threads 0: on this thread).
(\`lm-bench model train|eval\` is the deprecated name of this command; it goes in the next release.)`;
