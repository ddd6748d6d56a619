import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@upstash/workflow';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';
import { closeStarted, startTestRunner, waitForFinish, waitForRun, type TestRunner } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * `wf logs`, `wf notify` and `wf cancel` (the CLI, in process, over HTTP) on runs of a real
 * @upstash/workflow app: they are runs like any other.
 */

let apps: UpstashApp[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function wf(runner: TestRunner, args: string[]): Promise<string[]> {
  const out: string[] = [];
  const cwd = mkdtempSync(join(tmpdir(), 'wf-qstash-cli-'));
  dirs.push(cwd);
  const io: CliIO = {
    out: (line) => void out.push(line),
    err: (line) => void out.push(line),
    env: {},
    cwd,
    interrupted: () => new Promise(() => {}),
  };
  await createProgram(io)
    .exitOverride()
    .parseAsync([...args, '--runner', runner.url, '--token', runner.token], { from: 'user' });
  return out;
}

const approval = {
  route: async (context: any) => {
    await context.run('prepare', async () => 'prepared');
    const { eventData } = await context.waitForEvent('approval', `approve-${context.workflowRunId}`, { timeout: 3600 });
    return await context.run('finish', async () => ({ approvedBy: (eventData as { by: string }).by }));
  },
};

async function parkedRun(): Promise<{ runner: TestRunner; runId: string }> {
  const runner = await startTestRunner();
  const app = await startUpstashApp(runner, { approval });
  apps.push(app);
  const env = upstashEnv(runner);
  const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
  const { workflowRunId } = await client.trigger({ url: `${app.url}/approval`, body: {} });
  for (let i = 0; i < 400 && (await runner.store.listSteps(workflowRunId)).length < 2; i++)
    await new Promise((r) => setTimeout(r, 25));
  return { runner, runId: workflowRunId };
}

describe('wf on Upstash-protocol runs', () => {
  it('wf notify resumes the waiting run and wf logs shows its steps', async () => {
    const { runner, runId } = await parkedRun();
    const notified = await wf(runner, ['notify', `approve-${runId}`, '--data', '{"by":"ops"}']);
    expect(notified.join('\n')).toContain(runId);
    const { run } = await waitForFinish(runner.runner, runId);
    expect(run.status).toBe('completed');
    const logs = (await wf(runner, ['logs', runId])).join('\n');
    for (const name of ['prepare', 'approval', 'finish']) expect(logs).toContain(name);
    expect(logs).toContain('completed');
  });

  it('wf logs --follow prints the run as it goes and ends when it finishes', async () => {
    const { runner, runId } = await parkedRun();
    const following = wf(runner, ['logs', runId, '--follow']);
    // Whether the end arrives in the history or live, the follow must print it and stop.
    await runner.runner.notify(`approve-${runId}`, { by: 'follow' });
    const out = (await following).join('\n');
    expect(out).toContain('finish');
    expect(out).toContain('completed');
  });

  it('wf cancel cancels it, and nothing is delivered to it after', async () => {
    const { runner, runId } = await parkedRun();
    expect(await wf(runner, ['cancel', runId])).toEqual([`${runId} cancelled`]);
    await waitForRun(runner.store, runId, (run) => run.status === 'cancelled');
    // The wait of a cancelled run takes no event, and its step rows stay as the cancel left them.
    const before = await runner.store.listSteps(runId);
    expect((await runner.runner.notify(`approve-${runId}`, { by: 'late' })).delivered).toEqual([]);
    expect(await runner.store.listSteps(runId)).toEqual(before);
  });
});
