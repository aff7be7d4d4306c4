/**
 * Jest's node environment, plus a prompt exit for the worker process that runs it.
 *
 * Node's ESM loader keeps every module jest creates through `vm.SourceTextModule` (its `moduleRegistries` WeakMap stays
 * reachable through each module's dynamic-import callback), so a worker ends holding the module graphs of every test
 * file it ran: 700–900 MiB after the e2e files (a heap snapshot shows each file's top-level state retained that way).
 * When a worker's work is done its event loop is empty at once, but Node's orderly teardown of that much (disposing
 * the isolate, freeing every backing store) outlasts the 500 ms jest-worker grants before it kills the worker and
 * warns "A worker process has failed to exit gracefully". Exiting from the 'exit' event skips that teardown; nothing
 * is left to flush by then (jest has its results, stdout and stderr are synchronous pipes).
 */
import process from 'node:process';
import { TestEnvironment } from 'jest-environment-node';

const PROMPT_EXIT = Symbol.for('kapi.test.promptExit');
if (!process[PROMPT_EXIT]) {
  process[PROMPT_EXIT] = true;
  process.once('exit', (code) => process.exit(code));
}

export default TestEnvironment;
