"""Encodes its argument as base64 and decodes it back."""
import base64
import sys

text = sys.argv[1].encode()
encoded = base64.b64encode(text)
assert base64.b64decode(encoded) == text
print(encoded.decode())
