import { defineEnvVars } from "@sveltejs/kit/env";

/** Optional: unset is fine (wfkit falls back to its defaults). */
const optional = (value: string | undefined): string | undefined => value;

// SvelteKit 3 exposes only declared variables, through `$app/env/private`.
export const variables = defineEnvVars({
  WF_TOKEN: {},
  WF_RUNNER_URL: { schema: optional },
  WF_WORKFLOW_URL: { schema: optional },
  ENVIRONMENT: { schema: optional },
});
