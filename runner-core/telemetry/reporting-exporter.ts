import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from './logger.js';

/** OTel's ExportResult: code 0 is SUCCESS, 1 FAILED. */
type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];

/**
 * The OTLP exporter, telling the runner's log when exports start failing and when they work again
 * (once each, not per batch). Without it a collector that is down is silent: the SDK reports to
 * its global diag logger, which is off unless the process set one up, and setting one would touch
 * an embedding app's globals.
 */
export class ReportingExporter implements SpanExporter {
  private failing = false;
  private readonly inner: SpanExporter;
  private readonly endpoint: string;
  private readonly logger: Logger;

  constructor(inner: SpanExporter, endpoint: string, logger: Logger) {
    this.inner = inner;
    this.endpoint = endpoint;
    this.logger = logger;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== 0 && !this.failing) {
        this.failing = true;
        this.logger.warn(
          `tracing: exporting spans to ${this.endpoint} failed (${result.error?.message ?? 'no reason given'}); spans are dropped until it answers`,
        );
      } else if (result.code === 0 && this.failing) {
        this.failing = false;
        this.logger.info(`tracing: exporting spans to ${this.endpoint} works again`);
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
