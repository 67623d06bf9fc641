"""What else could lift SciFact nDCG@10 to 0.74 (#28): other fusion features and signals, tried outside Rust.

Reads the hybrid candidates `examples/scifact -- --dump` wrote (every candidate of every train and test
claim, with its cosine, BM25 score and both ranks) and fits a logistic model on train, as `--fit` does,
for each feature set; prints train and test nDCG@10 over documents (a document ranks by its best chunk,
as in `examples/scifact`). Signals added beside the shipped features:

- `z`: the cosine's and BM25 score's z-scores among the question's top 50, and whether BM25 found it;
- `gap`, `bmn`: the cosine less the question's best cosine, the BM25 score over the best;
- `doc`: a document-level model (one sample a document, its chunks' best features), with BM25 over the
  whole abstract (Snowball stems, k1 0.9, b 0.4, the title twice) and e5 over the whole abstract
  (512 pieces) as extra features;
- `prf`: dense pseudo-relevance feedback: the question's vector plus beta times the mean of the vectors
  of the k best chunks (the chunks' stored e5 vectors, read from the data directory);
- `minilm`: a second, English-only model's cosine (all-MiniLM-L6-v2 int8, the model `install.sh` already
  fetches) for each candidate, and its rank among them;
- `cv`: the z-score and MiniLM sets again as 5-fold cross-validation over all 1,109 claims;
- `prox`: term proximity: the question's adjacent word pairs found near each other in the chunk's text;
- `sym`: the question embedded by e5 as a passage, against the stored chunk vectors;
- `map`: MiniLM's view without MiniLM at question time: e5's question vector mapped linearly into MiniLM's
  space (or the chunk's MiniLM vector into e5's), the map fitted by ridge regression on the chunks' two vectors.
- `static`: a static table of MiniLM (each vocabulary piece run through it once; a text is the IDF-weighted mean
  of its pieces' rows), no transformer at question time;
- `doccv`: the document-level sets of `doc` as 5-fold cross-validation over all 1,109 claims.
- `gate`: MiniLM asked only where the main model is unsure: the shipped English model's ranking for the claims
  whose best candidate scores below T by the shipped main model, the main model's for the others (built: the
  server's `search::English::below`).

Usage (from the repository root, after `cargo run --release --example scifact` has imported the corpus):

    cargo run --release --example scifact -- --dump target/scifact_features/candidates.tsv
    python3 -m venv target/scifact_features/venv
    target/scifact_features/venv/bin/pip install numpy onnxruntime tokenizers PyStemmer
    target/scifact_features/venv/bin/python benches/scifact_features/run.py [chunk|doc|prf|minilm|cv|prox|sym|map|static|doccv|gate]...

Embeddings are cached in `target/scifact_features/` (the abstracts with e5 take about 9 minutes on two cores,
the chunks with MiniLM about 7).
"""
import collections
import json
import math
import os
import re
import sqlite3
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
import numpy as np

OUT = "target/scifact_features"
EVAL = os.environ.get("SCIFACT", "../shared/eval/scifact")
DATA = os.environ.get("SCIFACT_DATA", "target/scifact-data")
MODELS = os.path.expanduser("~/.cache/sitebot/models")
RANK_SCALE = 5.0


def rank_feature(r):
    return 0.0 if r == 0 else 1.0 / (1.0 + (r - 1) / RANK_SCALE)


def rank_features(m):
    """Each of a question's candidates' rank by `m` (1 the highest), as `rank_feature`."""
    rank = np.empty(len(m))
    rank[np.argsort(-m)] = np.arange(1, len(m) + 1)
    return [rank_feature(int(r)) for r in rank]


def load():
    by = collections.defaultdict(list)
    with open(f"{OUT}/candidates.tsv") as f:
        next(f)
        for line in f:
            split, q, doc, key, cos, bm, br, dr, grade = line.rstrip("\n").split("\t")[:9]
            by[(split, q)].append(dict(doc=doc, key=int(key), cos=float(cos), bm=float(bm), br=int(br), dr=int(dr), g=float(grade)))
    rels = collections.defaultdict(dict)
    for split in ("train", "test"):
        with open(f"{EVAL}/qrels/{split}.tsv") as f:
            next(f)
            for line in f:
                q, d, g = line.split("\t")
                rels[(split, q)][d] = float(g)
    return by, rels


