"""A real SMTP server (aiosmtpd) for tests/api/mail.rs.

Usage: python smtp_server.py --dir DIR [--port N] [--fail-first N] [--user U --password P]
                             [--max-seconds S]

Listens on 127.0.0.1 (port N, or a free one), prints `PORT <n>` once it listens, and serves
until stdin is closed (the test that started it has gone), a signal, or --max-seconds.
Each message received is parsed with Python's `email` package (the default policy, as a
mail client reads it) and written to DIR as `<n>.eml` (the bytes received) and `<n>.json`:
the envelope, the headers the tests read (From, To, Reply-To, Subject, Date, Message-ID,
Content-Language),
the Date parsed, and the plain-text and HTML parts. --fail-first N answers the first N
messages `451 4.3.0 Try again later` (a transient refusal) instead. --user and --password
make the server require AUTH (PLAIN or LOGIN, allowed without TLS on this loopback test
server) with those credentials; each message's JSON then names the user it came from.
"""

import argparse
import asyncio
import email
import email.policy
import email.utils
import json
import os
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Handler:
    def __init__(self, directory, fail_first):
        self.directory = directory
        self.fail_first = fail_first
        self.count = 0
        self.refused = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            if self.refused < self.fail_first:
                self.refused += 1
                return "451 4.3.0 Try again later"
            self.count += 1
            n = self.count
        raw = envelope.original_content or envelope.content
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        text = msg.get_body(preferencelist=("plain",))
        html = msg.get_body(preferencelist=("html",))
        date = msg.get("Date")
        try:
            parsed_date = email.utils.parsedate_to_datetime(str(date)).isoformat() if date else None
        except (TypeError, ValueError):
            parsed_date = None
        record = {
            "n": n,
            "mail_from": envelope.mail_from,
            "auth_user": (session.auth_data.login.decode()
                          if isinstance(session.auth_data, LoginPassword) else None),
            "rcpt_tos": envelope.rcpt_tos,
            "headers": {k: str(msg.get(k)) if msg.get(k) is not None else None
                        for k in ("From", "To", "Reply-To", "Subject", "Date", "Message-ID",
                                  "MIME-Version", "Content-Type", "Content-Language")},
            "date": parsed_date,
            "content_type": msg.get_content_type(),
            "parts": [part.get_content_type() for part in msg.walk()],
            "text": text.get_content() if text is not None else None,
            "html": html.get_content() if html is not None else None,
        }
        base = os.path.join(self.directory, "%04d" % n)
        with open(base + ".eml", "wb") as f:
            f.write(raw)
        tmp = base + ".json.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(tmp, base + ".json")
        return "250 2.0.0 Ok: queued as %d" % n


def exit_when_stdin_closes():
    try:
        sys.stdin.buffer.read()
    finally:
        os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--max-seconds", type=float, default=900)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)

    port = args.port
    if port == 0:
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
    auth = {}
    if args.user is not None:
        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = (isinstance(auth_data, LoginPassword)
                  and auth_data.login.decode() == args.user
                  and auth_data.password.decode() == args.password)
            return AuthResult(success=ok, handled=False, auth_data=auth_data)
        auth = {"auth_required": True, "auth_require_tls": False, "authenticator": authenticator}
    controller = Controller(Handler(args.dir, args.fail_first), hostname="127.0.0.1", port=port,
                            ready_timeout=30, **auth)
    controller.start()
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    deadline = threading.Timer(args.max_seconds, lambda: os._exit(3))
    deadline.daemon = True
    deadline.start()
    print("PORT %d" % port, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
