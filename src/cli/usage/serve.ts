/** `lm-bench serve --help`: kept apart from the command so the text loads without the command's modules. */
export const usage = `Usage:
  lm-bench serve [--config service.yaml] [--host 127.0.0.1] [--port 8080] [--db PATH] [--quiet]

Runs the HTTP service (API v1; OpenAPI document at /openapi.json, docs at /docs). Binds 127.0.0.1
unless --host or the config says otherwise. Every write needs "Authorization: Bearer <token>", the
token from LMB_API_TOKEN or the config's token_file; without one, writes are refused. Studies run
against the target profiles of the config (configs/service.example.yaml). SIGTERM stops accepting,
lets running trials finish within shutdown_grace_ms and closes the store; studies that were running
resume on the next start. Logs are JSON lines on stdout.`;
