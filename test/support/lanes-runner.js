// Jest's runner for `make test`: two lanes, side by side, each running its
// files one at a time in a worker of its own.
//
// - The shared lane: every integration file on the shared clusters (mgmt,
//   edge-1, edge-2). One at a time, as before: a file may stop a cluster's
//   port, count a cluster's requests in its audit log, or load it with 1,000
//   syncs, and no other file's work may land in its windows.
// - The own lane: files that start clusters of their own (a first line
//   `// Lane: own clusters`) and the unit tests, which touch no cluster.
//
// Integration files mostly wait (on watches, backoffs, API servers starting),
// so the own lane runs in the shared lane's idle time. A run of one file, or
// `--runInBand`, runs in band as jest does by default.
import jestRunner from 'jest-runner';
import { closeSync, openSync, readSync } from 'node:fs';

/** @typedef {import('jest-runner').Test} Test */
/** @typedef {import('jest-runner').TestWatcher} TestWatcher */
/** @typedef {import('jest-runner').TestRunnerOptions} TestRunnerOptions */
/** @typedef {import('jest-runner').TestRunnerContext} TestRunnerContext */
/** @typedef {import('jest-runner').Config.GlobalConfig} GlobalConfig */
/** @typedef {import('jest-runner').TestEvents} TestEvents */

// jest-runner is CommonJS: its class is the default export's `default`.
const TestRunner = /** @type {typeof import('jest-runner').default} */ (/** @type {{ default?: unknown }} */ (jestRunner).default ?? jestRunner);
export const OWN_CLUSTERS_MARK = /^\/\/ Lane: own clusters\b/m;

/**
 * Whether a test file goes to the own lane: a unit test, or an integration file marked as using only clusters of its own.
 * @param {string} testPath
 */
export function ownLane(testPath) {
  if (/[/\\]test[/\\]unit[/\\]/.test(testPath)) return true;
  const fd = openSync(testPath, 'r');
  try {
    const head = Buffer.alloc(2048);
    const n = readSync(fd, head, 0, head.length, 0);
    return OWN_CLUSTERS_MARK.test(head.subarray(0, n).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

export default class LanesRunner {
  supportsEventEmitters = true;

  /**
   * @param {GlobalConfig} globalConfig
   * @param {TestRunnerContext} context
   */
  constructor(globalConfig, context) {
    // One worker per lane: each lane is serial within itself.
    const lane = () => new TestRunner({ ...globalConfig, maxWorkers: 1 }, context);
    this.shared = lane();
    this.own = lane();
  }

  /**
   * @param {Test[]} tests
   * @param {TestWatcher} watcher
   * @param {TestRunnerOptions} options
   */
  async runTests(tests, watcher, options) {
    if (options.serial) return this.shared.runTests(tests, watcher, options);
    const own = tests.filter((t) => ownLane(t.path));
    const shared = tests.filter((t) => !own.includes(t));
    await Promise.all([
      this.shared.runTests(shared, watcher, { ...options, serial: false }),
      this.own.runTests(own, watcher, { ...options, serial: false }),
    ]);
  }

  /**
   * @template {keyof TestEvents} Name
   * @param {Name} eventName
   * @param {(event: TestEvents[Name]) => void | Promise<void>} listener
   */
  on(eventName, listener) {
    const offs = [this.shared, this.own].map((lane) => lane.on(eventName, listener));
    return () => offs.forEach((off) => off());
  }
}
