export * from './headers.js';
export * from './errors.js';
export * from './messages.js';
export * from './outcome.js';
export * from './signing.js';
export * from './values.js';
export { MAX_JSON_DEPTH, assertJsonDepth, parseJson } from './validate.js';
export * from './display.js';
export * from './flow-control.js';
