// Loaded only with a dynamic import when traces are exported (create-runner.ts): a runner without
// an OTLP endpoint never loads any @opentelemetry package.
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type Context,
  type HrTime,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  RandomIdGenerator,
  type IdGenerator,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import type { SerializedError } from '../../protocol/errors.js';
import type { Outcome, TerminalOutcome } from '../../protocol/outcome.js';
import { formatTraceparent, stepSpanId } from '../../protocol/trace-context.js';
import { parentOf } from '../drive/invoke.js';
import type { Logger } from './logger.js';
import type { Run, Step } from '../store/types.js';
import type { AttemptTrace, AttemptTraceInfo, DeliveryTraceInfo, Tracing } from './tracing.js';
import { DEFAULT_SERVICE_NAME, type OtelConfig } from './otel-config.js';
import { ReportingExporter } from './reporting-exporter.js';
import { runTraceIds } from './run-trace-ids.js';

/** The attribute names of wfkit's own spans (the contract; the rest are OTel semantic conventions). */
export const WfAttr = {
  RunId: 'wf.run_id',
  RunStatus: 'wf.run.status',
  RunAttempts: 'wf.run.attempts',
  RunStepsDone: 'wf.run.steps_done',
  ParentRunId: 'wf.parent_run_id',
  StepName: 'wf.step.name',
  StepIndex: 'wf.step.index',
  StepKind: 'wf.step.kind',
  StepGroup: 'wf.step.group',
  StepDurationMs: 'wf.step.duration_ms',
  Attempt: 'wf.attempt',
  AttemptSeq: 'wf.attempt.seq',
  Outcome: 'wf.outcome',
  QstashMessageId: 'wf.qstash.message_id',
} as const;

/** Epoch milliseconds as OTel's [seconds, nanoseconds] (a plain number before this process started would be read as relative to it). */
function hr(ms: number): HrTime {
  const whole = Math.floor(ms);
  return [Math.floor(whole / 1000), (whole % 1000) * 1_000_000 + Math.round((ms - whole) * 1_000_000)];
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

function httpAttributes(url: string, method: string): Attributes {
  const attributes: Attributes = { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_FULL]: url };
  try {
    const parsed = new URL(url);
    attributes[ATTR_SERVER_ADDRESS] = parsed.hostname;
    attributes[ATTR_SERVER_PORT] = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
  } catch {}
  return attributes;
}

/** The error as the span's status and an `exception` event (name, message, stack as the route sent them). */
function recordError(span: Span, error: SerializedError, at: number): void {
  span.recordException(
    { name: error.name, message: error.message, ...(error.stack !== undefined && { stack: error.stack }) },
    hr(at),
  );
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  span.setAttribute(ATTR_ERROR_TYPE, error.name);
}

/**
 * Random ids except where both ends must agree without talking: a run's own span, whose trace and
 * span ids are derived from the run id (`run-trace-ids.ts`), and a step's span, derived from its
 * drive's span and its index (`stepSpanId`, which `serve` hands the step). The tracer asks the
 * generator while `startSpan` runs, synchronously, so the ids are set just around that call.
 */
class DerivedIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private forced: { traceId?: string; spanId: string } | undefined;
  generateTraceId(): string {
    return this.forced?.traceId ?? this.random.generateTraceId();
  }
  generateSpanId(): string {
    return this.forced?.spanId ?? this.random.generateSpanId();
  }
  /** `tracer.startSpan` with these ids (a child keeps its parent's trace id whatever `traceId` says). */
  startSpan(
    tracer: Tracer,
    ids: { traceId?: string; spanId: string },
    name: string,
    options: SpanOptions,
    parent: Context,
  ): Span {
    this.forced = ids;
    try {
      return tracer.startSpan(name, options, parent);
    } finally {
      this.forced = undefined;
    }
  }
}

