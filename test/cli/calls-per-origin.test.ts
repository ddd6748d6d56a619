import { describe, expect, it } from 'vitest';
import { makeStartCommand } from '../../cli/commands/start.js';
import type { CliIO } from '../../cli/lib/io.js';
import { startProductionRunner } from '../../cli/lib/production-runner.js';
import { isFull } from '../../runner-core/egress/slots.js';

const io: CliIO = { out: () => {}, err: () => {}, env: {}, cwd: '.', interrupted: () => new Promise(() => {}) };

describe('wf start --calls-per-origin', () => {
  it('takes a positive whole number and refuses anything else', () => {
    const command = makeStartCommand(io)
      .exitOverride()
      .configureOutput({ writeErr: () => {} });
    command.action(() => {});
    command.parse(['--calls-per-origin', '4'], { from: 'user' });
    expect(command.opts().callsPerOrigin).toBe(4);
    const bad = makeStartCommand(io)
      .exitOverride()
      .configureOutput({ writeErr: () => {} });
    expect(() => bad.parse(['--calls-per-origin', '0'], { from: 'user' })).toThrow();
  });

  it("reaches the runner's egress gate: the share per call target's origin", async () => {
    const started = await startProductionRunner({
      database: ':memory:',
      cwd: '.',
      host: '127.0.0.1',
      port: 0,
      tokens: ['t'],
      allowedOrigins: ['http://127.0.0.1:*'],
      callsPerOrigin: 1,
    });
    try {
      const target = new URL('https://api.example/v1');
      expect(isFull(started.runner.egress.acquire(target, 'call'))).toBe(false);
      expect(isFull(started.runner.egress.acquire(target, 'call'))).toBe(true);
    } finally {
      await started.close(0);
    }
  });
});
