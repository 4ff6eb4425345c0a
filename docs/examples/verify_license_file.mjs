// Checks a Tollgate offline license file (Keygen's format) with no network, `node:crypto` only.
// Usage: node verify_license_file.mjs PUBLIC_KEY_HEX LICENSE_KEY license.lic
// PUBLIC_KEY_HEX: `public_key_hex` of GET /v1/license-keys/signing (Node 16+).
import { createDecipheriv, createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';

function verifyLicenseFile(publicKeyHex, licenseKey, text) {
  const armour = text.replace(/-----(BEGIN|END) LICENSE FILE-----/g, '').replace(/\s+/g, '');
  const { enc, sig, alg } = JSON.parse(Buffer.from(armour, 'base64').toString('utf8'));
  const x = Buffer.from(publicKeyHex, 'hex').toString('base64url');
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  if (!verify(null, Buffer.from(`license/${enc}`), publicKey, Buffer.from(sig, 'base64'))) {
    throw new Error("the signature does not match: an altered file, or another seller's key");
  }
  let data;
  if (alg === 'aes-256-gcm+ed25519') {
    const [ciphertext, iv, tag] = enc.split('.').map((part) => Buffer.from(part, 'base64'));
    const secret = createHash('sha256').update(licenseKey).digest();
    const decipher = createDecipheriv('aes-256-gcm', secret, iv).setAuthTag(tag);
    try {
      data = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch {
      throw new Error('cannot decrypt: the file is for another license key');
    }
  } else if (alg === 'base64+ed25519') {
    data = Buffer.from(enc, 'base64');
  } else {
    throw new Error(`unsupported algorithm ${alg}`);
  }
  const license = JSON.parse(data.toString('utf8'));
  if (license.data.attributes.key !== licenseKey) throw new Error('the file is for another license key');
  if (new Date(license.meta.expiry) < new Date()) {
    throw new Error(`the file expired at ${license.meta.expiry}; fetch a new one`);
  }
  return license;
}

const [publicKeyHex, licenseKey, path] = process.argv.slice(2);
try {
  console.log(JSON.stringify(verifyLicenseFile(publicKeyHex, licenseKey, readFileSync(path, 'utf8')), null, 2));
} catch (e) {
  console.error(`license file refused: ${e.message}`);
  process.exit(1);
}
