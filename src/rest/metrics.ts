/**
 * GET /metrics (docs/ARCHITECTURE.md, "Metrics"). The REST process renders one
 * Prometheus text page: what it measures itself (HTTP requests, intake latency, read
 * replica) with prom-client, and what the core and writer count, fetched in one
 * `metrics` RPC per scrape and copied into gauges and counters here. The block
 * application histogram is counted by the writer and rendered as text with its buckets.
 * Every process's runtime metrics (prom-client's defaults, labelled by role), the
 * supervisor's (restarts, build info), gossip's counters and the core's chain-endpoint
 * metrics come through the supervisor (src/supervisor/process-metrics.ts) and are
 * rendered merged by family name.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { BLOCK_APPLY_BUCKETS, type CoreMetrics } from '../messages/rest.js';
import type { MetricFamily } from '../messages/supervisor.js';
import type { ReadCache } from './read-cache.js';
import { familiesOf, processRegistry, renderFamilies } from '../supervisor/process-metrics.js';

interface HttpSeries {
  method: string;
  route: string;
  statuses: Map<number, number>;
  buckets: number[];
  sum: number;
  count: number;
}

const HTTP_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class RestMetrics {
  readonly registry = new Registry();
  private readonly httpRequests = new Counter({ name: 'svc_http_requests_total', help: 'HTTP requests answered, by method, route and status', labelNames: ['method', 'route', 'status'], registers: [this.registry] });
  /**
   * Per-request observations are aggregated in plain maps (one Map lookup per request) and
   * copied into the registry at scrape time; prom-client's label hashing per request
   * costs as much as serving a cached read.
   */
  private readonly http = new Map<string, Map<string, HttpSeries>>();
  private readonly intake = new Counter({ name: 'svc_intake_requests_total', help: 'Deploy and call submissions by kind and outcome (accepted, repeat or the error code)', labelNames: ['kind', 'outcome'], registers: [this.registry] });
  private readonly intakeDuration = new Histogram({ name: 'svc_intake_duration_seconds', help: 'Deploy and call intake latency (REST to answer), by kind', labelNames: ['kind'], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  private readonly coreUp = new Gauge({ name: 'svc_core_up', help: '1 when the core answered this scrape', registers: [this.registry] });
  private readonly calls = new Gauge({ name: 'svc_calls', help: 'Known calls by status', labelNames: ['status'], registers: [this.registry] });
  private readonly blocks = new Counter({ name: 'svc_blocks_applied_total', help: 'Blocks from the chain applied by the writer since the core started (replays of the journal not counted)', registers: [this.registry] });
  private readonly reorgs = new Counter({ name: 'svc_reorgs_total', help: 'Chain reorganisations by depth (blocks disconnected)', labelNames: ['depth'], registers: [this.registry] });
  private readonly undoDepth = new Gauge({ name: 'svc_undo_log_depth', help: 'Blocks the undo logs can rewind (at most 144)', registers: [this.registry] });
  private readonly processed = new Gauge({ name: 'svc_processed_height', help: 'Last processed Bitcoin block height', registers: [this.registry] });
  private readonly tip = new Gauge({ name: 'svc_chain_tip_height', help: 'Bitcoin tip height seen at the chain-data endpoint', registers: [this.registry] });
  private readonly lag = new Gauge({ name: 'svc_chain_lag_blocks', help: 'Blocks the node is behind the Bitcoin tip', registers: [this.registry] });
  private readonly endpointUp = new Gauge({ name: 'svc_chain_endpoint_up', help: '1 when the chain-data endpoint answered its last request', registers: [this.registry] });
  private readonly poolThreads = new Gauge({ name: 'svc_pool_threads', help: 'Worker pool threads', registers: [this.registry] });
  private readonly poolQueued = new Gauge({ name: 'svc_pool_queued', help: 'Tasks waiting in the worker pool queue', registers: [this.registry] });
  private readonly poolLimit = new Gauge({ name: 'svc_pool_queue_limit', help: 'Worker pool queue limit (saturated at or above it)', registers: [this.registry] });
  private readonly poolSaturated = new Gauge({ name: 'svc_pool_saturated', help: '1 when the worker pool refuses work', registers: [this.registry] });
  private readonly poolCompleted = new Counter({ name: 'svc_pool_tasks_completed_total', help: 'Worker pool tasks completed', registers: [this.registry] });
  private readonly pending = new Gauge({ name: 'svc_pending_calls', help: 'Calls accepted and not yet decided', registers: [this.registry] });
  private readonly contracts = new Gauge({ name: 'svc_contracts', help: 'Known contracts (pending and active)', registers: [this.registry] });
  private readonly halted = new Gauge({ name: 'svc_halted', help: '1 while the node is in a consensus halt', registers: [this.registry] });
  private readonly divergence = new Gauge({ name: 'svc_divergence_unresolved', help: '1 while a state divergence against a peer is reported and not resolved (node_status.divergence)', registers: [this.registry] });
  private readonly peers = new Gauge({ name: 'svc_peers', help: 'Active gossip peers (heard from within gossip.peer_expiry_s), as last reported to the core', registers: [this.registry] });
  private readonly simulations = new Counter({ name: 'svc_simulations_total', help: 'Simulations by outcome', labelNames: ['status'], registers: [this.registry] });
  private readonly cacheEntries = new Gauge({ name: 'svc_rest_read_cache_entries', help: 'Field answers held by the REST read replica', registers: [this.registry] });
  private readonly cacheHits = new Counter({ name: 'svc_rest_read_cache_hits_total', help: 'Field reads answered from the REST read replica', registers: [this.registry] });
  private readonly cacheMisses = new Counter({ name: 'svc_rest_read_cache_misses_total', help: 'Field reads sent to the writer', registers: [this.registry] });
  private blockApplyText = '';
  /** This process's runtime metrics (role="rest"). */
  private readonly processMetrics = processRegistry('rest');

  constructor(
    private readonly cache: ReadCache,
    /** The other processes' families (through the supervisor); none in tests without one. */
    private readonly others: () => Promise<MetricFamily[]> = () => Promise.resolve([]),
  ) {}

  observeHttp(rawMethod: string, route: string, status: number, seconds: number): void {
    // Label values stay bounded: routes are patterns, methods outside the usual set are OTHER.
    // Nested maps keyed by the (interned) method and pattern strings: no string is built per request.
    const method = HTTP_METHODS.has(rawMethod) ? rawMethod : 'OTHER';
    let byRoute = this.http.get(method);
    if (!byRoute) this.http.set(method, (byRoute = new Map()));
    let h = byRoute.get(route);
    if (!h) byRoute.set(route, (h = { method, route, statuses: new Map(), buckets: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 }));
    h.statuses.set(status, (h.statuses.get(status) ?? 0) + 1);
    h.sum += seconds;
    h.count++;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    if (i < LATENCY_BUCKETS.length) h.buckets[i]!++; // per-bucket counts; cumulated when rendered
  }

  private httpText(): string {
    this.httpRequests.reset();
    const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    const lines = ['# HELP svc_http_request_duration_seconds HTTP request duration in the REST front, by route', '# TYPE svc_http_request_duration_seconds histogram'];
    for (const byRoute of this.http.values()) {
      for (const h of byRoute.values()) {
        for (const [status, n] of h.statuses) this.httpRequests.inc({ method: h.method, route: h.route, status: String(status) }, n);
        const l = `method="${esc(h.method)}",route="${esc(h.route)}"`;
        let cum = 0;
        LATENCY_BUCKETS.forEach((b, i) => {
          cum += h.buckets[i]!;
          lines.push(`svc_http_request_duration_seconds_bucket{${l},le="${b}"} ${cum}`);
        });
        lines.push(`svc_http_request_duration_seconds_bucket{${l},le="+Inf"} ${h.count}`, `svc_http_request_duration_seconds_sum{${l}} ${h.sum}`, `svc_http_request_duration_seconds_count{${l}} ${h.count}`);
      }
    }
    return lines.join('\n') + '\n';
  }

  observeIntake(kind: 'call' | 'deploy', outcome: string, seconds: number): void {
    this.intake.inc({ kind, outcome });
    this.intakeDuration.observe({ kind }, seconds);
  }

  private setCounter(c: Counter<string>, v: number, labels?: Record<string, string>): void {
    if (labels) c.inc(labels, Math.max(0, v));
    else c.inc(Math.max(0, v));
  }

  /** Copies one core snapshot (or null: the core did not answer). */
  private apply(m: CoreMetrics | null): void {
    this.coreUp.set(m ? 1 : 0);
    this.cacheEntries.set(this.cache.size);
    this.cacheHits.reset();
    this.setCounter(this.cacheHits, this.cache.hits);
    this.cacheMisses.reset();
    this.setCounter(this.cacheMisses, this.cache.misses);
    if (!m) {
      this.blockApplyText = '';
      return;
    }
    const w = m.writer;
    this.calls.reset();
    for (const [status, n] of Object.entries(w.calls_by_status)) this.calls.set({ status }, n);
    this.blocks.reset();
    this.setCounter(this.blocks, w.blocks_applied);
    this.reorgs.reset();
    for (const [depth, n] of Object.entries(w.reorgs_by_depth)) this.setCounter(this.reorgs, n, { depth });
    this.undoDepth.set(w.undo_depth);
    if (w.processed_height !== null) this.processed.set(w.processed_height);
    if (m.tip_height !== null) this.tip.set(m.tip_height);
    this.lag.set(m.tip_height !== null && w.processed_height !== null ? Math.max(0, m.tip_height - w.processed_height) : 0);
    this.endpointUp.set(m.chain_endpoint_ok ? 1 : 0);
    this.poolThreads.set(m.pool.threads);
    this.poolQueued.set(m.pool.queued);
    this.poolLimit.set(m.pool.queue_limit);
    this.poolSaturated.set(m.pool.saturated ? 1 : 0);
    this.poolCompleted.reset();
    this.setCounter(this.poolCompleted, m.pool.completed);
    this.pending.set(w.pending_calls);
    this.contracts.set(w.contracts);
    this.halted.set(w.halted ? 1 : 0);
    this.peers.set(m.peers);
    this.divergence.set(m.divergence_unresolved ? 1 : 0);
    this.simulations.reset();
    for (const [status, n] of Object.entries(m.simulations)) this.setCounter(this.simulations, n, { status });
    const h = w.block_apply_seconds;
    const lines = ['# HELP svc_block_apply_duration_seconds Time the writer took to apply one block (atomic batch included)', '# TYPE svc_block_apply_duration_seconds histogram'];
    BLOCK_APPLY_BUCKETS.forEach((b, i) => lines.push(`svc_block_apply_duration_seconds_bucket{le="${b}"} ${h.buckets[i] ?? 0}`));
    lines.push(`svc_block_apply_duration_seconds_bucket{le="+Inf"} ${h.count}`, `svc_block_apply_duration_seconds_sum ${h.sum}`, `svc_block_apply_duration_seconds_count ${h.count}`);
    this.blockApplyText = lines.join('\n') + '\n';
  }

  async render(fetchCore: () => Promise<CoreMetrics>): Promise<string> {
    const [m, own, others] = await Promise.all([fetchCore().catch(() => null), familiesOf(this.processMetrics), this.others()]);
    this.apply(m);
    const http = this.httpText();
    return (await this.registry.metrics()) + http + this.blockApplyText + renderFamilies([...own, ...others]);
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
