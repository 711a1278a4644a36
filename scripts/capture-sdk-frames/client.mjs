// Drive the official JS SDK (`@google/genai`) through Live sessions against the
// local capture server (server.py), so that the server records the frames the
// SDK really sends.
//
// Usage: node client.mjs PORT
//   SDK_NODE_PREFIX   the `npm install --prefix` folder holding @google/genai
//
// The SDK turns an http:// base URL into ws://, so the server runs without TLS.
//
// Session 1 (automatic activity detection on):
//   setup (every config field the SDK offers that the Google AI API takes) ->
//   clientContent text turn -> tool call -> toolResponse (WHEN_IDLE) ->
//   context update -> realtime text -> realtime audio (2 chunks), deprecated
//   media chunk, video frame -> audioStreamEnd -> audio answer.
// Session 2 (automatic activity detection off, resuming with the handle from 1):
//   activityStart -> audio -> activityEnd -> audio answer.
//
// Every wait is bounded; the script exits non-zero if the SDK did not see the
// server's scripted answers.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';

const API_KEY = 'test-key-not-real';
const MODEL = 'gemini-live-2.5-flash-native-audio';
const RECV_TIMEOUT_MS = 10_000;

// Load the SDK from the install prefix (ESM ignores NODE_PATH), using the
// entry point its package.json declares for Node's `import`.
const prefix = process.env.SDK_NODE_PREFIX;
if (!prefix) throw new Error('SDK_NODE_PREFIX is not set');
const pkgDir = join(prefix, 'node_modules', '@google', 'genai');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const genai = await import(pathToFileURL(join(pkgDir, pkg.exports['.'].node.import)).href);
const { GoogleGenAI, Modality, Type } = genai;

/** genai.<name>.<member> if this SDK version has it, else the plain string. */
const en = (name, member) => genai[name]?.[member] ?? member;

/** Deterministic PCM16LE mono sine tone. */
function pcmTone(rate = 16000, ms = 100, freq = 440) {
  const n = (rate * ms) / 1000;
  const buf = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    buf.writeInt16LE(Math.trunc(8000 * Math.sin((2 * Math.PI * freq * i) / rate)), i * 2);
  }
  return buf;
}

const PCM = pcmTone(); // 100 ms at 16 kHz = 3200 bytes
const AUDIO_MIME = 'audio/pcm;rate=16000';
// Not a real picture: just the JPEG start/end markers, enough for a wire fixture.
const JPEG_STUB = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
const b64 = (buf) => buf.toString('base64');

/** A queue of server messages fed by the SDK's onmessage callback. */
class Inbox {
  constructor() {
    this.items = [];
    this.waiters = [];
    this.closed = null;
  }
  push(msg) {
    const w = this.waiters.shift();
    if (w) w.resolve(msg);
    else this.items.push(msg);
  }
  close(why) {
    this.closed = why;
    for (const w of this.waiters.splice(0)) w.reject(new Error(`socket closed: ${why}`));
  }
  next() {
    if (this.items.length) return Promise.resolve(this.items.shift());
    if (this.closed) return Promise.reject(new Error(`socket closed: ${this.closed}`));
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }
  /** Collect messages until done(msg), within RECV_TIMEOUT_MS. */
  async until(done, what) {
    const got = [];
    const deadline = Date.now() + RECV_TIMEOUT_MS;
    while (true) {
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)),
          Math.max(0, deadline - Date.now()));
      });
      const msg = await Promise.race([this.next(), timeout]).finally(() => clearTimeout(timer));
      console.log('[js]   ->', JSON.stringify(msg));
      got.push(msg);
      if (done(msg)) return got;
    }
  }
}

async function connect(ai, config) {
  const inbox = new Inbox();
  const session = await ai.live.connect({
    model: MODEL,
    config,
    callbacks: {
      onmessage: (msg) => inbox.push(msg),
      onerror: (e) => inbox.close(`error ${e?.message ?? e}`),
      onclose: (e) => inbox.close(`close ${e?.code} ${e?.reason ?? ''}`),
    },
  });
  return { session, inbox };
}

const turnComplete = (m) => Boolean(m.serverContent?.turnComplete);
const textOf = (msgs) =>
  msgs.flatMap((m) => m.serverContent?.modelTurn?.parts ?? []).map((p) => p.text ?? '').join('');

function session1Config() {
  const config = {
    responseModalities: [Modality.AUDIO],
    temperature: 0.7,
    maxOutputTokens: 1024,
    mediaResolution: en('MediaResolution', 'MEDIA_RESOLUTION_LOW'),
    speechConfig: {
      voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } },
      languageCode: 'en-US',
    },
    thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 },
    enableAffectiveDialog: true,
    systemInstruction: { parts: [{ text: 'You are a helpful assistant.' }] },
    tools: [{
      functionDeclarations: [{
        name: 'get_weather',
        description: 'Get the current weather for a city.',
        parameters: {
          type: Type.OBJECT,
          properties: { city: { type: Type.STRING, description: 'City name' } },
          required: ['city'],
        },
        behavior: en('Behavior', 'NON_BLOCKING'),
      }],
    }],
    inputAudioTranscription: {},
    outputAudioTranscription: {},
    realtimeInputConfig: {
      automaticActivityDetection: {
        disabled: false,
        startOfSpeechSensitivity: en('StartSensitivity', 'START_SENSITIVITY_LOW'),
        endOfSpeechSensitivity: en('EndSensitivity', 'END_SENSITIVITY_LOW'),
        prefixPaddingMs: 20,
        silenceDurationMs: 500,
      },
      activityHandling: en('ActivityHandling', 'START_OF_ACTIVITY_INTERRUPTS'),
      turnCoverage: en('TurnCoverage', 'TURN_INCLUDES_ONLY_ACTIVITY'),
    },
    sessionResumption: {},
    contextWindowCompression: {
      triggerTokens: 25600,
      slidingWindow: { targetTokens: 12800 },
    },
    proactivity: { proactiveAudio: true },
  };
  return config;
}

