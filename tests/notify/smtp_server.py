#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# A loopback SMTP server for the delivery tests (Debian's python3-aiosmtpd): STARTTLS required,
# AUTH LOGIN/PLAIN of one user required after it; each accepted message is saved as DIR/N.eml
# with DIR/N.env (envelope sender, recipients, whether TLS was on, the login). Prints
# "ready PORT" when it accepts connections; runs until killed.
import argparse
import os
import signal
import socket
import ssl
import sys
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Saver:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        base = os.path.join(self.directory, str(self.count))
        login = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else ""
        with open(base + ".env", "w") as f:
            f.write("from=%s\nto=%s\ntls=%s\nlogin=%s\n" % (
                envelope.mail_from, ",".join(envelope.rcpt_tos),
                "yes" if session.ssl is not None else "no", login))
        with open(base + ".eml.tmp", "wb") as f:
            f.write(envelope.original_content)
        os.rename(base + ".eml.tmp", base + ".eml")
        return "250 OK"


def authenticator(user, password):
    def check(server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword) and auth_data.login == user.encode()
              and auth_data.password == password.encode())
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)
    return check


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--password", required=True)
    a = p.parse_args()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(a.cert, a.key)
    port = free_port()
    controller = Controller(Saver(a.dir), hostname="127.0.0.1", port=port, tls_context=context,
                            require_starttls=True, authenticator=authenticator(a.user, a.password),
                            auth_required=True, auth_require_tls=True)
    controller.start()
    print("ready %d" % port, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (controller.stop(), sys.exit(0)))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
