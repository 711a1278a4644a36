// reel-node: `reel serve` for Node's test runner and vitest.
//
//   import { startReel, tapeName } from 'reel-node';
//   const reel = await startReel({ tapes: 'test/tapes' });        // once per file or suite
//   const ai = new GoogleGenAI(reel.genaiOptions(tapeName(t)));    // per test
//   ...
//   await reel.stop();
//
// The server replays the test's tape (<tapes>/<test>.wire.jsonl); with an upstream it records
// a test that has no tape yet (`once`), except in CI, where it only replays.

import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** The header a client names its test with. */
export const TEST_HEADER = 'x-reel-test';

/** How long `reel serve` has to print its ready line, in milliseconds. */
export const READY_TIMEOUT_MS = 30_000;

/**
 * The tape name of a test: node:test's `t.fullName` (or vitest's `task` names) with suites
 * joined by `.`, made a file name the way the server does (ASCII letters, digits, `.`,
 * `_` and `-` kept, anything else `_`).
 *
 * @param {string | { fullName?: string, name: string }} test a name, or a test context
 * @returns {string}
 */
export function tapeName(test) {
  const full = typeof test === 'string' ? test : (test.fullName ?? test.name);
  return full
    .split(' > ')
    .join('.')
    .replace(/[^A-Za-z0-9._-]/g, '_');
}

/** A running `reel serve --json`. */
export class Reel {
  /** @param {import('node:child_process').ChildProcess} child */
  constructor(child) {
    this.child = child;
    /** The ready line: URLs, mode, certificate. */
    this.ready = null;
    /** Every connection report, in the order connections ended. */
    this.reports = [];
    /** What the server printed on standard error. */
    this.stderr = [];
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    this.waiters = [];
  }

  /** The base URL to give @google/genai (`http://127.0.0.1:PORT`). */
  get baseUrl() {
    return this.ready.http_base_url;
  }

  /** The mode the server runs in, after CI had its say. */
  get mode() {
    return this.ready.mode;
  }

  /**
   * Options for `new GoogleGenAI(...)`: the server's base URL and the test's name in the
   * `x-reel-test` header. The key is a placeholder: the server never forwards or records a
   * client's key (a recording proxy presents its own).
   *
   * @param {string} name the test's tape name (see `tapeName`)
   */
  genaiOptions(name, { apiKey = 'reel-test-key', headers = {} } = {}) {
    return {
      apiKey,
      httpOptions: { baseUrl: this.baseUrl, headers: { ...headers, [TEST_HEADER]: name } },
    };
  }

  /** The reports of test `name`'s connections so far. */
  reportsOf(name) {
    return this.reports.filter((report) => report.test === name);
  }

  /**
   * Throws unless every session of test `name` reported so far ran to the end of its tape:
   * a session the server reports `incomplete` (the client closed or dropped before the
   * recorded client had sent everything) fails the test, unless `allowIncomplete` says that
   * is expected. Call it at the end of a test (after `waitForReports`), or in `afterEach`.
   *
   * @param {string} name the test's tape name (see `tapeName`)
   * @param {{ allowIncomplete?: boolean }} [options]
   */
  checkComplete(name, { allowIncomplete = false } = {}) {
    if (allowIncomplete) return;
    const early = this.reportsOf(name).filter((report) => report.outcome === 'incomplete');
    if (early.length > 0) {
      throw new Error(
        `reel-node: the Live session of test ${name} ended before its tape did ` +
          `(pass { allowIncomplete: true } if that is expected):\n` +
          early.map((report) => `  ${report.message}`).join('\n'),
      );
    }
  }

  /** The reports of sessions that ended before their tape did, of every test. */
  incompleteReports() {
    return this.reports.filter((report) => report.outcome === 'incomplete');
  }

  /** Waits until test `name` has `count` reports (or `timeoutMs` passes); returns them. */
  async waitForReports(name, count = 1, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    while (this.reportsOf(name).length < count && Date.now() < deadline) {
      await new Promise((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.reportsOf(name);
  }

  /** SIGTERM (open recordings are finished first); resolves to the exit code. */
  async stop() {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
    }
    return this.exited;
  }
}

/**
 * Starts `reel serve --json` on a free loopback port and resolves once it is ready.
 *
 * @param {object} options
 * @param {string} [options.bin] the reel binary (default: $REEL_BIN, else `reel`)
 * @param {string} [options.tapes] the tapes directory (default: $REEL_TAPES, else `test/tapes`)
 * @param {string} [options.upstream] the API to record through (default: $REEL_UPSTREAM)
 * @param {string} [options.mode] replay, once, auto, record or passthrough (default:
 *   replay; once with an upstream)
 * @param {boolean} [options.allowRecord] with CI set, let once and auto record
 * @param {string[]} [options.args] more `reel serve` arguments
 * @returns {Promise<Reel>}
 */
export async function startReel(options = {}) {
  const bin = options.bin ?? process.env.REEL_BIN ?? 'reel';
  const tapes = options.tapes ?? process.env.REEL_TAPES ?? 'test/tapes';
  const upstream = options.upstream ?? process.env.REEL_UPSTREAM;
  const mode = options.mode ?? (upstream ? 'once' : 'replay');
  const args = ['serve', '--json', '--mode', mode, '--port', '0'];
  if (mode !== 'passthrough') {
    mkdirSync(tapes, { recursive: true });
    args.push('--tapes', tapes);
  }
  if (upstream) args.push('--upstream', upstream);
  if (options.allowRecord) args.push('--allow-record');
  args.push(...(options.args ?? []));

  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const reel = new Reel(child);
  createInterface({ input: child.stderr }).on('line', (line) => reel.stderr.push(line));
  const ready = new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`cannot run ${bin}: ${error.message}`)));
    child.once('exit', (code) =>
      reject(new Error(`\`${bin} ${args.join(' ')}\` exited with ${code}: ${reel.stderr.join('\n')}`)),
    );
    createInterface({ input: child.stdout }).on('line', (line) => {
      let event;
      try {
        event = JSON.parse(line);
      } catch {
        return;
      }
      if (event.event === 'ready') resolve(event);
      if (event.event === 'connection') {
        reel.reports.push(event);
        for (const wake of reel.waiters.splice(0)) wake();
      }
    });
  });
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`\`${bin} ${args.join(' ')}\` printed no ready line in ${READY_TIMEOUT_MS} ms`));
    }, READY_TIMEOUT_MS);
  });
  try {
    reel.ready = await Promise.race([ready, timeout]);
  } finally {
    clearTimeout(timer);
  }
  return reel;
}
