import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { serve as cloudflareServe } from '../../serve/adapters/cloudflare.js';
import { serve as h3Serve } from '../../serve/adapters/h3.js';
import { serve as honoServe } from '../../serve/adapters/hono.js';
import { serve as nextServe } from '../../serve/adapters/nextjs.js';
import { serve as nodeServe } from '../../serve/adapters/node.js';
import { serve as solidServe } from '../../serve/adapters/solidjs.js';
import { serve as svelteServe } from '../../serve/adapters/svelte.js';
import { createHandler } from '../../serve/core/handler.js';
import {
  isStandardSchema,
  toValidationIssue,
  type InferSchemaOutput,
  type StandardSchemaV1,
} from '../../serve/core/schema.js';
import { serve, type WorkflowContext } from '../../serve/index.js';

const signup = z.object({ email: z.string(), age: z.coerce.number() });
type Signup = { email: string; age: number };

describe('schema typing', () => {
  it('infers requestPayload from a zod or valibot schema on every adapter', () => {
    // Each call also type-checks (tsc runs over test/): a wrong property access would not compile.
    const seen: unknown[] = [];
    const check = (context: { requestPayload: Signup }) => seen.push(context.requestPayload.email);
    const handlers = [
      serve(async (context) => void expectTypeOf(context.requestPayload).toEqualTypeOf<Signup>(), { schema: signup }),
      honoServe(async (context) => void check(context), { schema: signup }),
      nextServe(async (context) => void check(context), { schema: signup }),
      nodeServe(async (context) => void check(context), { schema: signup }),
      h3Serve(async (context) => void check(context), { schema: signup }),
      svelteServe(async (context) => void check(context), { schema: signup }),
      solidServe(async (context) => void check(context), { schema: signup }),
      cloudflareServe(async (context) => void check(context), { schema: signup }),
      serve(
        async (context) => void expectTypeOf(context.requestPayload).toEqualTypeOf<{ sku: string; qty: number }>(),
        { schema: v.object({ sku: v.string(), qty: v.pipe(v.string(), v.transform(Number)) }) },
      ),
    ];
    expect(handlers.every((h) => typeof h === 'function' || typeof h === 'object')).toBe(true);
    expectTypeOf<InferSchemaOutput<typeof signup>>().toEqualTypeOf<Signup>();
    // Without a schema the payload stays what the caller names (or unknown).
    serve<{ text: string }>(
      async (context) =>
        void expectTypeOf(context).toEqualTypeOf<WorkflowContext<{ text: string }, Record<string, unknown>>>(),
    );
    serve(async (context) => void expectTypeOf(context.requestPayload).toBeUnknown());
    // @ts-expect-error a schema whose output contradicts the named payload type
    serve<{ text: string }>(async () => {}, { schema: signup });
  });
});

describe('schema helpers', () => {
  it('recognizes Standard Schema v1 validators and nothing else', () => {
    expect(isStandardSchema(signup)).toBe(true);
    expect(isStandardSchema(v.string())).toBe(true);
    expect(isStandardSchema({ '~standard': { version: 2, validate: () => ({ value: 1 }) } })).toBe(false);
    expect(isStandardSchema({ parse: () => 1 })).toBe(false);
    expect(isStandardSchema(null)).toBe(false);
  });

  it('flattens issue paths to JSON: { key } segments unwrapped, symbols named, none is the root', () => {
    expect(toValidationIssue({ message: 'm', path: ['a', { key: 0 }, Symbol('s')] })).toEqual({
      path: ['a', 0, 's'],
      message: 'm',
    });
    expect(toValidationIssue({ message: 'root' })).toEqual({ path: [], message: 'root' });
  });

  it('refuses a schema option that is not a Standard Schema, when the route is built', () => {
    const notASchema = { parse: (x: unknown) => x } as unknown as StandardSchemaV1;
    expect(() => createHandler(async () => {}, { schema: notASchema })).toThrow(
      /Expected `schema` to be a Standard Schema v1 validator/,
    );
  });
});
