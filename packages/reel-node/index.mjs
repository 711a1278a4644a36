// reel-node: `reel serve` for Node's test runner and vitest.
//
//   import { startReel, tapeName } from 'reel-node';
//   const reel = await startReel({ file: import.meta.url });      // once per file or suite
//   const ai = new GoogleGenAI(reel.genaiOptions(tapeName(t, import.meta.url))); // per test
//   const loose = await reel.withOptions({ match: 'loose', rules: 'rules.json' }); // one test's
//   ...
//   await reel.stop();
//
// The server replays the test's tape (<tapes>/<file>.<suite>.<test>.wire.jsonl); with an upstream it records
// a test that has no tape yet (`once`), except in CI, where it only replays.

import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The header a client names its test with. */
export const TEST_HEADER = 'x-reel-test';

/** How long `reel serve` has to print its ready line, in milliseconds. */
export const READY_TIMEOUT_MS = 30_000;

/** reel serve's modes. */
export const MODES = ['replay', 'once', 'auto', 'record', 'passthrough'];

/** vcrpy's, pytest-recording's and Polly.js-style record modes, as reel serve's modes. */
export const RECORD_MODES = { none: 'replay', once: 'once', new_episodes: 'auto', all: 'record' };

/**
 * The reel serve mode of `mode` (reel's name) or `recordMode` (vcrpy's name); throws on an
 * unknown name or on both.
 *
 * @param {string | undefined} mode
 * @param {string | undefined} recordMode
 * @returns {string | undefined}
 */
export function modeOf(mode, recordMode) {
  if (mode !== undefined && recordMode !== undefined) {
    throw new Error(`reel-node: both mode '${mode}' and recordMode '${recordMode}' given; give one`);
  }
  if (recordMode !== undefined) {
    if (!Object.hasOwn(RECORD_MODES, recordMode)) {
      throw new Error(
        `reel-node: recordMode '${recordMode}' is not one of ${Object.keys(RECORD_MODES).join(', ')}`,
      );
    }
    return RECORD_MODES[recordMode];
  }
  if (mode !== undefined && !MODES.includes(mode)) {
    throw new Error(`reel-node: mode '${mode}' is not one of ${MODES.join(', ')}`);
  }
  return mode;
}

/** A path, from a path or a `file:` URL. */
function toPath(file) {
  return file.startsWith('file:') ? fileURLToPath(file) : file;
}

/**
 * The test file's name without its directory, extension and `.test`/`.spec`
 * (`test/live.test.mjs` -> `live`), from a path or a `file:` URL.
 *
 * @param {string} file
 * @returns {string}
 */
export function fileStem(file) {
  return basename(toPath(file))
    .replace(/\.[^.]*$/, '')
    .replace(/\.(test|spec)$/, '');
}

/**
 * The tape name of a test: its file's stem (see `fileStem`: node:test's `t.filePath`,
 * vitest's `task.file`), then node:test's `t.fullName` (or vitest's task names) with suites
 * joined by `.`, made a file name the way the server does (ASCII letters, digits, `.`, `_`
 * and `-` kept, anything else `_`). Two tests of the same name in two files get two tapes:
 * `live.test.mjs`'s `live > a text turn` is `live.live.a_text_turn`.
 *
 * @param {string | { fullName?: string, name: string, filePath?: string,
 *   file?: { filepath?: string, name?: string } }} test a name, or a test context
 * @param {string} [file] the test file (a path or `import.meta.url`), when the context
 *   does not know it
 * @returns {string}
 */
