"""Checks a Tollgate offline license file (Keygen's format) with no network.
Usage: python verify_license_file.py PUBLIC_KEY_HEX LICENSE_KEY license.lic
PUBLIC_KEY_HEX: `public_key_hex` of GET /v1/license-keys/signing. Needs `cryptography`."""
import base64, hashlib, json, sys
from datetime import datetime, timezone
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def verify_license_file(public_key_hex, license_key, text):
    armour = text.replace("-----BEGIN LICENSE FILE-----", "").replace("-----END LICENSE FILE-----", "")
    doc = json.loads(base64.b64decode("".join(armour.split())))
    enc, alg = doc["enc"], doc["alg"]
    try:
        public_key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex))
        public_key.verify(base64.b64decode(doc["sig"]), f"license/{enc}".encode())
    except InvalidSignature:
        raise ValueError("the signature does not match: an altered file, or another seller's key")
    if alg == "aes-256-gcm+ed25519":
        ciphertext, iv, tag = (base64.b64decode(part) for part in enc.split("."))
        try:
            data = AESGCM(hashlib.sha256(license_key.encode()).digest()).decrypt(iv, ciphertext + tag, None)
        except InvalidTag:
            raise ValueError("cannot decrypt: the file is for another license key")
    elif alg == "base64+ed25519":
        data = base64.b64decode(enc)
    else:
        raise ValueError(f"unsupported algorithm {alg}")
    license = json.loads(data)
    if license["data"]["attributes"]["key"] != license_key:
        raise ValueError("the file is for another license key")
    if datetime.fromisoformat(license["meta"]["expiry"].replace("Z", "+00:00")) < datetime.now(timezone.utc):
        raise ValueError(f"the file expired at {license['meta']['expiry']}; fetch a new one")
    return license


if __name__ == "__main__":
    try:
        with open(sys.argv[3]) as f:
            license = verify_license_file(sys.argv[1], sys.argv[2], f.read())
    except Exception as e:
        sys.exit(f"license file refused: {e}")
    print(json.dumps(license, indent=2))
