"""Tollgate's offline license files checked by Keygen verifiers from PyPI that share no code
with Tollgate: `keygen-py` (a wrapper of the Rust `keygen-rs`; it loads encrypted files
only) and `keygen-sdk` (pure Python; both algorithms). Both work offline, with the
organization's ed25519 public key in hex.

Usage: license_files.py CASES.json, where CASES is a list of {"case", "path",
"public_key_hex", "license_key", "encrypted"}. Prints one JSON line per verifier and case:
{"verifier", "case", "verdict": "accepted" | "refused" | "error", "reason", "key", "expiry",
"entitlements"} (`key`: the license key the file states, once accepted; `entitlements`: the
Keygen entitlements the verifier read from it, `[{"code", "name", "metadata"}]`, where the
verifier exposes them: keygen-sdk does, keygen-py 0.2's dataset does not). The test
(tests/api/signature_clients.rs) decides which verdict each case must get.
"""

import json
import sys

from keygen import errors as sdk_errors
from keygen.files import LicenseFile as SdkLicenseFile
from keygen_sh.config import KeygenConfig, set_config
from keygen_sh.errors import KeygenError
from keygen_sh.license_file import LicenseFile as KpyLicenseFile


def keygen_py(case, text):
    """keygen-py: decrypts and checks the expiry on loading, then the signature."""
    if not case["encrypted"]:
        return None  # keygen-py refuses unencrypted files (LicenseFileNotEncrypted)
    set_config(
        KeygenConfig(
            # Unused offline; the config needs them.
            api_url="http://127.0.0.1:9",
            api_version="v1.7",
            api_prefix="v1",
            account="offline",
            product="offline",
            public_key=case["public_key_hex"],
        )
    )
    try:
        lf = KpyLicenseFile.build_from_cert(case["license_key"], text)
        lf.verify()
        dataset = lf.decrypt(case["license_key"])
    except KeygenError as e:
        return {"verdict": "refused", "reason": str(e)}
    outcome = {
        "verdict": "accepted",
        "key": dataset.license.key,
        "expiry": dataset.expiry.isoformat(),
    }
    if hasattr(dataset, "entitlements"):
        outcome["entitlements"] = [
            {"code": e.code, "name": e.name, "metadata": getattr(e, "metadata", None)}
            for e in dataset.entitlements
        ]
    return outcome


def keygen_sdk(case, text):
    """keygen-sdk: the signature first, then decryption (or decoding) and the expiry."""
    lf = SdkLicenseFile(certificate=text)
    try:
        lf.verify(public_key=case["public_key_hex"])
        dataset = lf.decrypt(case["license_key"]) if case["encrypted"] else lf.decode()
    except sdk_errors.KeygenError as e:
        return {"verdict": "refused", "reason": f"{type(e).__name__}: {e}"}
    return {
        "verdict": "accepted",
        "key": dataset.license.key,
        "expiry": dataset.expiry.isoformat(),
        "entitlements": [
            {"code": e.code, "name": e.name, "metadata": e.metadata} for e in dataset.entitlements
        ],
    }


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    errors = 0
    for case in cases:
        with open(case["path"]) as f:
            text = f.read()
        for name, run in (("keygen-py", keygen_py), ("keygen-sdk", keygen_sdk)):
            try:
                outcome = run(case, text)
            except Exception as e:  # noqa: BLE001 (a crash is a verdict the test must see)
                errors += 1
                outcome = {"verdict": "error", "reason": f"{type(e).__name__}: {e}"}
            if outcome is None:
                continue
            outcome.setdefault("reason", "")
            print(json.dumps({"verifier": name, "case": case["case"], **outcome}), flush=True)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
