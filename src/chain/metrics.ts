/**
 * Chain-data endpoint metrics (issue 20), kept in the core process where the client
 * runs and collected through the supervisor for /metrics: every attempt by route and
 * outcome (`ok`, `http_<status>`, or why it failed), and its latency by route.
 */
import { Counter, Histogram, Registry } from 'prom-client';

/** Esplora answers in tens of milliseconds nearby, hundreds across the internet; a raw block takes seconds. */
const CHAIN_LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class ChainMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({ name: 'svc_chain_requests_total', help: 'Requests (attempts) to the chain-data endpoint, by route and outcome (ok, http_<status>, timeout, network_error, invalid_answer, ...); errors are every outcome but ok', labelNames: ['route', 'outcome'], registers: [this.registry] });
  private readonly duration = new Histogram({ name: 'svc_chain_request_duration_seconds', help: 'Duration of one request (attempt) to the chain-data endpoint, by route', labelNames: ['route'], buckets: CHAIN_LATENCY_BUCKETS, registers: [this.registry] });

  readonly observe = (route: string, outcome: string, seconds: number): void => {
    this.requests.inc({ route, outcome });
    this.duration.observe({ route }, seconds);
  };
}
