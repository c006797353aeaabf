/**
 * Setup file of the cdk project: after each test file, the App outdirs it made outside a test
 * are removed (cdk-test-app.ts), so a run leaves nothing in the temp dir.
 */
import { afterAll } from 'vitest';
import { removeAppOutdirs } from './cdk-test-app.ts';

afterAll(removeAppOutdirs);
