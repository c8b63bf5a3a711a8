/**
 * Process and Node runtime metrics of every process of the node: each keeps
 * prom-client's default metrics (CPU, memory, event-loop lag, GC, handles) in a registry
 * of its own, labelled with its role; the supervisor gathers the children's families over
 * the process IPC channel at each scrape, and the REST front renders them merged by
 * name, so one metric family (one HELP and TYPE line) carries one series per role.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { MetricFamily } from '../messages/supervisor.js';

export type ProcessRole = 'supervisor' | 'core' | 'rest' | 'gossip';

/** A registry with prom-client's default metrics, every series labelled `role`. */
export function processRegistry(role: ProcessRole): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ role });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * prom-client's gauges named like counters (`nodejs_active_handles_total` and the like:
 * current counts, the sums of `nodejs_active_handles{type}` and its siblings, which stay).
 * Left out: promtool's lint refuses a gauge with a `_total` suffix, and a rate() over
 * them would be wrong.
 */
const GAUGES_NAMED_AS_COUNTERS = /^nodejs_active_\w+_total$/;

export async function familiesOf(registry: Registry): Promise<MetricFamily[]> {
  const json = (await registry.getMetricsAsJSON()).filter((m) => !(GAUGES_NAMED_AS_COUNTERS.test(m.name) && String(m.type) !== 'counter'));
  return json.map((m) => ({
    name: m.name,
    help: m.help,
    type: String(m.type),
    values: (m.values ?? []).map((v) => {
      const out: MetricFamily['values'][number] = { value: v.value, labels: { ...(v.labels as Record<string, string | number>) } };
      const metricName = (v as { metricName?: string }).metricName;
      if (metricName !== undefined) out.metricName = metricName;
      return out;
    }),
  }));
}

const escLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

/** Prometheus text format numbers: integers as is, the special values by name. */
function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/**
 * Renders families in the Prometheus text format, families of the same name (one per
 * process) merged under one HELP and TYPE line: the format allows a family only once.
 */
export function renderFamilies(families: MetricFamily[]): string {
  const byName = new Map<string, MetricFamily>();
  for (const f of families) {
    const seen = byName.get(f.name);
    if (seen) seen.values.push(...f.values);
    else byName.set(f.name, { ...f, values: [...f.values] });
  }
  const lines: string[] = [];
  for (const f of byName.values()) {
    lines.push(`# HELP ${f.name} ${escHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const v of f.values) {
      const labels = Object.entries(v.labels)
        .map(([k, x]) => `${k}="${escLabel(String(x))}"`)
        .join(',');
      lines.push(`${v.metricName ?? f.name}${labels ? `{${labels}}` : ''} ${num(v.value)}`);
    }
  }
  return lines.length > 0 ? lines.join('\n') + '\n' : '';
}
