#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Parses one saved mail with Python's email package (not gua's code) and prints it as JSON:
# its headers (the Subject decoded), whether the Date parses, and each MIME part's type,
# charset and decoded text.
import email
import email.policy
import email.utils
import json
import sys

with open(sys.argv[1], "rb") as f:
    msg = email.message_from_binary_file(f, policy=email.policy.default)
out = {"headers": {k: str(v) for k, v in msg.items()},
       "content_type": msg.get_content_type(),
       "date_epoch": email.utils.parsedate_to_datetime(msg["Date"]).timestamp(),
       "parts": []}
for part in (msg.iter_parts() if msg.is_multipart() else [msg]):
    out["parts"].append({"type": part.get_content_type(),
                         "charset": part.get_content_charset(),
                         "encoding": part.get("Content-Transfer-Encoding", ""),
                         "text": part.get_content()})
print(json.dumps(out))
