"""A webhook receiver for Tollgate's tests: verifies every delivery with the pinned
`standardwebhooks` reference library (with Polar's key encoding and, for a `whsec_`
secret, also with the secret as a Standard Webhooks receiver uses it: `verified_standard`)
and, for the event types the installed polar-sdk knows, with Polar's own helper
(`validate_event`, given the raw secret), and appends one JSON line per request to the
log file. It runs with either pinned SDK: 0.13.5 (`polar_sdk.webhooks`) or 1.0.2, whose
module for the body's `api_version` (`polar.v2026_04.webhooks`, ...) is used.

Usage: receiver.py --secret S --log FILE [--fail-first N] [--max-seconds T]
Prints `PORT <n>` once it listens. `--fail-first N` answers 500 to the first N attempts of
each `webhook-id`, then 200.
"""

import argparse
import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

try:
    from polar_sdk.webhooks import validate_event

    # The event types polar-sdk 0.13.5 parses; the others are Tollgate's own or newer.
    SDK_TYPES = {
        "benefit.created", "benefit.updated",
        "benefit_grant.created", "benefit_grant.updated", "benefit_grant.revoked",
        "checkout.created", "checkout.updated",
        "order.created",
        "organization.updated",
        "product.created", "product.updated",
        "subscription.active", "subscription.canceled", "subscription.created",
        "subscription.revoked", "subscription.updated",
    }
except ImportError:
    import importlib

    def validate_event(body, headers, secret):
        version = json.loads(body).get("api_version") or "2026-04"
        module = importlib.import_module(f"polar.v{version.replace('-', '_')}.webhooks")
        return module.validate_event(body, headers, secret)

    # The event types polar-sdk 1.0.2 parses (Polar's 41); `license_key.*` are Tollgate's.
    SDK_TYPES = {
        "benefit.created", "benefit.updated",
        "benefit_grant.created", "benefit_grant.cycled", "benefit_grant.revoked",
        "benefit_grant.updated",
        "checkout.created", "checkout.expired", "checkout.updated",
        "customer.created", "customer.deleted", "customer.state_changed",
        "customer.updated",
        "customer_seat.assigned", "customer_seat.claimed", "customer_seat.revoked",
        "discount.created", "discount.deleted", "discount.updated",
        "member.created", "member.deleted", "member.updated",
        "order.created", "order.paid", "order.refunded", "order.updated",
        "organization.updated",
        "product.created", "product.updated",
        "refund.created", "refund.updated",
        "subscription.active", "subscription.canceled", "subscription.created",
        "subscription.cycled", "subscription.migrated", "subscription.past_due",
        "subscription.paused", "subscription.resumed", "subscription.revoked",
        "subscription.uncanceled", "subscription.updated",
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--secret", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--max-seconds", type=float, default=600)
    args = p.parse_args()

    # Polar's encoding: the secret's UTF-8 bytes are the key, given base64-encoded.
    wh = Webhook(base64.b64encode(args.secret.encode()).decode())
    # A `whsec_<base64>` secret as a Standard Webhooks receiver uses it: the library decodes
    # it. Polar's generated secrets (`whsec_` + 43 characters) are not base64 (a library
    # given one as it is cannot verify Polar's deliveries either): Polar's encoding only.
    standard = None
    if args.secret.startswith("whsec_"):
        try:
            base64.b64decode(args.secret[len("whsec_"):], validate=True)
            standard = Webhook(args.secret)
        except ValueError:  # binascii.Error: not base64 (Polar's own format)
            standard = None
    seen = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            entry = {
                "t": time.time(),
                "id": headers.get("webhook-id"),
                "timestamp": headers.get("webhook-timestamp"),
                "signature": headers.get("webhook-signature"),
                "content_type": headers.get("content-type"),
            }
            try:
                entry["body"] = wh.verify(body, headers)
                entry["verified"] = True
            except Exception as e:  # noqa: BLE001
                entry["verified"] = False
                entry["error"] = f"standardwebhooks: {e!r}"
                try:
                    entry["body"] = json.loads(body)
                except Exception:  # noqa: BLE001
                    entry["body"] = body.decode(errors="replace")
            if standard is not None:
                try:
                    standard.verify(body, headers)
                    entry["verified_standard"] = True
                except Exception as e:  # noqa: BLE001
                    entry["verified_standard"] = False
                    entry["error_standard"] = f"standardwebhooks (whsec_): {e!r}"
            kind = entry["body"].get("type") if isinstance(entry["body"], dict) else None
            entry["type"] = kind
            if kind in SDK_TYPES:
                try:
                    parsed = validate_event(body, headers, args.secret)
                    entry["sdk"] = type(parsed).__name__
                except Exception as e:  # noqa: BLE001
                    entry["sdk"] = f"error: {e!r}"[:4000]
            with lock:
                n = seen.get(entry["id"], 0) + 1
                seen[entry["id"]] = n
                entry["attempt"] = n
                status = 500 if n <= args.fail_first else 200
                entry["answered"] = status
                with open(args.log, "a", encoding="utf-8") as f:
                    f.write(json.dumps(entry) + "\n")
            self.send_response(status)
            self.send_header("content-type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"try again")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    timer = threading.Timer(args.max_seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