def chunk_features(cands):
    """Per candidate: the shipped features and the per-question normalised ones."""
    best_cos = max(c["cos"] for c in cands)
    best_bm = max(c["bm"] for c in cands) or 1.0
    dense = sorted((c["cos"] for c in cands if c["dr"]), reverse=True)[:50] or [0.0]
    lexical = sorted((c["bm"] for c in cands if c["br"]), reverse=True)[:50] or [0.0]
    mu, sd = np.mean(dense), np.std(dense) + 1e-6
    mub, sdb = np.mean(lexical), np.std(lexical) + 1e-6
    return [
        dict(
            cos=c["cos"], rb=rank_feature(c["br"]), rd=rank_feature(c["dr"]),
            bmn=c["bm"] / best_bm, gap=c["cos"] - best_cos, cz=(c["cos"] - mu) / sd,
            bz=(c["bm"] - mub) / sdb if c["br"] else -3.0, hasb=1.0 if c["br"] else 0.0,
        )
        for c in cands
    ]


def logistic(x, y, l2=1e-3):
    """Newton's method, a little ridge (as `examples/common::logistic`); returns weights then bias."""
    x1 = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(x1.shape[1])
    reg = l2 * np.eye(len(w))
    reg[-1, -1] = 0
    for _ in range(60):
        p = 1 / (1 + np.exp(-x1 @ w))
        h = (x1 * (p * (1 - p))[:, None]).T @ x1
        w -= np.linalg.solve(h + reg, x1.T @ (p - y) + reg @ w)
    return w


def ranked_ndcg10(docs, x, w, rel):
    """nDCG@10 of the documents ranked by the model `w` over their units' features `x` (a document by its best
    unit)."""
    s = np.hstack([x, np.ones((len(x), 1))]) @ w
    best = {}
    for d, v in zip(docs, s):
        best[d] = max(best.get(d, -1e9), v)
    return ndcg10(sorted(best, key=lambda d: -best[d]), rel)


def ndcg10(ranked_docs, rel):
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked_docs[:10]))
    ideal = sum(r / math.log2(i + 2) for i, r in enumerate(sorted(rel.values(), reverse=True)[:10]))
    return dcg / ideal if ideal else 0.0


class Experiment:
    """Samples per question: (question, units, feature matrix, labels); a unit is a chunk's document."""

    def __init__(self, by, rels):
        self.by, self.rels = by, rels

    def run(self, name, make):
        per_split = {}
        for split in ("train", "test"):
            per_split[split] = [make(key, cands) for key, cands in self.by.items() if key[0] == split]
        w = logistic(np.vstack([s[1] for s in per_split["train"]]), np.concatenate([s[2] for s in per_split["train"]]))
        scores = {}
        for split, samples in per_split.items():
            values = []
            for (key, _), (docs, x, _) in zip(((k, c) for k, c in self.by.items() if k[0] == split), samples):
                values.append(ranked_ndcg10(docs, x, w, self.rels[key]))
            scores[split] = values
        print(f"{name:<44} train {np.mean(scores['train']):.4f}  test {np.mean(scores['test']):.4f}  w={np.round(w, 2).tolist()}", flush=True)
        return scores["test"]


def chunk_set(names, extra=None):
    def make(key, cands):
        f = chunk_features(cands)
        more = extra(key, cands) if extra else {}
        x = np.array([[fi[n] if n in fi else more[n][i] for n in names] for i, fi in enumerate(f)])
        return [c["doc"] for c in cands], x, np.array([1.0 if c["g"] > 0 else 0.0 for c in cands])
    return make


def paired(a, b, label):
    wins = sum(1 for x, y in zip(a, b) if y > x + 1e-9)
    losses = sum(1 for x, y in zip(a, b) if x > y + 1e-9)
    n = wins + losses
    # exact two-sided sign test
    p = min(1.0, 2 * sum(math.comb(n, k) for k in range(0, min(wins, losses) + 1)) / 2 ** n) if n else 1.0
    print(f"  {label}: {wins} questions better, {losses} worse, sign test p = {p:.3g}")


# ---- signals -------------------------------------------------------------------------------------------

STOP = set("a an and are as at be by for from has he in is it its of on that the to was were will with this these those which or not but can may than into".split())


