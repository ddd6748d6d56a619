// The workflows the bench drives. Each is a plain function of the serve() context.

/** n no-op steps: `await context.run('s'+i, () => i)`. */
export const noop = (n) => async (context) => {
  for (let i = 0; i < n; i++) await context.run('s' + i, () => i);
};

/** noop(n) that also tells `mark` when the workflow function starts and returns. */
export const traced = (n, mark) => async (context) => {
  mark('app: workflow starts');
  await noop(n)(context);
  mark('app: workflow returned');
};

/** n steps returning a 20-character string each (small outputs that still show in the bytes). */
export const smallOutputs = (n) => async (context) => {
  for (let i = 0; i < n; i++) await context.run('s' + i, () => `out-${i}`.padEnd(20, '.'));
};

/** A gate steps can wait on; `release()` opens it for every waiter, `waiting` counts them. */
export function createGate() {
  let open;
  const opened = new Promise((resolve) => (open = resolve));
  const gate = {
    waiting: 0,
    released: false,
    wait: () => {
      gate.waiting++;
      return opened.then(() => 'released');
    },
    release: () => {
      gate.released = true;
      open();
    },
  };
  return gate;
}

/** One step that holds until the gate opens, then one quick step. */
export const held = (gate) => async (context) => {
  await context.run('hold', () => gate.wait());
  await context.run('after', () => 1);
};
