#!/usr/bin/env node
// Launcher for the `svc` client: registers tsx so the TypeScript sources run as-is.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
