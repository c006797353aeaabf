/**
 * async-mcp/testing: a project's tests run its tools on the local stack in their own process,
 * call them in any dialect, answer their questions, and read their progress and log lines.
 * It uses no test runner's API, so it works under any.
 */
export { startTestServer } from './test-server.ts';
export type { TestServer, TestServerOptions } from './test-server.ts';
export type { TestCallOptions, TestLogLine, TestRun } from './test-call.ts';
export { UnansweredQuestionError } from './test-answers.ts';
export type { TestAnswer, TestAnswers } from './test-answers.ts';
