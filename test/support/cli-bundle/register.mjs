// `node --import <this> client/cli.ts`: the CLI from the run's bundle (build.ts), entered as its source file.
import { register } from 'node:module';

register('./serve-bundle.mjs', import.meta.url);
