/** The live feed's figures on GET /metrics, read from the hub at scrape time. */
import { Gauge, type Registry } from 'prom-client';
import type { StreamHub } from './hub.js';

export function registerStreamMetrics(registry: Registry, hub: StreamHub): void {
  const gauge = (name: string, help: string, read: () => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  };
  gauge('svc_stream_connections', 'Open live-feed (GET /v2/stream) connections', () => hub.stats().connections);
  gauge('svc_stream_subscriptions', 'Live-feed subscriptions across connections', () => hub.stats().subscriptions);
  gauge('svc_stream_buffered_bytes', 'Bytes queued to live-feed clients and not yet written (each connection is capped)', () => hub.stats().buffered_bytes);
  gauge('svc_stream_slow_consumers_closed', 'Live-feed connections closed as slow consumers (4008) since start', () => hub.stats().slow_consumers_closed);
  gauge('svc_stream_messages_sent', 'Live-feed messages sent since start', () => hub.stats().messages_sent);
  gauge('svc_stream_rollbacks', 'Reorgs the live feed announced (rollback steps) since start', () => hub.stats().rollbacks);
}
