#!/usr/bin/env python3
# Converts a Hugging Face byte-level BPE tokenizer.json (Llama 3) into a
# tiktoken ranks file ("base64-token rank" per line) and a specials file
# ("token id" per line), for token_register_encoding/4 and the e2e tests.
# Llama 3's ranks are its token ids, so the conversion is exact.
import base64, json, sys

tj = json.load(open(sys.argv[1]))
out_ranks, out_specials = sys.argv[2], sys.argv[3]

# GPT-2's byte-to-unicode table, inverted.
bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
cs = bs[:]
n = 0
for b in range(256):
    if b not in bs:
        bs.append(b)
        cs.append(256 + n)
        n += 1
decode = {chr(c): b for b, c in zip(bs, cs)}

with open(out_ranks, "w") as f:
    for tok, rank in sorted(tj["model"]["vocab"].items(), key=lambda kv: kv[1]):
        raw = bytes(decode[ch] for ch in tok)
        f.write(base64.b64encode(raw).decode() + " " + str(rank) + "\n")
with open(out_specials, "w") as f:
    for a in tj["added_tokens"]:
        if a.get("special"):
            f.write(a["content"] + " " + str(a["id"]) + "\n")
