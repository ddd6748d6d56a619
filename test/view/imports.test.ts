import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// The view model is shared by a Node CLI, an Ink app and a browser bundle: it may import only the
// two contracts (api/, protocol/) and itself, never node:*, React, Preact or the runner.
const VIEW = resolve(dirname(fileURLToPath(import.meta.url)), '../../view');

it('view/ imports only api/, protocol/ and view/ itself', () => {
  const imports = readdirSync(VIEW)
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => [...readFileSync(join(VIEW, file), 'utf8').matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)].map((m) => `${file} -> ${m[1]}`));
  expect(imports.length).toBeGreaterThan(0);
  expect(imports.filter((edge) => !/ -> (\.\.\/(api|protocol)\/|\.\/)[\w-]+\.js$/.test(edge))).toEqual([]);
});
