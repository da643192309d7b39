import base64

VECTORS = {b"": b"", b"f": b"Zg==", b"fo": b"Zm8=", b"foo": b"Zm9v", b"foobar": b"Zm9vYmFy"}


def test_vectors():
    for raw, enc in VECTORS.items():
        assert base64.b64encode(raw) == enc
