import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A loopback stand-in for NVIDIA's DCGM exporter: `GET /metrics` answers the Prometheus text the real one
 * serves with its default counters (etc/default-counters.csv), one series per GPU with the exporter's
 * labels: `DCGM_FI_DEV_POWER_USAGE` (gauge, W) and `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (counter, mJ
 * since the driver loaded), among a few other fields. The counter advances at each GPU's wattage in real
 * time, so the energy over any window is that wattage times its length; the gauge wobbles ±0.25 W round
 * it from scrape to scrape, as a real reading does. Modes:
 *   ok | power-only (no energy counter) | stale (values frozen, as with a 30 s collect interval) |
 *   hang (accepts, never answers) | garbage (200 with an HTML page) | http500
 */
export type ExporterMode = 'ok' | 'power-only' | 'stale' | 'hang' | 'garbage' | 'http500';

export interface DcgmStandIn {
  readonly url: string;
  readonly scrapes: () => number;
  close(): Promise<void>;
}

const LABELS = (gpu: number): string =>
  `gpu="${gpu}",UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e5${gpu}",pci_bus_id="00000000:${18 + gpu}:00.0",device="nvidia${gpu}",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-box",DCGM_FI_DRIVER_VERSION="550.54.15"`;

export function exposition(watts: readonly number[], elapsedS: number, scrape: number, mode: ExporterMode): string {
  const wobble = mode === 'stale' ? 0 : scrape % 2 === 0 ? -0.25 : 0.25;
  const t = mode === 'stale' ? 0 : elapsedS;
  const lines = [
    '# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).',
    '# TYPE DCGM_FI_DEV_SM_CLOCK gauge',
    ...watts.map((_, g) => `DCGM_FI_DEV_SM_CLOCK{${LABELS(g)}} 1980`),
    '# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).',
    '# TYPE DCGM_FI_DEV_GPU_TEMP gauge',
    ...watts.map((_, g) => `DCGM_FI_DEV_GPU_TEMP{${LABELS(g)}} 41`),
    '# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).',
    '# TYPE DCGM_FI_DEV_POWER_USAGE gauge',
    ...watts.map((w, g) => `DCGM_FI_DEV_POWER_USAGE{${LABELS(g)}} ${(w + wobble).toFixed(3)}`),
  ];
  if (mode !== 'power-only') {
    lines.push(
      '# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).',
      '# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter',
      ...watts.map((w, g) => `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{${LABELS(g)}} ${Math.round(9_000_000_000 + g * 1e9 + w * t * 1000)}`),
    );
  }
  return `${lines.join('\n')}\n`;
}

export async function startDcgmExporter(opts: { watts?: readonly number[]; mode?: ExporterMode } = {}): Promise<DcgmStandIn> {
  const watts = opts.watts ?? [100, 250];
  const mode = opts.mode ?? 'ok';
  const t0 = performance.now();
  let scrapes = 0;
  const sockets = new Set<Socket>();
  const held: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    scrapes++;
    if (mode === 'hang') {
      held.push(res);
      return;
    }
    if (req.url !== '/metrics') {
      res.writeHead(404).end('404 page not found\n');
      return;
    }
    if (mode === 'http500') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error\n');
      return;
    }
    if (mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><h1>Welcome to nginx!</h1></body></html>\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(exposition(watts, (performance.now() - t0) / 1000, scrapes, mode));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    scrapes: () => scrapes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
