// A Jest reporter that prints one line per test block skipped for something missing (test/support/requires.ts):
// what was skipped, what it needs and how to enable it. Jest itself counts those tests as skipped.
import process from 'node:process';

const MARK = '[skipped: ';

export default class SkipReporter {
  /**
   * @param {unknown} _contexts
   * @param {import('@jest/test-result').AggregatedResult} results
   */
  onRunComplete(_contexts, results) {
    /** @type {Set<string>} */
    const lines = new Set();
    for (const file of results.testResults) {
      /** @type {Map<string, number>} */
      const counts = new Map();
      for (const test of file.testResults) {
        if (test.status !== 'pending') continue;
        const block = test.ancestorTitles.find((title) => title.includes(MARK));
        if (block) counts.set(block, (counts.get(block) ?? 0) + 1);
      }
      const relative = file.testFilePath.slice(process.cwd().length + 1);
      for (const [block, count] of counts) {
        const at = block.indexOf(MARK);
        const what = block.slice(0, at).trim();
        const why = block.slice(at + MARK.length, block.endsWith(']') ? -1 : undefined);
        lines.add(`SKIPPED ${relative} › ${what} (${count} test${count === 1 ? '' : 's'}): ${why}`);
      }
    }
    if (lines.size > 0) process.stderr.write(`\n${[...lines].join('\n')}\n`);
  }
}
