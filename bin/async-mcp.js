#!/usr/bin/env node
// The `async-mcp` bin. From the installed package it runs the compiled CLI (dist/cli.js); in a
// clone, which has the TypeScript sources and no build, it runs them through tsx's loader.
import { existsSync } from 'node:fs';

const source = new URL('../client/cli.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli.js');
}
