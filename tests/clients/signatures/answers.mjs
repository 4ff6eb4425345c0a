// Signed license-key answers checked by an implementation that shares no code with
// Tollgate: the `http-message-signatures` npm package verifies the RFC 9421 signature
// (ed25519, with `;req` components bound to the request) with keys from the organization's
// JWKS (`node:crypto`), `structured-headers` reads the RFC 9530 Content-Digest, checked here
// against the body, and the nonce this client sent must be the one signed.
//
// It asks a running Tollgate for answers with `fetch`, verifies them, and prints one JSON
// line per case: {"case", "verdict": "accepted" | "refused", "reason", "kid", "status"}.
// The test (tests/api/signature_clients.rs) decides which verdict each case must get.
//
// Environment: TOLLGATE_URL, TOLLGATE_ORG, TOLLGATE_KEY, TOLLGATE_TOKEN and
// TOLLGATE_OLD_ANSWER, as for answers.py.

import { createHash, createPublicKey, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createVerifier, httpbis } from 'http-message-signatures';
import { parseDictionary } from 'structured-headers';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const URL_ = env('TOLLGATE_URL');
const ORG = env('TOLLGATE_ORG');
const KEY = env('TOLLGATE_KEY');
const TOKEN = env('TOLLGATE_TOKEN');
const OLD_ANSWER = env('TOLLGATE_OLD_ANSWER');

const VALIDATE = `${URL_}/v1/customer-portal/license-keys/validate`;
// What a client needs covered before it trusts an answer.
const REQUIRED = ['@status', 'content-digest', '@method', '@path'];
const MAX_AGE = 300;
const TIMEOUT = 10_000;

class Refused extends Error {}

/** Public keys by `kid`, from a JWKS (RFC 8037 OKP / Ed25519 keys only). */
function keyring(keys) {
  const byKid = new Map();
  for (const jwk of keys) {
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') continue;
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
    byKid.set(jwk.kid, createVerifier(key, 'ed25519'));
  }
  return byKid;
}

async function jwks() {
  const r = await fetch(`${URL_}/v1/customer-portal/license-keys/jwks?organization_id=${ORG}`, {
    signal: AbortSignal.timeout(TIMEOUT),
  });
  if (!r.ok) throw new Error(`JWKS: ${r.status}`);
  return (await r.json()).keys;
}

/**
 * Verifies `answer` ({request, status, headers, body}) against `keys`; returns the signed
 * parameters or throws `Refused`.
 */
async function verify(answer, nonce, keys, maxAge = MAX_AGE) {
  let params = null;
  let verified;
  try {
    verified = await httpbis.verifyMessage(
      {
        keyLookup: async (p) => {
          params = p;
          const verify = keys.get(p.keyid);
          return verify ? { id: p.keyid, algs: ['ed25519'], verify } : null;
        },
        maxAge,
        requiredFields: REQUIRED,
        requiredParams: ['created', 'keyid', 'alg'],
      },
      { status: answer.status, headers: answer.headers },
      answer.request,
    );
  } catch (e) {
    throw new Refused(`${e.name}: ${e.message}`);
  }
  if (verified === null) {
    throw new Refused(params ? `unknown key ${JSON.stringify(params.keyid)}` : 'the answer is not signed');
  }
  if (verified !== true) throw new Refused('the signature does not match');
  // The signature covers the Content-Digest field; the field must match the body.
  const digests = parseDictionary(answer.headers['content-digest']);
  const sha = digests.get('sha-256')?.[0];
  if (!(sha instanceof ArrayBuffer)) throw new Refused('no sha-256 Content-Digest');
  const actual = createHash('sha256').update(answer.body).digest();
  if (sha.byteLength !== actual.length || !timingSafeEqual(Buffer.from(sha), actual)) {
    throw new Refused('Content-Digest does not match the body');
  }
  if (params.nonce !== nonce) {
    throw new Refused(`nonce ${JSON.stringify(params.nonce)} is not the one sent (${JSON.stringify(nonce)})`);
  }
  return params;
}

/** A live validation, asking for a signature bound to `nonce` when given. */
async function validate(key = KEY, nonce = null) {
  const headers = { 'content-type': 'application/json' };
  if (nonce !== null) {
    headers['accept-signature'] = `sig1=("@status" "content-digest" "@method";req "@path";req);nonce="${nonce}"`;
  }
  const request = { method: 'POST', url: VALIDATE, headers };
  const r = await fetch(VALIDATE, {
    method: 'POST',
    headers,
    body: JSON.stringify({ key, organization_id: ORG }),
    signal: AbortSignal.timeout(TIMEOUT),
  });
  const body = Buffer.from(await r.arrayBuffer());
  return { request, status: r.status, headers: Object.fromEntries(r.headers.entries()), body };
}

