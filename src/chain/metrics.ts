/**
 * Chain-data endpoint metrics, kept in the core process where the client
 * runs and collected through the supervisor for /metrics: every attempt by route and
 * outcome (`ok`, `http_<status>`, or why it failed), its latency by route, and the
 * request budget (src/chain/budget.ts): tokens left, requests started and waiting by
 * priority, 429 answers.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { PRIORITIES, type BudgetStatus } from './budget.js';

/** Esplora answers in tens of milliseconds nearby, hundreds across the internet; a raw block takes seconds. */
const CHAIN_LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class ChainMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({ name: 'svc_chain_requests_total', help: 'Requests (attempts) to the chain-data endpoint, by route and outcome (ok, http_<status>, timeout, network_error, invalid_answer, ...); errors are every outcome but ok', labelNames: ['route', 'outcome'], registers: [this.registry] });
  private readonly duration = new Histogram({ name: 'svc_chain_request_duration_seconds', help: 'Duration of one request (attempt) to the chain-data endpoint, by route', labelNames: ['route'], buckets: CHAIN_LATENCY_BUCKETS, registers: [this.registry] });
  private budget: () => BudgetStatus | null = () => null;

  constructor() {
    // Read from the budget at scrape time (collect), so the figures are the budget's own.
    const status = (): BudgetStatus | null => this.budget();
    new Gauge({
      name: 'svc_chain_budget_available',
      help: 'Whole requests the chain-data budget lets the node send now (tokens in the bucket; at most esplora_burst)',
      registers: [this.registry],
      collect() {
        const s = status();
        if (s) this.set(s.available);
      },
    });
    new Counter({
      name: 'svc_chain_budget_requests_total',
      help: 'Requests (attempts) the chain-data budget let start, by priority (tip, intake, deferred)',
      labelNames: ['priority'],
      registers: [this.registry],
      collect() {
        const s = status();
        if (!s) return;
        this.reset();
        for (const p of PRIORITIES) this.inc({ priority: p }, s.started_total[p]);
      },
    });
    new Gauge({
      name: 'svc_chain_budget_waiting',
      help: 'Requests queued for the chain-data budget (a token or a connection), by priority',
      labelNames: ['priority'],
      registers: [this.registry],
      collect() {
        const s = status();
        if (s) for (const p of PRIORITIES) this.set({ priority: p }, s.waiting[p]);
      },
    });
    new Counter({
      name: 'svc_chain_budget_throttled_total',
      help: '429 answers from the chain-data endpoint (each pauses every request until its Retry-After or a backoff)',
      registers: [this.registry],
      collect() {
        const s = status();
        if (!s) return;
        this.reset();
        this.inc(s.throttled_total);
      },
    });
  }

  readonly observe = (route: string, outcome: string, seconds: number): void => {
    this.requests.inc({ route, outcome });
    this.duration.observe({ route }, seconds);
  };

  /** The budget whose state the svc_chain_budget_* families report. */
  watchBudget(status: () => BudgetStatus | null): void {
    this.budget = status;
  }
}
