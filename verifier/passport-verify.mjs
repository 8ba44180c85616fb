#!/usr/bin/env node
// The installed command: registers tsx (a dependency) and runs the TypeScript CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
await main(process.argv.slice(2));
