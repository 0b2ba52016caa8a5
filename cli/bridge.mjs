#!/usr/bin/env node
// The `bridge` bin: registers tsx so the TypeScript sources run as they are, then runs the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./main.ts');
await main();
