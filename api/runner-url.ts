/** Where the runner listens unless told otherwise (0x77 0x66 = "wf"): the one place this is said. */
export const DEFAULT_RUNNER_URL = 'http://127.0.0.1:7766';
