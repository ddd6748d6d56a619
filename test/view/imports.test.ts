import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// The view model is shared by a Node CLI, an Ink app and a browser bundle: it may import only the
// two contracts (api/, protocol/) and itself, never node:*, React, Preact or the runner.
const VIEW = resolve(dirname(fileURLToPath(import.meta.url)), '../../view');

const ROOT = resolve(VIEW, '..');

it('view/ imports only api/, protocol/ and view/ itself', () => {
  // Subfolders included (view/step-kinds/): every relative import must land in one of the three.
  const imports = (readdirSync(VIEW, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) =>
      [...readFileSync(join(VIEW, file), 'utf8').matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)].map((m) => ({
        edge: `${file} -> ${m[1]}`,
        target: resolve(VIEW, dirname(file), m[1]!),
      })),
    );
  expect(imports.length).toBeGreaterThan(0);
  const inside = (target: string): boolean =>
    ['view', 'api', 'protocol'].some((dir) => target.startsWith(join(ROOT, dir) + '/'));
  expect(
    imports.filter(({ edge, target }) => !/ -> \.\.?\/[\w/.-]+\.js$/.test(edge) || !inside(target)).map((i) => i.edge),
  ).toEqual([]);
});