def doc_bm25(by):
    import Stemmer
    st = Stemmer.Stemmer("english")
    toks = lambda s: [st.stemWord(w) for w in re.findall(r"\w+", s.lower()) if w not in STOP]
    tf, length = {}, {}
    df = collections.Counter()
    with open(f"{EVAL}/corpus.jsonl") as f:
        for line in f:
            v = json.loads(line)
            words = toks(v["title"]) * 2 + toks(v["text"])
            tf[v["_id"]] = collections.Counter(words)
            length[v["_id"]] = len(words)
            df.update(set(words))
    queries = {}
    with open(f"{EVAL}/queries.jsonl") as f:
        for line in f:
            v = json.loads(line)
            queries[v["_id"]] = set(toks(v["text"]))
    n, avg = len(tf), np.mean(list(length.values()))

    def score(q, d, k1=0.9, b=0.4):
        c, s = tf[d], 0.0
        for w in queries[q]:
            if w in c:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * c[w] * (k1 + 1) / (c[w] + k1 * (1 - b + b * length[d] / avg))
        return s

    return {(q, c["doc"]): score(q, c["doc"]) for (_, q), cands in by.items() for c in cands}


class Onnx:
    def __init__(self, model_dir, max_len):
        import onnxruntime as ort
        from tokenizers import Tokenizer
        so = ort.SessionOptions()
        so.intra_op_num_threads = int(os.environ["OMP_NUM_THREADS"])
        self.sess = ort.InferenceSession(f"{model_dir}/model.onnx", so, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.sess.get_inputs()]
        self.tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
        self.tok.no_padding()
        self.tok.enable_truncation(max_len)

    def embed(self, text):
        e = self.tok.encode(text)
        ids = np.array([e.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        v = self.sess.run(None, feed)[0][0].mean(0)
        return v / np.linalg.norm(v)

    def cached(self, name, texts):
        path = f"{OUT}/{name}.npy"
        if os.path.exists(path):
            return np.load(path)
        t = time.time()
        m = np.array([self.embed(x) for x in texts], dtype=np.float32)
        np.save(path, m)
        print(f"  embedded {name}: {len(texts)} texts in {time.time() - t:.0f}s", flush=True)
        return m


def queries():
    with open(f"{EVAL}/queries.jsonl") as f:
        rows = [json.loads(line) for line in f]
    return [r["_id"] for r in rows], [r["text"] for r in rows]


def e5_questions():
    """The e5 model (512 pieces) and every claim's `query: ` vector by id."""
    e5 = Onnx(f"{MODELS}/multilingual-e5-small-int8", 512)
    qids, qtexts = queries()
    return e5, dict(zip(qids, e5.cached("e5_queries", [f"query: {t}" for t in qtexts])))


def minilm_features():
    """MiniLM's cosine of each candidate chunk (`mcos`) and its rank among the question's candidates (`mr`)."""
    rows = chunks()
    mini = Onnx(f"{MODELS}/all-minilm-l6-v2-int8", 256)
    qids, qtexts = queries()
    cv = dict(zip((r[0] for r in rows), mini.cached("minilm_chunks", [f"{r[1]}. {r[2]}" for r in rows])))
    qv = dict(zip(qids, mini.cached("minilm_queries", qtexts)))

    def extra(key, cands):
        m = np.array([cv[c["key"]] @ qv[key[1]] for c in cands])
        return {"mcos": m, "mr": rank_features(m)}

    return extra


def chunks():
    db = sqlite3.connect(f"file:{DATA}/sitebot.db?mode=ro", uri=True)
    return db.execute("select rowid, heading, text, embedding from kb_chunks order by rowid").fetchall()


def proximity_features(window=3):
    """Term proximity from the chunk's text: the question's adjacent pairs of stemmed words (stopwords left
    out) scored as BM25 terms over every chunk (`pb`: pairs found within `window` words of each other, in
    either order; `pbn`: over the question's best), and the IDF-weighted share of the question's pairs the
    chunk holds (`pshare`)."""
    import Stemmer
    st = Stemmer.Stemmer("english")
    toks = lambda s: [st.stemWord(w) for w in re.findall(r"\w+", s.lower()) if w not in STOP]
    rows = chunks()

    def pairs_of(words):
        out = collections.Counter()
        for i, a in enumerate(words):
            for b in words[i + 1:i + window]:
                if a != b:
                    out[(a, b) if a < b else (b, a)] += 1
        return out

    tf, length = {}, {}
    df = collections.Counter()
    for r in rows:
        c = pairs_of(toks(f"{r[1]} {r[2]}"))
        tf[r[0]] = c
        length[r[0]] = sum(c.values())
        df.update(c.keys())
    n, avg = len(tf), np.mean(list(length.values()))
    idf = lambda p: math.log(1 + (n - df[p] + 0.5) / (df[p] + 0.5))
    qids, qtexts = queries()
    qpairs = {}
    for q, t in zip(qids, qtexts):
        w = toks(t)
        qpairs[q] = {(a, b) if a < b else (b, a) for a, b in zip(w, w[1:]) if a != b}

    def extra(key, cands, k1=1.2, b=0.75):
        qp = qpairs[key[1]]
        total = sum(idf(p) for p in qp) or 1.0
        pb, share = [], []
        for c in cands:
            t = tf[c["key"]]
            s = sum(idf(p) * t[p] * (k1 + 1) / (t[p] + k1 * (1 - b + b * length[c["key"]] / avg)) for p in qp if p in t)
            pb.append(s)
            share.append(sum(idf(p) for p in qp if p in t) / total)
        best = max(pb) or 1.0
        return {"pb": pb, "pbn": [x / best for x in pb], "pshare": share}

    return extra


def mapped_features(lam, fit_frac):
    """MiniLM's view without MiniLM at question time: a linear map (ridge, `lam`) fitted from the chunks' stored
    e5 vectors to their MiniLM vectors (on `fit_frac` of the chunks). `qmap`: the question's e5 vector mapped
    into MiniLM's space against the chunk's MiniLM vector; `dmap`: the chunk's MiniLM vector mapped into e5's
    space against the question's e5 vector; `mcos`: MiniLM itself, for reference. Each with its rank (`...r`)."""
    rows = chunks()
    e5d = np.array([np.frombuffer(r[3], dtype=np.float32) for r in rows])
    mini = Onnx(f"{MODELS}/all-minilm-l6-v2-int8", 256)
    md = mini.cached("minilm_chunks", [f"{r[1]}. {r[2]}" for r in rows])
    qids, qtexts = queries()
    mq = dict(zip(qids, mini.cached("minilm_queries", qtexts)))
    _, e5q = e5_questions()
    idx = np.random.default_rng(3).permutation(len(rows))[: int(len(rows) * fit_frac)]
    x, y = e5d[idx], md[idx]
    to_minilm = np.linalg.solve(x.T @ x + lam * np.eye(x.shape[1]), x.T @ y)
    to_e5 = np.linalg.solve(y.T @ y + lam * np.eye(y.shape[1]), y.T @ x)
    r2 = 1 - ((x @ to_minilm - y) ** 2).sum() / ((y - y.mean(0)) ** 2).sum()
    print(f"  e5 -> MiniLM fitted on {len(idx)} chunks, ridge {lam}: R2 {r2:.3f}")
    dmap = md @ to_e5
    dmap /= np.linalg.norm(dmap, axis=1, keepdims=True)
    row_of = {r[0]: i for i, r in enumerate(rows)}

    def extra(key, cands):
        q = e5q[key[1]] @ to_minilm
        rows_ = [row_of[c["key"]] for c in cands]
        out = {}
        for name, m in (("qmap", md[rows_] @ (q / np.linalg.norm(q))), ("dmap", dmap[rows_] @ e5q[key[1]]), ("mcos", md[rows_] @ mq[key[1]])):
            out[name], out[name + "r"] = m, rank_features(m)
        return out

    return extra


def run_map(ex):
    base = ex.run("chunks: shipped features, refitted", chunk_set(SHIPPED))
    for lam, frac in ((1.0, 1.0), (10.0, 1.0), (1.0, 0.5)):
        extra = mapped_features(lam, frac)
        for name, names in [("+ MiniLM cosine", SHIPPED + ["mcos"]), ("+ e5 question mapped to MiniLM", SHIPPED + ["qmap"]), ("+ qmap and rank", SHIPPED + ["qmap", "qmapr"]),
                            ("+ MiniLM chunk mapped to e5", SHIPPED + ["dmap"]), ("+ dmap and rank", SHIPPED + ["dmap", "dmapr"])]:
            paired(base, ex.run(f"chunks: {name} (ridge {lam}, {frac:.0%} of chunks)", chunk_set(names, extra)), name)


def run_prox(ex):
    base = ex.run("chunks: shipped features, refitted", chunk_set(SHIPPED))
    for window in (2, 3, 5):
        extra = proximity_features(window)
        for name, names in [("+ pair BM25", SHIPPED + ["pb"]), ("+ pair BM25 over best", SHIPPED + ["pbn"]), ("+ pair share", SHIPPED + ["pshare"])]:
            paired(base, ex.run(f"chunks, window {window}: {name}", chunk_set(names, extra)), name)


def symmetric_features():
    """The same model's other view of the question: its vector with e5's `passage: ` prefix instead of
    `query: `, against the chunks' stored vectors (`scos`), and its rank among the candidates (`sr`). One
    more run of the model a question; no other vector is stored."""
    rows = chunks()
    vec = {r[0]: np.frombuffer(r[3], dtype=np.float32) for r in rows}
    e5 = Onnx(f"{MODELS}/multilingual-e5-small-int8", 512)
    qids, qtexts = queries()
    qv = dict(zip(qids, e5.cached("e5_queries_as_passages", [f"passage: {t}" for t in qtexts])))

    def extra(key, cands):
        m = np.array([vec[c["key"]] @ qv[key[1]] for c in cands])
        return {"scos": m, "sr": rank_features(m)}

    return extra


def run_sym(ex):
    extra = symmetric_features()
    base = ex.run("chunks: shipped features, refitted", chunk_set(SHIPPED))
    for name, names in [("+ passage-prefixed cosine", SHIPPED + ["scos"]), ("+ its cosine and rank", SHIPPED + ["scos", "sr"]), ("its cosine instead", ["scos", "rb", "rd"])]:
        paired(base, ex.run(f"chunks: {name}", chunk_set(names, extra)), name)


def static_features(model, pooling):
    """A static view of a transformer, with no transformer at question time (as model2vec distils one): every
    piece of the model's vocabulary run through it alone (`[CLS] piece [SEP]`), its output pooled into the
    piece's vector once; a text's vector is then the IDF-weighted mean of its pieces' vectors (IDF over the
    site's chunks), a table lookup. `stc`: that cosine; `str`: its rank among the question's candidates."""
    import onnxruntime as ort
    from tokenizers import Tokenizer
    model_dir = f"{MODELS}/{model}"
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.no_padding()
    tok.no_truncation()
    path = f"{OUT}/static_{model}_{pooling}.npy"
    if os.path.exists(path):
        table = np.load(path)
    else:
        so = ort.SessionOptions()
        so.intra_op_num_threads = int(os.environ["OMP_NUM_THREADS"])
        sess = ort.InferenceSession(f"{model_dir}/model.onnx", so, providers=["CPUExecutionProvider"])
        inputs = [i.name for i in sess.get_inputs()]
        n = tok.get_vocab_size()
        frame = tok.encode("a").ids
        cls, sep = frame[0], frame[-1]
        t = time.time()
        table = np.zeros((n, 384), dtype=np.float32)
        for start in range(0, n, 1024):
            ids = np.arange(start, min(n, start + 1024), dtype=np.int64)
            batch = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
            feed = {"input_ids": batch, "attention_mask": np.ones_like(batch)}
            if "token_type_ids" in inputs:
                feed["token_type_ids"] = np.zeros_like(batch)
            out = sess.run(None, feed)[0]
            table[ids] = out.mean(1) if pooling == "mean" else out[:, 1]
        np.save(path, table)
        print(f"  static table of {model}: {n} pieces in {time.time() - t:.0f}s", flush=True)
    rows = chunks()
    pieces = {r[0]: tok.encode(f"{r[1]}. {r[2]}", add_special_tokens=False).ids for r in rows}
    df = collections.Counter()
    for ids in pieces.values():
        df.update(set(ids))
    nchunks = len(pieces)
    idf = np.zeros(len(table), dtype=np.float32)
    for i in range(len(table)):
        idf[i] = math.log(1 + (nchunks - df[i] + 0.5) / (df[i] + 0.5))

    def vector(ids):
        if not ids:
            return np.zeros(table.shape[1], dtype=np.float32)
        ids = np.array(ids)
        v = (table[ids] * idf[ids][:, None]).sum(0)
        return v / (np.linalg.norm(v) + 1e-9)

    cv = {k: vector(ids) for k, ids in pieces.items()}
    qids, qtexts = queries()
    qv = {q: vector(tok.encode(t, add_special_tokens=False).ids) for q, t in zip(qids, qtexts)}

    def extra(key, cands):
        m = np.array([cv[c["key"]] @ qv[key[1]] for c in cands])
        return {"stc": m, "str": rank_features(m)}

    return extra


def run_static(ex):
    base = ex.run("chunks: shipped features, refitted", chunk_set(SHIPPED))
    model = "all-minilm-l6-v2-int8"
    for pooling in ("mean", "piece"):
        extra = static_features(model, pooling)
        for name, names in [("+ static cosine", SHIPPED + ["stc"]), ("+ static cosine and rank", SHIPPED + ["stc", "str"])]:
            paired(base, ex.run(f"chunks: {name} ({model}, {pooling})", chunk_set(names, extra)), name)


# ---- experiments ---------------------------------------------------------------------------------------

SHIPPED = ["cos", "rb", "rd"]
Z = SHIPPED + ["cz", "bz", "hasb"]


def run_chunk(ex):
    base = ex.run("chunks: shipped features, refitted", chunk_set(SHIPPED))
    for name, names in [("+ bmn", SHIPPED + ["bmn"]), ("+ gap", SHIPPED + ["gap"]), ("+ bmn + gap", SHIPPED + ["bmn", "gap"]), ("+ z", Z)]:
        paired(base, ex.run(f"chunks: {name}", chunk_set(names)), name)


def doc_sets(ex):
    """One sample a document (its chunks' best features), with BM25 over the whole abstract over the question's
    best (`dbm`), e5 over the whole abstract (`dcos`) and the document's count of candidate chunks (`n`)."""
    bm = doc_bm25(ex.by)
    ids, texts = [], []
    with open(f"{EVAL}/corpus.jsonl") as f:
        for line in f:
            v = json.loads(line)
            ids.append(v["_id"])
            texts.append(f"passage: {v['title']}. {v['text']}".strip())
    e5, qv = e5_questions()
    docs = dict(zip(ids, e5.cached("e5_abstracts", texts)))

    def doc_set(names):
        def make(key, cands):
            per = collections.defaultdict(list)
            for c, f in zip(cands, chunk_features(cands)):
                per[c["doc"]].append(f)
            units = list(per)
            bms = np.array([bm[(key[1], d)] for d in units])
            dcos = np.array([docs[d] @ qv[key[1]] for d in units])
            rows = []
            for i, d in enumerate(units):
                fs = per[d]
                agg = {n: max(f[n] for f in fs) for n in fs[0]}
                agg.update(dbm=bms[i] / (bms.max() or 1.0), dcos=dcos[i], n=len(fs))
                rows.append([agg[n] for n in names])
            y = np.array([1.0 if ex.rels[key].get(d, 0) > 0 else 0.0 for d in units])
            return units, np.array(rows), y
        return make

    return doc_set


DOC_SETS = [("+ z", Z), ("+ abstract BM25", SHIPPED + ["dbm"]), ("+ abstract e5", SHIPPED + ["dcos"]), ("+ abstract BM25 + e5", SHIPPED + ["dbm", "dcos"]),
            ("+ z + abstract BM25 + e5", Z + ["dbm", "dcos"])]


def run_doc(ex):
    doc_set = doc_sets(ex)
    base = ex.run("documents: shipped features", doc_set(SHIPPED))
    for name, names in DOC_SETS:
        paired(base, ex.run(f"documents: {name}", doc_set(names)), name)


def cross_validate(ex, sets, factory, label):
    """5-fold cross-validation over all 1,109 train and test claims: each set's nDCG@10, and a sign test of
    each against the first."""
    keys = sorted(ex.by)
    order = np.random.default_rng(7).permutation(len(keys))
    scores = {}
    first = None
    for name, names in sets:
        made = [factory(names)(k, ex.by[k]) for k in keys]
        per = np.zeros(len(keys))
        for fold in range(5):
            held = set(order[fold::5].tolist())
            train = [i for i in range(len(keys)) if i not in held]
            w = logistic(np.vstack([made[i][1] for i in train]), np.concatenate([made[i][2] for i in train]))
            for i in held:
                docs, x, _ = made[i]
                per[i] = ranked_ndcg10(docs, x, w, ex.rels[keys[i]])
        scores[name] = per
        print(f"5-fold over {len(keys)} claims, {label}: {name:<28} nDCG@10 {per.mean():.4f}", flush=True)
        if first is None:
            first = name
        else:
            paired(scores[first], per, name)
    return scores


def run_doccv(ex):
    """The document-level sets of `doc` again, as 5-fold cross-validation (the test split's 300 alone scatter)."""
    cross_validate(ex, [("shipped three", SHIPPED)] + DOC_SETS, doc_sets(ex), "documents")


def run_prf(ex):
    rows = chunks()
    vec = {r[0]: np.frombuffer(r[3], dtype=np.float32) for r in rows}
    _, qv = e5_questions()
    w0 = np.array([25.05, 4.36, 3.21, -27.48])  # the shipped features refitted (run `chunk`)

    def extra(beta, k):
        def f(key, cands):
            x = np.array([[fi[n] for n in SHIPPED] + [1.0] for fi in chunk_features(cands)])
            top = np.argsort(-(x @ w0))[:k]
            q = qv[key[1]] + beta * np.mean([vec[cands[i]["key"]] for i in top], axis=0)
            q /= np.linalg.norm(q)
            return {"pcos": [vec[c["key"]] @ q for c in cands]}
        return f

    base = ex.run("chunks: shipped features, refitted", chunk_set(SHIPPED))
    for beta in (0.3, 0.6, 1.0):
        for k in (1, 3, 5):
            paired(base, ex.run(f"prf beta {beta} k {k}", chunk_set(["pcos", "rb", "rd"], extra(beta, k))), f"prf {beta}/{k}")


def run_minilm(ex):
    extra = minilm_features()

    base = ex.run("chunks: shipped features, refitted", chunk_set(SHIPPED))
    for name, names in [("+ MiniLM cosine", SHIPPED + ["mcos"]), ("+ MiniLM cosine and rank", SHIPPED + ["mcos", "mr"]), ("+ z + MiniLM", Z + ["mcos", "mr"])]:
        paired(base, ex.run(f"chunks: {name}", chunk_set(names, extra)), name)


def run_gate(ex):
    """The shipped English model (`search::English`) applied only to the claims whose best candidate, by the shipped
    main model, scores below T: nDCG@10 and the share of claims reranked, per split."""
    extra = minilm_features()
    main = np.array([6.31, 4.55, 4.15, -11.82])  # `Fusion::default()`: cos, BM25 rank, dense rank, bias
    english = np.array([0.0, 2.98, 2.16, 6.75, 1.71, -8.94])  # `English`: the same, English cosine and rank, bias
    got = {}
    for key, cands in ex.by.items():
        docs, x, _ = chunk_set(SHIPPED, extra)(key, cands)
        _, xe, _ = chunk_set(SHIPPED + ["mcos", "mr"], extra)(key, cands)
        best = 1 / (1 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ main).max()))
        got[key] = (ranked_ndcg10(docs, x, main, ex.rels[key]), ranked_ndcg10(docs, xe, english, ex.rels[key]), best)
    for split in ("train", "test"):
        v = np.array([g for k, g in got.items() if k[0] == split])
        print(f"{split}, {len(v)} claims: main model {v[:, 0].mean():.4f}, English model on every claim {v[:, 1].mean():.4f}")
        for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
            use = v[:, 2] < t
            print(f"  below {t}: {use.mean():.2f} of the claims reranked, nDCG@10 {np.where(use, v[:, 1], v[:, 0]).mean():.4f}")


def run_cv(ex):
    """The MiniLM and z-score sets again, as 5-fold cross-validation over all 1,109 train and test claims (the
    test split's 300 alone scatter)."""
    extra = minilm_features()
    sets = [("shipped three", SHIPPED), ("+ z", Z), ("+ MiniLM cosine", SHIPPED + ["mcos"]), ("+ MiniLM cosine and rank", SHIPPED + ["mcos", "mr"]),
            ("+ z + MiniLM", Z + ["mcos", "mr"])]
    cross_validate(ex, sets, lambda names: chunk_set(names, extra), "chunks")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    ex = Experiment(*load())
    for what in sys.argv[1:] or ["chunk", "doc", "prf", "minilm", "cv"]:
        {"chunk": run_chunk, "doc": run_doc, "prf": run_prf, "minilm": run_minilm, "cv": run_cv, "prox": run_prox, "sym": run_sym, "map": run_map, "static": run_static, "doccv": run_doccv, "gate": run_gate}[what](ex)
