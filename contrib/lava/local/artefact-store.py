#!/usr/bin/env python3
"""The local LAVA job's HTTP server (run.sh): serves LAVA's overlay to the guest (GET,
from the dispatcher's directory) and keeps the files the test definition uploads the way
an Artifactorial store takes them (POST /artefacts/KERNEL/, multipart `path` and `token`),
answering with the file's URL, which the job records with lava-test-reference.

Usage: artefact-store.py PORT DISPATCHER_DIR STORE_DIR BASE_URL
"""
import email.parser
import email.policy
import functools
import http.server
import os
import re
import sys

port, served, store, base = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_POST(self):
        kernel = re.fullmatch(r"/artefacts/([A-Za-z0-9._-]+)/?", self.path)
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length)
        head = f"Content-Type: {self.headers.get('Content-Type', '')}\r\n\r\n".encode()
        form = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
        parts = {p.get_param("name", header="content-disposition"): p
                 for p in form.iter_parts()} if form.is_multipart() else {}
        upload = parts.get("path")
        name = upload and os.path.basename(upload.get_filename() or "")
        if not kernel or "token" not in parts or not name:
            self.send_error(400, "expected POST /artefacts/KERNEL/ with multipart path and token")
            return
        os.makedirs(os.path.join(store, kernel[1]), exist_ok=True)
        with open(os.path.join(store, kernel[1], name), "wb") as f:
            f.write(upload.get_payload(decode=True))
        answer = f"{base}/artefacts/{kernel[1]}/{name}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


handler = functools.partial(Handler, directory=served)
http.server.ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever()