export function tapeName(test, file) {
  const full = typeof test === 'string' ? test : (test.fullName ?? test.name);
  const from =
    file ??
    (typeof test === 'string' ? undefined : (test.filePath ?? test.file?.filepath ?? test.file?.name));
  const named = from === undefined ? full : `${fileStem(from)} > ${full}`;
  return named
    .split(' > ')
    .join('.')
    .replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * A few lines naming the test, its tape, the first mismatch's JSON path and both values,
 * from the server's report of a `diverged`, `no_tape` or `rest_no_match` connection.
 *
 * @param {string} name the test's tape name
 * @param {object} report the server's JSON report
 * @returns {string}
 */
export function mismatchMessage(name, report) {
  const value = (v) => (v === null || v === undefined ? '(nothing)' : JSON.stringify(v));
  const lines = (where, mismatch) => {
    if (!mismatch) return [`  ${where}`];
    const at = mismatch.path ? ` at ${mismatch.path}` : ' (past the end of the tape)';
    return [
      `  ${where}${at}`,
      `  expected: ${value(mismatch.expected)}`,
      `  actual:   ${value(mismatch.actual)}`,
    ];
  };
  if (report.outcome === 'diverged') {
    const m = report.first_mismatch ?? {};
    const frame = `client frame ${m.frame}` + (m.seq ? ` (tape seq ${m.seq})` : '');
    return [`reel-node: test ${name} did not match its tape ${report.tape}`, ...lines(frame, m)].join('\n');
  }
  const closest = report.closest;
  const head =
    report.outcome === 'no_tape'
      ? `reel-node: test ${name} has no tape whose setup matches`
      : `reel-node: test ${name}'s ${report.method} call to ${report.model} matches no recorded call`;
  if (!closest) return `${head} (and nothing to compare with)`;
  const where =
    report.outcome === 'no_tape'
      ? `closest: ${closest.tape}`
      : `closest: ${closest.cassette} call ${closest.call}`;
  return [head, ...lines(where, closest.first_mismatch)].join('\n');
}

/** The outcomes that say a test's traffic did not match its tapes. */
export const MISMATCH_OUTCOMES = ['diverged', 'no_tape', 'rest_no_match'];

/** A running `reel serve --json`. */
export class Reel {
  /** @param {import('node:child_process').ChildProcess} child */
  constructor(child, options = {}) {
    this.child = child;
    /** The options it was started with (see `startReel`). */
    this.options = options;
    /** Servers started by `withOptions`, by their options. */
    this.others = new Map();
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

  /**
   * A server with this one's options changed by `overrides` (`mode`, `recordMode`, `match`,
   * `rules`, `redact`, `tapes`, `args`): one test's options. Started on first use, kept for
   * the next test that asks for the same, stopped by this server's `stop()`.
   *
   * @param {object} overrides
   * @returns {Promise<Reel>}
   */
  async withOptions(overrides) {
    const options = { ...this.options, ...overrides };
    if (overrides.recordMode !== undefined) delete options.mode;
    if (overrides.mode !== undefined) delete options.recordMode;
    const key = JSON.stringify(Object.entries(options).sort());
    let other = this.others.get(key);
    if (other === undefined) {
      other = startReel(options);
      this.others.set(key, other);
    }
    return other;
  }

  /**
   * Throws a few lines naming the first mismatch (tape, frame, JSON path, expected and
   * actual value) when a connection of test `name` did not match its tapes. Call it when a
   * test fails (`catch`), or after `waitForReports`.
   *
   * @param {string} name the test's tape name (see `tapeName`)
   */
  checkMatched(name) {
    const report = this.reportsOf(name).find((r) => MISMATCH_OUTCOMES.includes(r.outcome));
    if (report !== undefined) throw new Error(mismatchMessage(name, report));
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

  /**
   * SIGTERM (open recordings are finished first), to this server and those `withOptions`
   * started; resolves to this server's exit code (an other's non-zero code throws).
   */
  async stop() {
    for (const started of this.others.values()) {
      const other = await started.catch(() => null);
      if (other === null) continue;
      const code = await other.stop();
      if (code !== 0) throw new Error(`reel-node: a server of other options exited with ${code}`);
    }
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
 * @param {string} [options.file] the test file (`import.meta.url`): tapes are then found
 *   relative to its directory, wherever node runs from
 * @param {string} [options.tapes] the tapes directory (default: $REEL_TAPES, else `tapes`
 *   beside `file`, else `test/tapes`; relative to `file`'s directory when it is given)
 * @param {string} [options.upstream] the API to record through (default: $REEL_UPSTREAM)
 * @param {string} [options.mode] replay, once, auto, record or passthrough (default:
 *   replay; once with an upstream)
 * @param {string} [options.recordMode] vcrpy's names for the mode: none (replay), once,
 *   new_episodes (auto), all (record)
 * @param {string} [options.match] strict, or loose (audio/video bytes and the rules'
 *   fields ignored)
 * @param {string} [options.rules] a JSON file of loose-matching rules (implies loose)
 * @param {string} [options.redact] a JSON file of redaction rules applied to what is recorded
 * @param {boolean} [options.allowRecord] with CI set, let once and auto record
 * @param {string[]} [options.args] more `reel serve` arguments
 * @returns {Promise<Reel>}
 */
export async function startReel(options = {}) {
  const bin = options.bin ?? process.env.REEL_BIN ?? 'reel';
  // Beside the test file when it is named, so the directory node runs from does not matter.
  const near = options.file === undefined ? '.' : dirname(toPath(options.file));
  const tapes = resolve(near, options.tapes ?? process.env.REEL_TAPES ?? (options.file ? 'tapes' : 'test/tapes'));
  const upstream = options.upstream ?? process.env.REEL_UPSTREAM;
  const mode = modeOf(options.mode, options.recordMode) ?? (upstream ? 'once' : 'replay');
  const args = ['serve', '--json', '--mode', mode, '--port', '0'];
  if (mode !== 'passthrough') {
    mkdirSync(tapes, { recursive: true });
    args.push('--tapes', tapes);
  }
  // reel serve refuses an upstream in replay mode (one test may ask for replay in a run that
  // records).
  if (upstream && mode !== 'replay') args.push('--upstream', upstream);
  if (options.allowRecord) args.push('--allow-record');
  if (options.match) args.push('--match', options.match);
  if (options.rules) args.push('--rules', options.rules);
  // Redaction applies to what is recorded; reel serve refuses it in replay mode.
  if (options.redact && mode !== 'replay') args.push('--redact', options.redact);
  args.push(...(options.args ?? []));

  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const reel = new Reel(child, options);
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
