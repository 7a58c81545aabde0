#!/usr/bin/env node
// Entry point: loads the TypeScript sources through tsx (no build step), then runs the CLI.
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../src/cli/main.ts');
await run(process.argv.slice(2));
