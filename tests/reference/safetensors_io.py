"""Minimal safetensors writer/reader (the format is 8-byte length + JSON header + raw data),
so the reference scripts need only Debian's python3-torch, not the safetensors package."""
import json
import struct

import numpy as np

_DTYPES = {np.dtype("float32"): "F32", np.dtype("int64"): "I64"}


def save(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name in sorted(tensors):
        array = np.array(tensors[name], order="C")  # keeps 0-d arrays 0-d
        if array.dtype not in _DTYPES:
            raise TypeError(f"{name}: unsupported dtype {array.dtype}")
        blob = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _DTYPES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    import os
    os.replace(path + ".tmp", path)


def load(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = {"F32": "<f4", "I64": "<i8", "I32": "<i4"}[entry["dtype"]]
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(entry["shape"])
    return out