/** An answer the test captured (with its request and nonce). */
function captured(path) {
  const c = JSON.parse(readFileSync(path, 'utf8'));
  const headers = Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return [
    {
      request: { method: c.method, url: c.url, headers: c.request_headers },
      status: c.status,
      headers,
      body: Buffer.from(c.body, 'utf8'),
    },
    c.nonce,
  ];
}

/** A copy of `answer` as a man in the middle would alter it. */
function tampered(answer, { body, status, digest = false, request } = {}) {
  const copy = { ...answer, headers: { ...answer.headers } };
  if (body !== undefined) {
    copy.body = body;
    if (digest) {
      copy.headers['content-digest'] = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
    }
  }
  if (status !== undefined) copy.status = status;
  if (request !== undefined) copy.request = request;
  return copy;
}

const nonce = () => randomBytes(16).toString('base64url');
let errors = 0;

async function check(name, run) {
  const line = { case: name };
  try {
    const params = await run();
    Object.assign(line, { verdict: 'accepted', reason: '', kid: params.keyid, status: params.status });
  } catch (e) {
    if (e instanceof Refused) {
      Object.assign(line, { verdict: 'refused', reason: e.message });
    } else {
      errors += 1;
      Object.assign(line, { verdict: 'error', reason: `${e.name}: ${e.message}` });
    }
  }
  console.log(JSON.stringify(line));
}

/** The verified parameters, with the status the signature covers. */
const verifyAnswer = async (answer, n, keys, maxAge) => ({
  ...(await verify(answer, n, keys, maxAge)),
  status: answer.status,
});

function expect(condition, what) {
  if (!condition) throw new Error(what);
}

const everyKey = keyring(await jwks());

const nonceA = nonce();
const answerA = await validate(KEY, nonceA);
expect(answerA.status === 200, `validate: ${answerA.status} ${answerA.body}`);
expect(JSON.parse(answerA.body).status === 'granted', `validate: ${answerA.body}`);
await check('fresh', () => verifyAnswer(answerA, nonceA, everyKey));

const grown = Buffer.from(answerA.body.toString().replace('"limit_activations":3', '"limit_activations":9'));
expect(!grown.equals(answerA.body), `no limit in ${answerA.body}`);
await check('tampered_body', () => verifyAnswer(tampered(answerA, { body: grown }), nonceA, everyKey));
await check('tampered_body_and_digest', () =>
  verifyAnswer(tampered(answerA, { body: grown, digest: true }), nonceA, everyKey),
);

// A second request with its own nonce, answered by a replay of the first answer.
const nonceB = nonce();
const answerB = await validate(KEY, nonceB);
expect(answerB.status === 200, `validate: ${answerB.status}`);
await check('wrong_nonce', () =>
  verifyAnswer(tampered(answerA, { request: answerB.request }), nonceB, everyKey),
);

await check('unsigned', async () => verifyAnswer(await validate(KEY), null, everyKey));

// A refusal is signed too, and cannot be turned into a success.
const nonceC = nonce();
const refusal = await validate('TG-NOT-A-KEY', nonceC);
expect(refusal.status === 404, `unknown key: ${refusal.status}`);
await check('signed_refusal', () => verifyAnswer(refusal, nonceC, everyKey));
await check('refusal_status_changed', () => verifyAnswer(tampered(refusal, { status: 200 }), nonceC, everyKey));

const [old, oldNonce] = captured(OLD_ANSWER);
await check('old_answer', () => verifyAnswer(old, oldNonce, everyKey));
// The library's "no limit": an age far beyond the answer's.
await check('old_answer_without_age_limit', () => verifyAnswer(old, oldNonce, everyKey, 10 * 365 * 86400));

// Rotation: the seller's new key signs from now on; the old one stays in the JWKS.
const r = await fetch(`${URL_}/v1/license-keys/signing/rotate`, {
  method: 'POST',
  headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  body: JSON.stringify({ organization_id: ORG }),
  signal: AbortSignal.timeout(TIMEOUT),
});
const signing = await r.json();
expect(r.status === 200, `rotate: ${r.status} ${JSON.stringify(signing)}`);
const rotated = await jwks();
expect(rotated[0].kid === signing.keys[0].kid, `JWKS ${JSON.stringify(rotated)}`);
const pinned = keyring(rotated.slice(0, 1));
await check('rotated_key_old_answer', () => verifyAnswer(answerA, nonceA, pinned));
await check('retired_key_kept', () => verifyAnswer(answerA, nonceA, keyring(rotated)));
const nonceD = nonce();
const answerD = await validate(KEY, nonceD);
await check('rotated_key_new_answer', () => verifyAnswer(answerD, nonceD, pinned));

process.exit(errors ? 1 : 0);
