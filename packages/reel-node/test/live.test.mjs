// reel-node against the real @google/genai SDK: Live sessions through `reel serve`.
//
// reel's `cargo test` runs this file three times (tests/it/sdk_test_helpers.rs): in `once`
// mode through a stand-in API, which records each test's tape; then with CI=true and no
// reachable API, which replays them; then with a changed prompt, which must fail on the
// tape (except for the test whose own server ignores the prompt's text). The environment says what each run expects: REEL_EXPECT (`recorded` or
// `replayed`), REEL_PROMPT (the user's text), SDK_NODE_PREFIX (where @google/genai is
// installed: ESM ignores NODE_PATH), REEL_BIN, REEL_TAPES, REEL_UPSTREAM.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { modeOf, startReel, tapeName } from '../index.mjs';

const prefix = process.env.SDK_NODE_PREFIX;
const sdkDir = join(prefix ?? 'node_modules/..', 'node_modules', '@google', 'genai');
const sdkPackage = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8'));
const { GoogleGenAI, Modality } = await import(
  pathToFileURL(join(sdkDir, sdkPackage.exports['.'].node.import)).href
);

const MODEL = 'gemini-live-2.5-flash';
const PROMPT = process.env.REEL_PROMPT ?? "What's the weather in Paris?";
const EXPECT = process.env.REEL_EXPECT ?? 'replayed';

/** Opens a Live session, sends the prompt, resolves to the model's text for the turn. */
function oneTurn(ai) {
  return new Promise((resolve, reject) => {
    let text = '';
    let session;
    const timer = setTimeout(() => reject(new Error('no turn complete in 30 s')), 30_000);
    const fail = (why) => {
      clearTimeout(timer);
      reject(new Error(why));
    };
    ai.live
      .connect({
        model: MODEL,
        config: { responseModalities: [Modality.TEXT] },
        callbacks: {
          onmessage: (message) => {
            text += message.text ?? '';
            if (message.serverContent?.turnComplete) {
              clearTimeout(timer);
              session.close();
              resolve(text);
            }
          },
          onerror: (event) => fail(`socket error: ${event.message ?? event}`),
          onclose: (event) => {
            if (event.code !== 1000) fail(`closed ${event.code}: ${event.reason}`);
          },
        },
      })
      .then((opened) => {
        session = opened;
        session.sendClientContent({
          turns: [{ role: 'user', parts: [{ text: PROMPT }] }],
          turnComplete: true,
        });
      }, reject);
  });
}

/** Runs `body`; when it fails and the server saw a mismatch, fails with the mismatch. */
async function onTape(reel, name, body) {
  try {
    return await body();
  } catch (error) {
    await reel.waitForReports(name, 1);
    reel.checkMatched(name);
    throw error;
  }
}

describe('names and modes', () => {
  test('a test of the same name in two files gets two tapes', () => {
    const test = { fullName: 'weather > paris' };
    assert.equal(tapeName(test, 'test/one.test.mjs'), 'one.weather.paris');
    assert.equal(tapeName(test, pathToFileURL('/p/test/two.spec.js').href), 'two.weather.paris');
    assert.equal(tapeName({ ...test, filePath: '/p/test/three.test.mjs' }), 'three.weather.paris');
  });

  test("vcrpy's record modes are reel's modes", () => {
    assert.deepEqual(
      ['none', 'once', 'new_episodes', 'all'].map((m) => modeOf(undefined, m)),
      ['replay', 'once', 'auto', 'record'],
    );
    assert.throws(() => modeOf(undefined, 'sometimes'), {
      message: "reel-node: recordMode 'sometimes' is not one of none, once, new_episodes, all",
    });
  });
});

describe('live', () => {
  let reel;
  before(async () => {
    reel = await startReel();
  });
  after(async () => {
    assert.equal(await reel.stop(), 0);
  });

  test('a text turn', async (t) => {
    const name = tapeName(t, import.meta.url);
    assert.equal(name, 'live.live.a_text_turn');
    const ai = new GoogleGenAI(reel.genaiOptions(name));
    assert.equal(await onTape(reel, name, () => oneTurn(ai)), 'Sunny in Paris.');
    const [report] = await reel.waitForReports(name, 1);
    assert.equal(report.outcome, EXPECT, JSON.stringify(report));
  });

  test('live and generateContent', async (t) => {
    const name = tapeName(t, import.meta.url);
    const ai = new GoogleGenAI(reel.genaiOptions(name));
    assert.equal(await oneTurn(ai), 'Sunny in Paris.');
    const summary = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'Summarize the weather in one sentence.',
    });
    assert.equal(summary.text, 'It is sunny.');
    const reports = await reel.waitForReports(name, 2);
    assert.deepEqual(reports.map((r) => r.outcome).sort(), [EXPECT, `rest_${EXPECT}`].sort());
  });

  test('two sessions in one test', async (t) => {
    const name = tapeName(t, import.meta.url);
    const ai = new GoogleGenAI(reel.genaiOptions(name));
    assert.equal(await oneTurn(ai), 'Sunny in Paris.');
    assert.equal(await oneTurn(ai), 'Sunny in Paris.');
    const reports = await reel.waitForReports(name, 2);
    assert.deepEqual(
      reports.map((r) => r.outcome),
      [EXPECT, EXPECT],
    );
    if (EXPECT === 'recorded') {
      assert.deepEqual(reports.map((r) => basename(r.recording)).sort(), [
        'live.live.two_sessions_in_one_test.2.wire.jsonl',
        'live.live.two_sessions_in_one_test.wire.jsonl',
      ]);
    }
  });

  test('its own options ignore the prompt', async (t) => {
    const name = tapeName(t, import.meta.url);
    const rules = fileURLToPath(new URL('rules/any_prompt.json', import.meta.url));
    const loose = await reel.withOptions({ match: 'loose', rules });
    assert.equal(await oneTurn(new GoogleGenAI(loose.genaiOptions(name))), 'Sunny in Paris.');
    const [report] = await loose.waitForReports(name, 1);
    assert.equal(report.outcome, EXPECT, JSON.stringify(report));
  });

  test('its own options redact the prompt', async (t) => {
    const name = tapeName(t, import.meta.url);
    const file = (rel) => fileURLToPath(new URL(rel, import.meta.url));
    const redacting = await reel.withOptions({
      redact: file('rules/hide_prompt.json'),
      rules: file('rules/any_prompt.json'),
    });
    assert.equal(await oneTurn(new GoogleGenAI(redacting.genaiOptions(name))), 'Sunny in Paris.');
    const [report] = await redacting.waitForReports(name, 1);
    assert.equal(report.outcome, EXPECT, JSON.stringify(report));
  });

  test("its own options in vcrpy's words", async () => {
    const replayOnly = await reel.withOptions({ recordMode: 'none' });
    assert.equal(replayOnly.mode, 'replay');
  });
});
