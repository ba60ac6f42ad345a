#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# A loopback HTTP receiver for the webhook tests: records every POST (arrival time, path,
# Content-Type, body) as one JSON line in DIR/requests.jsonl; answers 500 to the first --fail
# requests, never answers the first --hang ones, and 200 "ok" to the rest. Prints "ready PORT".
import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--fail", type=int, default=0)
    p.add_argument("--hang", type=int, default=0)
    a = p.parse_args()
    lock = threading.Lock()
    seen = [0]
    log = os.path.join(a.dir, "requests.jsonl")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                seen[0] += 1
                n = seen[0]
                with open(log, "a") as f:
                    f.write(json.dumps({"t": time.time(), "path": self.path,
                                        "content_type": self.headers.get("Content-Type", ""),
                                        "body": body.decode("utf-8")}) + "\n")
            if n <= a.hang:
                time.sleep(3600)
                return
            status = 500 if n <= a.hang + a.fail else 200
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"server_error")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("ready %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
