/**
 * Metrics as CloudWatch Embedded Metric Format lines, written by Powertools Metrics to
 * stdout: CloudWatch Logs turns them into metrics, with no API call from the function.
 * An EMF line gives every metric in it the same dimension values, so `flush` writes one
 * line per distinct set of dimension values (a poll and a completion of another tool are
 * two lines).
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { SERVICE_NAME } from './structured-logger.ts';
import type { MetricName, MetricsRecorder } from './metrics-recorder.ts';

/** The CloudWatch namespace (`POWERTOOLS_METRICS_NAMESPACE` overrides it). */
export const METRICS_NAMESPACE = 'AsyncMcp';

export interface EmfMetricsOptions {
  /** @default POWERTOOLS_METRICS_NAMESPACE, else `AsyncMcp` */
  namespace?: string;
  /** The `service` dimension. @default POWERTOOLS_SERVICE_NAME, else `async-mcp` */
  serviceName?: string;
}

interface Datum {
  name: MetricName;
  unit: 'Count' | 'Milliseconds';
  value: number;
}

/** A recorder that buffers in memory and writes EMF lines on `flush`. */
export function createEmfMetrics(options: EmfMetricsOptions = {}): MetricsRecorder {
  const metrics = new Metrics({
    namespace: options.namespace ?? (process.env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE),
    serviceName: options.serviceName ?? (process.env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME),
  });
  // Keyed by the dimension values; the buffer is the process's, so concurrent local requests
  // share it, and each datum is written exactly once by whichever flush comes first.
  const groups = new Map<string, { dimensions: Record<string, string>; data: Datum[] }>();
  const record = (datum: Datum, dimensions: Record<string, string>) => {
    const key = JSON.stringify(Object.entries(dimensions).sort(([a], [b]) => (a < b ? -1 : 1)));
    const group = groups.get(key) ?? { dimensions, data: [] };
    groups.set(key, group);
    group.data.push(datum);
  };
  return {
    count: (name, dimensions, value = 1) => record({ name, unit: 'Count', value }, dimensions),
    milliseconds: (name, value, dimensions) => record({ name, unit: 'Milliseconds', value }, dimensions),
    flush: () => {
      const pending = [...groups.values()];
      groups.clear();
      for (const { dimensions, data } of pending) {
        // Synchronous from the first add to the publish: no other request interleaves.
        for (const [name, value] of Object.entries(dimensions)) metrics.addDimension(name, value || 'unknown');
        for (const [name, { unit, value }] of summed(data)) metrics.addMetric(name, MetricUnit[unit], value);
        metrics.publishStoredMetrics();
      }
    },
  };
}

/** Counts add up; durations stay separate values (EMF keeps a list of them). */
function summed(data: Datum[]): Array<[MetricName, Datum]> {
  const out: Array<[MetricName, Datum]> = [];
  const counts = new Map<MetricName, Datum>();
  for (const datum of data) {
    if (datum.unit !== 'Count') {
      out.push([datum.name, datum]);
      continue;
    }
    const total = counts.get(datum.name);
    if (total) total.value += datum.value;
    else counts.set(datum.name, { ...datum });
  }
  return [...counts, ...out];
}
