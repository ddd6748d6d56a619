import { existsSync } from "node:fs";
import { solidStart } from "@solidjs/start/config";
import { defineConfig } from "vite";

// Server code reads WF_TOKEN and WF_RUNNER_URL from process.env; Vite loads .env only into
// import.meta.env, so load it here too (variables already set in the shell win).
if (existsSync(".env")) process.loadEnvFile(".env");

export default defineConfig({
  plugins: [solidStart()],
});