function checkAudioTurn(got) {
  const audio = got
    .flatMap((m) => m.serverContent?.modelTurn?.parts ?? [])
    .filter((p) => p.inlineData)
    .map((p) => Buffer.from(p.inlineData.data, 'base64'));
  assert.equal(Buffer.concat(audio).length, 480);
  assert.ok(got.some((m) => m.serverContent?.inputTranscription?.text));
  assert.ok(got.some((m) => m.serverContent?.outputTranscription?.text === 'It is sunny.'));
  assert.ok(got.some((m) => m.serverContent?.generationComplete));
  assert.equal(got.at(-1).usageMetadata.responseTokensDetails[0].modality, 'AUDIO');
}

async function session1(ai) {
  const { session, inbox } = await connect(ai, session1Config());
  console.log('[js] session 1 open');

  session.sendClientContent({
    turns: [{ role: 'user', parts: [{ text: "What's the weather in London?" }] }],
    turnComplete: true,
  });
  let got = await inbox.until((m) => m.toolCall, 'toolCall');
  const call = got.at(-1).toolCall.functionCalls[0];
  assert.deepEqual([call.id, call.name, call.args], ['call-1', 'get_weather', { city: 'London' }]);
  assert.equal(textOf(got), 'Let me check the weather.');

  session.sendToolResponse({
    functionResponses: [{
      id: call.id,
      name: call.name,
      response: { temp_c: 21 },
      willContinue: false,
      scheduling: en('FunctionResponseScheduling', 'WHEN_IDLE'),
    }],
  });
  got = await inbox.until((m) => m.sessionResumptionUpdate, 'resumption update');
  assert.ok(got.some((m) => m.usageMetadata?.totalTokenCount === 21));
  const handle = got.at(-1).sessionResumptionUpdate.newHandle;

  if (typeof session.sendContextUpdate === 'function') {
    session.sendContextUpdate({ systemInstruction: 'Answer briefly.' });
  } else {
    console.log('[js] this SDK has no sendContextUpdate');
  }

  session.sendRealtimeInput({ text: 'Hello from realtime text.' });
  got = await inbox.until(turnComplete, 'text reply');
  assert.equal(textOf(got), 'Got your text.');

  const half = PCM.length / 2;
  session.sendRealtimeInput({ audio: { data: b64(PCM.subarray(0, half)), mimeType: AUDIO_MIME } });
  session.sendRealtimeInput({ audio: { data: b64(PCM.subarray(half)), mimeType: AUDIO_MIME } });
  // `media` is the older spelling (wire: mediaChunks), still accepted by the SDK.
  session.sendRealtimeInput({ media: { data: b64(PCM.subarray(0, 320)), mimeType: AUDIO_MIME } });
  session.sendRealtimeInput({ video: { data: b64(JPEG_STUB), mimeType: 'image/jpeg' } });
  session.sendRealtimeInput({ audioStreamEnd: true });
  got = await inbox.until(turnComplete, 'audio reply');
  checkAudioTurn(got);
  session.close();
  return handle;
}

async function session2(ai, handle) {
  const { session, inbox } = await connect(ai, {
    responseModalities: [Modality.AUDIO],
    realtimeInputConfig: { automaticActivityDetection: { disabled: true } },
    sessionResumption: { handle },
  });
  console.log('[js] session 2 open (manual activity signals)');
  session.sendRealtimeInput({ activityStart: {} });
  session.sendRealtimeInput({ audio: { data: b64(PCM), mimeType: AUDIO_MIME } });
  session.sendRealtimeInput({ activityEnd: {} });
  const got = await inbox.until(turnComplete, 'audio reply');
  checkAudioTurn(got);
  session.close();
}

const port = Number(process.argv[2]);
const ai = new GoogleGenAI({
  apiKey: API_KEY,
  httpOptions: { baseUrl: `http://127.0.0.1:${port}` },
});
// The SDK's connect() never settles if the WebSocket handshake fails, so an
// overall timer guarantees the script ends.
const overall = setTimeout(() => {
  console.error('[js] overall timeout');
  process.exit(2);
}, 45_000);
try {
  const handle = await session1(ai);
  await session2(ai, handle);
  console.log('[js] OK');
} catch (e) {
  console.error('[js] FAILED:', e);
  process.exitCode = 1;
} finally {
  clearTimeout(overall);
}
