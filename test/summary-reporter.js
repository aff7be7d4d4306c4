import process from 'node:process';

/**
 * One plain closing line, "Tests: N passed, N failed, N skipped", that CI systems read in any language
 * (jest's own summary says "N passed, N total").
 */
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    process.stdout.write(
      `\nTests: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped\n`,
    );
  }
}
