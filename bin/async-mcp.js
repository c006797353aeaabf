#!/usr/bin/env node
// The `async-mcp` bin: runs the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

register();
await import('../client/cli.ts');
