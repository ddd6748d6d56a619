/**
 * Standard Schema v1 (https://standardschema.dev), written out here so `serve/` depends on no
 * validator: zod, valibot, arktype and others expose this shape under `~standard`, so any of them
 * (or a hand-written object) can check a route's start body. Flat names, not the spec's namespace,
 * because this codebase has no namespaces; the shapes are the spec's, structurally identical.
 */

/** A validator, as the spec names it: input and output types ride on the optional `types`. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaProps<Input, Output>;
}

export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  /** The library's name (`zod`, `valibot`, …). */
  readonly vendor: string;
  /** Never throws for bad input: reports it as issues. May be async. */
  readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
  /** Types only; never present at run time. */
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
}

export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardSchemaIssue> };

export interface StandardSchemaIssue {
  readonly message: string;
  /** Keys from the root to the offending value; a segment may be wrapped as `{ key }`. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The type a validator produces (what the workflow sees as `requestPayload`). */
export type InferSchemaOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];

/** One issue as the 400 answer carries it: a JSON-safe path (symbols become their description). */
export interface ValidationIssue {
  path: Array<string | number>;
  message: string;
}

/** Flattens a spec issue to JSON: `{ key }` segments unwrapped, symbols named. */
export function toValidationIssue(issue: StandardSchemaIssue): ValidationIssue {
  const path = (issue.path ?? []).map((segment) => {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    return typeof key === 'symbol' ? (key.description ?? String(key)) : key;
  });
  return { path, message: String(issue.message) };
}

/** True for a value shaped like a Standard Schema v1 validator (checked once, at `serve()`). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return (
    typeof props === 'object' &&
    props !== null &&
    (props as StandardSchemaProps).version === 1 &&
    typeof (props as StandardSchemaProps).validate === 'function'
  );
}
