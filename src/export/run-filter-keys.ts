/**
 * The keys `export --where` accepts (run-filter.ts), in a module of their own with no imports, so the
 * command's usage text (cli/usage/export.ts) names them without loading the filter's parser.
 */
export const RUN_FILTER_KEYS = ['gpu', 'gpus', 'model', 'source_format', 'config.<knob>'] as const;
