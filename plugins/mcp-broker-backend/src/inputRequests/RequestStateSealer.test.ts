import { ConfigReader } from '@backstage/config';
import {
  canonicalJson,
  RequestStateBinding,
  RequestStateRefusal,
  RequestStateSealer,
} from './RequestStateSealer';
import { MemoryRequestStateNonceStore } from './requestStateNonces';
import { fixedHmacKeys, readRequestStateSecret } from './requestStateKey';

const KEY = Buffer.alloc(32, 7);
const TTL = 600_000;
const BINDING: RequestStateBinding = {
  principal: 'user:default/alice',
  method: 'tools/call',
  name: 'example_confirm',
  arguments: { question: 'Deploy?', options: { force: false, targets: ['a', 'b'] } },
};

function sealer(overrides: { key?: Buffer; now?: () => number } = {}) {
  return new RequestStateSealer({
    keys: fixedHmacKeys(overrides.key ?? KEY),
    ttlMs: TTL,
    nonces: new MemoryRequestStateNonceStore(overrides.now),
    now: overrides.now,
  });
}

async function refusalOf(promise: Promise<unknown>): Promise<RequestStateRefusal> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RequestStateRefusal) return error;
    throw error;
  }
  throw new Error('the state was accepted');
}

describe('RequestStateSealer', () => {
  it('gives back what it sealed, with the backend state byte for byte, once', async () => {
    const states = sealer();
    const backendRequestState = 'eyJ4Ijoi8J+agCJ9.\u00e9 "quoted" \\ 😀';
    const token = states.seal(BINDING, {
      callId: 'call-1',
      backend: 'example',
      backendRequestState,
    });
    const opened = await states.open(token, BINDING);
    expect(opened).toEqual({
      callId: 'call-1',
      backend: 'example',
      backendRequestState,
      expiresAt: expect.any(Number),
    });
    expect((await refusalOf(states.open(token, BINDING))).reason).toBe('replayed');
  });

  it('binds the arguments by their canonical JSON, not by key order', async () => {
    const states = sealer();
    const token = states.seal(BINDING);
    const reordered = { options: { targets: ['a', 'b'], force: false }, question: 'Deploy?' };
    await expect(states.open(token, { ...BINDING, arguments: reordered })).resolves.toBeDefined();
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: undefined }] })).toBe('{"a":[{"d":2}],"b":1}');
  });

  it('refuses a tampered state and one sealed under another key', async () => {
    const states = sealer();
    const token = states.seal(BINDING);
    const [version, body, mac] = token.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...payload, p: 'user:default/mallory' })).toString(
      'base64url',
    );
    expect((await refusalOf(states.open(`${version}.${forged}.${mac}`, BINDING))).reason).toBe(
      'tampered',
    );
    const flipped = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await refusalOf(states.open(flipped, BINDING))).reason).toBe('tampered');
    const other = sealer({ key: Buffer.alloc(32, 8) }).seal(BINDING);
    expect((await refusalOf(states.open(other, BINDING))).reason).toBe('tampered');
  });

  it('refuses what is not a state at all', async () => {
    const states = sealer();
    for (const junk of ['', 'abc', 'v2.a.b', 'v1.a.b.c', 'x'.repeat(300_000)]) {
      expect((await refusalOf(states.open(junk, BINDING))).reason).toBe('malformed');
    }
  });

  it('refuses an expired state', async () => {
    let now = 1_800_000_000_000;
    const states = sealer({ now: () => now });
    const token = states.seal(BINDING);
    now += TTL;
    expect((await refusalOf(states.open(token, BINDING))).reason).toBe('expired');
  });

  it('refuses a state presented by another principal, for another tool or other arguments, without using it up', async () => {
    const states = sealer();
    const token = states.seal(BINDING);
    const foreign: Array<[Partial<RequestStateBinding>, string]> = [
      [{ principal: 'user:default/bob' }, 'foreign-principal'],
      [{ name: 'example_echo' }, 'foreign-request'],
      [{ method: 'prompts/get' }, 'foreign-request'],
      [{ endpoint: 'triage' }, 'foreign-endpoint'],
      [{ arguments: { question: 'Delete?' } }, 'foreign-arguments'],
      [{ arguments: undefined }, 'foreign-arguments'],
    ];
    for (const [change, reason] of foreign) {
      const refusal = await refusalOf(states.open(token, { ...BINDING, ...change }));
      expect(refusal.reason).toBe(reason);
      expect(refusal.toModernError()).toMatchObject({ httpStatus: 400, code: -32602 });
      expect(refusal.message).toMatch(/^Invalid requestState: .*start over$/);
    }
    // The rightful owner can still use it.
    await expect(states.open(token, BINDING)).resolves.toBeDefined();
  });

  it('opens a state only on the curated endpoint it was issued on', async () => {
    const states = sealer();
    const token = states.seal({ ...BINDING, endpoint: 'triage' });
    for (const endpoint of [undefined, 'ops']) {
      const refusal = await refusalOf(states.open(token, { ...BINDING, endpoint }));
      expect(refusal.reason).toBe('foreign-endpoint');
      expect(refusal.message).toMatch(/issued on another MCP endpoint/);
    }
    await expect(states.open(token, { ...BINDING, endpoint: 'triage' })).resolves.toBeDefined();
  });

  it('treats absent arguments like {} and makes every state unique', async () => {
    const states = sealer();
    const binding = { ...BINDING, arguments: undefined };
    const first = states.seal(binding);
    const second = states.seal(binding);
    expect(first).not.toBe(second);
    await expect(states.open(first, { ...binding, arguments: {} })).resolves.toBeDefined();
  });

  it('refuses keys that are too short', () => {
    expect(() => sealer({ key: Buffer.alloc(16) })).toThrow(/32 bytes/);
  });
});

describe('requestState key', () => {
  it('reads mcpBroker.requestStateSecret and refuses a short one naming the key', () => {
    const secret = 'a-secret-of-at-least-thirty-two-bytes!';
    expect(
      readRequestStateSecret(new ConfigReader({ mcpBroker: { requestStateSecret: secret } })),
    ).toEqual(Buffer.from(secret));
    expect(readRequestStateSecret(new ConfigReader({}))).toBeUndefined();
    expect(() =>
      readRequestStateSecret(new ConfigReader({ mcpBroker: { requestStateSecret: 'short' } })),
    ).toThrow(/mcpBroker\.requestStateSecret must be at least 32 bytes/);
  });

  it('opens a state sealed with a previous key of the ring, and refuses one of a key gone from it', async () => {
    const previous = Buffer.alloc(32, 1);
    const sealedBefore = sealer({ key: previous }).seal(BINDING);
    const rotated = (opening: Buffer[]) =>
      new RequestStateSealer({
        keys: { sealingKey: () => KEY, openingKeys: () => opening },
        ttlMs: TTL,
        nonces: new MemoryRequestStateNonceStore(),
      });
    await expect(rotated([KEY, previous]).open(sealedBefore, BINDING)).resolves.toBeDefined();
    // A state sealed after the rotation uses the new key: the old one alone does not open it.
    const sealedAfter = rotated([KEY, previous]).seal(BINDING);
    expect((await refusalOf(sealer({ key: previous }).open(sealedAfter, BINDING))).reason).toBe(
      'tampered',
    );
    expect((await refusalOf(rotated([KEY]).open(sealedBefore, BINDING))).reason).toBe('tampered');
  });
});
