"""Embedding helper for multilingual-e5-small-int8 (sitebot's model), batch 1, one thread, with .npy cache."""
import hashlib, json, os, re, time
import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")
import onnxruntime as ort
from tokenizers import Tokenizer

MODEL_DIR = os.environ.get("SITEBOT_E5_DIR", os.path.expanduser("~/.cache/sitebot/models/multilingual-e5-small-int8"))
# Vectors are cached under the repository's target/ directory, never in the source tree.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.path.join(REPO, "target", "crosslingual_use", "cache")
os.makedirs(CACHE, exist_ok=True)

_sess = None
_tok = None


def _load():
    global _sess, _tok
    if _sess is None:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        _sess = ort.InferenceSession(os.path.join(MODEL_DIR, "model.onnx"), so, providers=["CPUExecutionProvider"])
        _tok = Tokenizer.from_file(os.path.join(MODEL_DIR, "tokenizer.json"))
        _tok.no_padding()
        _tok.enable_truncation(512)
    return _sess, _tok


def embed_one(text):
    sess, tok = _load()
    enc = tok.encode(text)
    ids = np.array([enc.ids], dtype=np.int64)
    mask = np.array([enc.attention_mask], dtype=np.int64)
    types = np.zeros_like(ids)
    h = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0][0]
    m = mask[0].astype(np.float32)[:, None]
    v = (h * m).sum(0) / m.sum()
    return (v / np.linalg.norm(v)).astype(np.float32)


def embed(texts, name, prefix):
    """Embed texts (each prefixed), cached in cache/<name>.npy; returns (matrix, seconds spent embedding originally)."""
    full = [prefix + t for t in texts]
    key = hashlib.sha256("\x00".join(full).encode()).hexdigest()[:16]
    npy = os.path.join(CACHE, f"{name}.{key}.npy")
    meta = os.path.join(CACHE, f"{name}.{key}.json")
    if os.path.exists(npy) and os.path.exists(meta):
        return np.load(npy), json.load(open(meta))["seconds"]
    t0 = time.perf_counter()
    out = np.zeros((len(full), 384), dtype=np.float32)
    for i, t in enumerate(full):
        out[i] = embed_one(t)
    secs = time.perf_counter() - t0
    np.save(npy, out)
    json.dump({"seconds": secs, "n": len(full)}, open(meta, "w"))
    print(f"  embedded {name}: {len(full)} texts in {secs:.1f}s", flush=True)
    return out, secs


_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def sentences(text, min_len=20):
    parts = [p.strip() for p in _SPLIT.split(text.strip()) if p.strip()]
    out = []
    for p in parts:
        if out and len(p) < min_len:
            out[-1] = out[-1] + " " + p  # merge a short piece into the previous sentence
        else:
            out.append(p)
    # a short first piece (nothing before it) is merged into the next one
    if len(out) > 1 and len(out[0]) < min_len:
        out[1] = out[0] + " " + out[1]
        out = out[1:]
    return out or [text.strip()]


def windows(sents, w=2):
    if len(sents) <= w:
        return [" ".join(sents)]
    return [" ".join(sents[i:i + w]) for i in range(len(sents) - w + 1)]
