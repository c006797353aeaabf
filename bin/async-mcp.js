#!/usr/bin/env node
// The `async-mcp` bin: a project's commands (init, start, validate-tools, new-tool), else the MCP
// client CLI. From the installed package it runs the compiled modules in dist/; in a clone, which
// has the TypeScript sources and no build, it runs the sources through tsx's loader.
import { existsSync } from 'node:fs';
import { register } from 'node:module';

const CLONE = existsSync(new URL('../client/cli.ts', import.meta.url));

/** The project's commands, each a module run for its effect, and what it needs to load a user's TypeScript. */
/**
 * The project's commands: each a module run for its effect, whether it loads the user's
 * TypeScript, and the module of ours that holds most of what it imports (see below).
 */
const PROJECT_COMMANDS = {
  init: { module: 'scripts/init-project', usersTypeScript: false },
  // start answers --help before it imports anything the preload or tsx would be for.
  start: { module: 'local/main', usersTypeScript: true, imports: 'local/local-stack', helpAlone: true },
  'validate-tools': { module: 'scripts/validate-tools', usersTypeScript: true, imports: 'lambdas/tools/tool-folder' },
  'new-tool': { module: 'scripts/new-tool', usersTypeScript: false },
};

/** The project commands' usage, worded as `bin` starts them (`async-mcp`, `npx async-mcp`), and where `docsPath` finds the docs. */
function projectUsage(bin, docsPath) {
  const commands = [
    ['init <folder>', 'a new project: tools, CDK app, tests'],
    [
      'start [--port N] [--data DIR] [--watch] [--as-deployed] [--oauth-dev] [--events-webhook URL]',
      'serve ./state-machines on the local stack (--help for all)',
    ],
    ['validate-tools [DIR]', 'check the tool folders offline (DIR: ./state-machines)'],
    ['new-tool <name> [--sync|--async|--both] [--worker] [--input] [--durable]', 'a new tool folder that runs as it is'],
  ];
  const lines = commands.map(([command, what]) => {
    const line = `  ${bin} ${command}`;
    return line.length < 40 ? `${line.padEnd(42)}${what}` : `${line}\n${' '.repeat(42)}${what}`;
  });
  const docs = [
    ['tools.md', 'write a tool'],
    ['clients.md', 'connect a client; this CLI'],
    ['deploy.md', 'deploy to AWS'],
  ].map(([page, what]) => `  ${docsPath(page).padEnd(40)}${what}`);
  return `Project commands (run in the project's folder):\n${lines.join('\n')}\nDocs:\n${docs.join('\n')}\n`;
}

const [name, ...rest] = process.argv.slice(2);
const command = PROJECT_COMMANDS[name];
if (command) {
  // The command's module reads its own arguments: it sees the ones after the command's name.
  process.argv.splice(2, 1);
  if (!CLONE) process.argv.push(...projectFolders(name, rest));
  if (CLONE) {
    await useTsx();
    await import(`../${command.module}.ts`);
  } else {
    // Module hooks run off the main thread on Node 20 and slow every import after them (npm
    // start took 18 s instead of 7): ours, which needs none, is loaded first.
    const usageOnly = command.helpAlone && rest.some((arg) => arg === '--help' || arg === '-h');
    if (command.imports && !usageOnly) await import(`../dist/${command.imports}.js`);
    if (command.usersTypeScript && !usageOnly) await useTsx();
    // Ours is compiled; where it names a module by its source file, the compiled one answers.
    register('./compiled-modules-hooks.mjs', import.meta.url);
    await import(`../dist/${command.module}.js`);
  }
} else {
  if (CLONE) await useTsx();
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const ours = (module) => import(CLONE ? `../client/${module}.ts` : `../dist/client/${module}.js`);
    const [{ cliCommand }, { docsPath }] = await Promise.all([ours('cli-command'), ours('help-paths')]);
    process.stdout.write(`${projectUsage(cliCommand(), docsPath)}\n`);
  }
  await import(CLONE ? '../client/cli.ts' : '../dist/client/cli.js');
}

/**
 * tsx's loader, for the TypeScript a project's tools are written in (durable.ts, workers) and,
 * in a clone, for ours. The installed package's own modules are JavaScript and pass through it.
 */
async function useTsx() {
  const tsx = await import('tsx/esm/api');
  tsx.register();
}

/**
 * The scripts default to this repository's folders; a project's are ./state-machines and
 * ./workers in the folder the command runs in. Flags given, and the environment, win.
 */
function projectFolders(command, args) {
  const has = (flag) => args.some((arg) => arg === flag || arg.startsWith(`${flag}=`));
  switch (command) {
    case 'start':
      process.env.ASYNC_MCP_WORKERS_DIR ??= 'workers';
      return [];
    case 'new-tool':
      return [...(has('--tools-dir') ? [] : ['--tools-dir', 'state-machines']), ...(has('--workers-dir') ? [] : ['--workers-dir', 'workers'])];
    case 'validate-tools': {
      // validate-tools [DIR] [--workers DIR]
      const dirs = args.filter((arg, index) => !arg.startsWith('-') && args[index - 1] !== '--workers');
      return [...(dirs.length > 0 ? [] : ['state-machines']), ...(has('--workers') ? [] : ['--workers', 'workers'])];
    }
    default:
      return [];
  }
}
