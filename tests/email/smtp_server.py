"""A real SMTP server on loopback for sitebot's e-mail tests (aiosmtpd): every message it accepts is
appended to a JSON-lines file with its Message-ID, envelope, subject and decoded text and HTML parts.

    smtp_server.py --port PORT --out FILE [--tls-cert PEM --tls-key PEM]

With a certificate, STARTTLS is offered and required before MAIL. Prints `ready PORT` once it listens.
"""

import argparse
import asyncio
import email
import email.policy
import json
import signal
import ssl

from aiosmtpd.smtp import SMTP


class Recorder:
    def __init__(self, out):
        self.out = out

    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.original_content or envelope.content, policy=email.policy.default)
        text = msg.get_body(preferencelist=("plain",))
        html = msg.get_body(preferencelist=("html",))
        record = {
            "message_id": msg.get("Message-ID", ""),
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "from": str(msg.get("From", "")),
            "to": str(msg.get("To", "")),
            "subject": str(msg.get("Subject", "")),
            "headers": [k for k in msg.keys()],
            "text": text.get_content() if text is not None else None,
            "html": html.get_content() if html is not None else None,
            "tls": session.ssl is not None,
        }
        with open(self.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        return "250 OK"


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    a = p.parse_args()
    ctx = None
    if a.tls_cert:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
    handler = Recorder(a.out)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="localhost", tls_context=ctx, require_starttls=ctx is not None),
        host="127.0.0.1",
        port=a.port,
    )
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"ready {a.port}", flush=True)
    await stop.wait()
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