/** The run's span as the parent of its drives (it is emitted later, with these same ids). */
function runContext(runId: string): Context {
  const { traceId, spanId } = runTraceIds(runId);
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

/**
 * Spans, in one trace per run:
 * - `run <path>`: the run, from `createdAt` to when it ended (emitted then, by whichever runner ended it);
 * - `drive <path>` (or `failure-function <path>`): each drive request, an HTTP client span, child of the run;
 * - `step <name>`: each `run` step a drive executed, child of that drive (a retried step shows once per drive);
 * - `sleep|wait|call|invoke <name>`: steps the runner resolves between drives, children of the run, from
 *   the stored steps when the run ends (they span several drives).
 * An Upstash run (its app's SDK drives it, runner-core/qstash/) has the same run span; each delivery
 * of its messages is a client span under it (`drive`, `call`, `callback`, `failure-function`), told
 * when it is over (`delivery`), and its steps, `run` ones too, come from the stored steps at its end.
 * Nothing here throws into the runner: a tracer failure is logged and the run goes on.
 */
class OtelTracing implements Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly ids = new DerivedIdGenerator();
  private readonly logger: Logger;

  constructor(exporter: SpanExporter, serviceName: string, logger: Logger) {
    this.logger = logger;
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
      idGenerator: this.ids,
      // Batched and exported off the drive's path; OTEL_BSP_* variables tune it.
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    this.tracer = this.provider.getTracer('wfkit-runner');
  }

  attempt(run: Run, info: AttemptTraceInfo): AttemptTrace {
    try {
      return new OtelAttemptTrace(this.tracer, this.ids, run, info, this.logger);
    } catch (error) {
      this.logger.error(`tracing: could not start the span of a drive: ${String(error)}`, { runId: run.id });
      return NO_ATTEMPT_TRACE;
    }
  }

  runEnded(run: Run, steps: readonly Step[], at: number): void {
    try {
      const parent = runContext(run.id);
      // An Upstash run's `run` steps were never seen live (its SDK runs them): they come from the rows too.
      for (const step of steps) {
        if (step.kind !== 'run' || run.protocol === 'upstash') this.resolvedStep(run, step, parent, at);
      }
      const attributes: Attributes = {
        [WfAttr.RunId]: run.id,
        [WfAttr.RunStatus]: run.status,
        [ATTR_URL_FULL]: run.url,
      };
      // A child run (context.invoke) has a trace of its own, linked to its parent run's.
      const parentRunId = parentOf(run)?.parentRunId;
      const links =
        parentRunId === undefined
          ? []
          : [{ context: trace.getSpanContext(runContext(parentRunId))!, attributes: { [WfAttr.RunId]: parentRunId } }];
      if (parentRunId !== undefined) attributes[WfAttr.ParentRunId] = parentRunId;
      const span = this.ids.startSpan(
        this.tracer,
        runTraceIds(run.id),
        `run ${pathOf(run.url)}`,
        { kind: SpanKind.INTERNAL, startTime: hr(run.createdAt), attributes, links },
        ROOT_CONTEXT,
      );
      span.setAttribute(WfAttr.RunAttempts, run.attempts);
      // From the steps read now: the driver's copy of the run does not follow the store's count.
      span.setAttribute(WfAttr.RunStepsDone, steps.filter((step) => step.status === 'succeeded').length);
      if (run.status === 'failed' && run.error) recordError(span, run.error, at);
      else if (run.status === 'completed') span.setStatus({ code: SpanStatusCode.OK });
      span.end(hr(Math.max(at, run.createdAt)));
    } catch (error) {
      this.logger.error(`tracing: could not emit the span of a run: ${String(error)}`, { runId: run.id });
    }
  }

  delivery(run: Run, info: DeliveryTraceInfo): void {
    try {
      const attributes: Attributes = {
        [WfAttr.RunId]: run.id,
        [WfAttr.Attempt]: info.attempt,
        [WfAttr.AttemptSeq]: info.seq,
        [WfAttr.QstashMessageId]: info.messageId,
        ...httpAttributes(info.url, info.method),
      };
      if (info.status !== null) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = info.status;
      const name = `${DELIVERY_SPAN_NAMES[info.purpose]} ${pathOf(info.url)}`;
      const options: SpanOptions = { kind: SpanKind.CLIENT, startTime: hr(info.startedAt), attributes };
      const span = this.tracer.startSpan(name, options, runContext(run.id));
      if (info.error) recordError(span, info.error, info.endedAt);
      span.end(hr(Math.max(info.endedAt, info.startedAt)));
    } catch (error) {
      this.logger.error(`tracing: could not emit the span of a delivery: ${String(error)}`, { runId: run.id });
    }
  }

  callTraceparent(runId: string, index: number): string {
    const { traceId, spanId } = runTraceIds(runId);
    return formatTraceparent(traceId, stepSpanId(spanId, index));
  }

  /**
   * A sleep, wait, call or invoke: from when the route reached it to when the runner resolved it.
   * Its span id is derived like a drive's steps' (from the run's span), so a call's request
   * carried it before the span existed.
   */
  private resolvedStep(run: Run, step: Step, parent: Context, at: number): void {
    const attributes: Attributes = {
      [WfAttr.RunId]: run.id,
      [WfAttr.StepName]: step.name,
      [WfAttr.StepIndex]: step.index,
      [WfAttr.StepKind]: step.kind,
      ...(step.kind === 'call' && step.request && httpAttributes(step.request.url, step.request.method)),
    };
    const spanId = stepSpanId(runTraceIds(run.id).spanId, step.index);
    const options: SpanOptions = {
      kind: step.kind === 'call' ? SpanKind.CLIENT : SpanKind.INTERNAL,
      startTime: hr(step.startedAt),
      attributes,
    };
    const name = `${step.kind === 'run' ? 'step' : step.kind} ${step.name}`;
    const span = this.ids.startSpan(this.tracer, { spanId }, name, options, parent);
    const ended = step.finishedAt ?? at;
    if (step.status === 'failed' && step.error) recordError(span, step.error, ended);
    span.end(hr(Math.max(ended, step.startedAt)));
  }

  /** Exports what is buffered; a collector that does not answer holds the runner's stop at most `SHUTDOWN_LIMIT_MS`. */
  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'late'>((done) => {
      timer = setTimeout(() => done('late'), SHUTDOWN_LIMIT_MS);
      timer.unref();
    });
    try {
      const outcome = await Promise.race([this.provider.shutdown(), limit]);
      if (outcome === 'late')
        this.logger.warn(
          `tracing: the collector did not take the last spans within ${SHUTDOWN_LIMIT_MS} ms; they are dropped`,
        );
    } catch (error) {
      this.logger.error(`tracing: exporting the last spans failed: ${String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A delivery's span name by what it was: a step's delivery reads as the drive it is. */
const DELIVERY_SPAN_NAMES: Record<DeliveryTraceInfo['purpose'], string> = {
  delivery: 'drive',
  call: 'call',
  callback: 'callback',
  'failure-callback': 'failure-function',
};

/** How long stopping waits for the last export (the exporter's own timeout is 10 s). */
const SHUTDOWN_LIMIT_MS = 5_000;

/** A drive whose span could not start: no header (empty `traceparent`), nothing recorded. */
const NO_ATTEMPT_TRACE: AttemptTrace = { traceparent: '', step() {}, end() {} };

/** One drive request's span and its `run` steps' spans. */
class OtelAttemptTrace implements AttemptTrace {
  readonly traceparent: string;
  private readonly span: Span;
  private readonly context: Context;
  private readonly steps = new Map<number, { span: Span; startedAt: number }>();
  private readonly tracer: Tracer;
  private readonly ids: DerivedIdGenerator;
  private readonly run: Run;
  private readonly info: AttemptTraceInfo;
  private readonly logger: Logger;

  constructor(tracer: Tracer, ids: DerivedIdGenerator, run: Run, info: AttemptTraceInfo, logger: Logger) {
    this.tracer = tracer;
    this.ids = ids;
    this.run = run;
    this.info = info;
    this.logger = logger;
    const name = `${info.failureFunction ? 'failure-function' : 'drive'} ${pathOf(run.url)}`;
    this.span = tracer.startSpan(
      name,
      {
        kind: SpanKind.CLIENT,
        startTime: hr(info.startedAt),
        attributes: {
          [WfAttr.RunId]: run.id,
          [WfAttr.Attempt]: info.attempt,
          [WfAttr.AttemptSeq]: info.seq,
          ...httpAttributes(run.url, 'POST'),
        },
      },
      runContext(run.id),
    );
    this.context = trace.setSpan(ROOT_CONTEXT, this.span);
    const { traceId, spanId, traceFlags } = this.span.spanContext();
    // Sampled unless OTEL_TRACES_SAMPLER said otherwise for this span: the app then records nothing either.
    this.traceparent = formatTraceparent(traceId, spanId, (traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED);
  }

  step(outcome: Exclude<Outcome, TerminalOutcome>, at: number): void {
    try {
      // Only `run` steps execute inside the drive; the others are resolved by the runner later (runEnded).
      if (outcome.kind !== 'run') return;
      if (outcome.t === 'started') {
        const attributes: Attributes = {
          [WfAttr.RunId]: this.run.id,
          [WfAttr.StepName]: outcome.name,
          [WfAttr.StepIndex]: outcome.index,
          [WfAttr.StepKind]: outcome.kind,
          [WfAttr.StepGroup]: outcome.group,
          [WfAttr.Attempt]: this.info.attempt,
        };
        // The id `serve` gave the step's `fn` (step.trace), so the app's spans inside it nest here.
        const spanId = stepSpanId(this.span.spanContext().spanId, outcome.index);
        const span = this.ids.startSpan(
          this.tracer,
          { spanId },
          `step ${outcome.name}`,
          { startTime: hr(at), attributes },
          this.context,
        );
        this.steps.set(outcome.index, { span, startedAt: at });
        return;
      }
      const open = this.steps.get(outcome.index);
      if (!open) return;
      this.steps.delete(outcome.index);
      open.span.setAttribute(WfAttr.StepDurationMs, outcome.durationMs);
      open.span.setStatus({ code: SpanStatusCode.OK });
      // Started and finished in one chunk: the route's own measure keeps the bar from being empty.
      open.span.end(hr(Math.max(at, open.startedAt + outcome.durationMs)));
    } catch (error) {
      this.logger.error(`tracing: could not record a step's span: ${String(error)}`, { runId: this.run.id });
    }
  }

  end(status: number | null, end: TerminalOutcome | { t: 'error'; error: SerializedError }, at: number): void {
    try {
      for (const [index, open] of this.steps) {
        const failed = end.t === 'failed' && end.step?.index === index;
        if (failed) {
          open.span.setAttribute(WfAttr.StepDurationMs, end.step!.durationMs);
          recordError(open.span, end.error, at);
        } else if (end.t === 'error') {
          open.span.setStatus({ code: SpanStatusCode.ERROR, message: 'the drive ended before the step finished' });
        }
        open.span.end(hr(Math.max(at, open.startedAt)));
      }
      this.steps.clear();
      this.span.setAttribute(WfAttr.Outcome, end.t);
      if (status !== null) this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (end.t === 'failed' || end.t === 'error') recordError(this.span, end.error, at);
      this.span.end(hr(Math.max(at, this.info.startedAt)));
    } catch (error) {
      this.logger.error(`tracing: could not end a drive's span: ${String(error)}`, { runId: this.run.id });
    }
  }
}

/**
 * The OpenTelemetry `Tracing`: OTLP over HTTP with the exporter of `config.protocol` (only that one
 * is loaded), batched. Not registered as the global tracer provider: the runner's spans are its own
 * and an embedding process keeps whatever it set up.
 */
export async function createOtelTracing(config: OtelConfig, logger: Logger): Promise<Tracing> {
  const { OTLPTraceExporter } =
    config.protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
  const exporter = new ReportingExporter(
    new OTLPTraceExporter({ url: config.endpoint, headers: config.headers ?? {} }),
    config.endpoint,
    logger,
  );
  return new OtelTracing(exporter, config.serviceName ?? DEFAULT_SERVICE_NAME, logger);
}
