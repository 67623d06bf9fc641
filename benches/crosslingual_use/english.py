"""The English side the offline cross-lingual experiments share (dictionary.py, thai.py, translit.py,
vietnamese.py): XQuAD-R's 240 English paragraphs with one e5 vector each (`P`), BM25 over their words stemmed
by Snowball's English stemmer (`bm25`, k1 1.2, b 0.75), and the z-score used to fuse it with the cosine."""
import os, json, re, math, collections
import numpy as np, snowballstemmer
from emb import embed
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
D = os.path.join(REPO, "target", "eval", "lareqa", "xquad-r")
def load(l): return [p for a in json.load(open(f"{D}/{l}.json"))["data"] for p in a["paragraphs"]]
en = load("en"); contexts = [p["context"] for p in en]
P, _ = embed(contexts, "xq_en_paras", "passage: ")
EN = snowballstemmer.stemmer("english")
STOP = set("the of and in to a is was for on as by with that at from his he it an are were be this which or its their has have had not but also been first after who when can one other more into they than most would there all two new such these some them only during many may time where about up out over three between what how did does do".split())
tok = lambda s: [w for w in re.findall(r"\w+", s.lower()) if len(w) > 1]
docs = [[EN.stemWord(w) for w in tok(c)] for c in contexts]
df = collections.Counter(w for d in docs for w in set(d)); N = len(docs); avg = np.mean([len(d) for d in docs])
tfs = [collections.Counter(d) for d in docs]
def bm25(terms):
    """BM25 of every paragraph for `terms` (stemmed English word: weight)."""
    s = np.zeros(N)
    for w, wt in terms.items():
        if w not in df: continue
        idf = math.log(1 + (N - df[w] + 0.5) / (df[w] + 0.5))
        for i, tf in enumerate(tfs):
            c = tf.get(w)
            if c: s[i] += wt * idf * c * 2.2 / (c + 1.2 * (0.25 + 0.75 * len(docs[i]) / avg))
    return s
def z(x): return (x - x.mean()) / (x.std() + 1e-9)
def questions(l):
    """A language's XQuAD-R questions, the paragraph each asks about, and their cosines with the paragraphs."""
    qs, gold = [], []
    for i, p in enumerate(load(l)):
        for q in p["qas"]: qs.append(q["question"]); gold.append(i)
    Qv, _ = embed(qs, f"xq_q_{l}", "query: ")
    return qs, np.array(gold), Qv @ P.T
def scorers(S, gold, lambdas=(0.1, 0.2, 0.3, 0.5, 0.7, 1.0), digits=4):
    """R@1 of a score matrix, and the best R@1 (with its lambda) of the cosines `S` fused with a BM25 matrix as
    z(cos) + lambda z(BM25)."""
    zd = np.apply_along_axis(z, 1, S)
    r = lambda M: (M.argmax(1) == gold).mean()
    best = lambda B: max((round(r(zd + lam * np.apply_along_axis(z, 1, B)), digits), lam) for lam in lambdas)
    return r, best
