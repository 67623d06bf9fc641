"""A term bridge across scripts (#28, session 16): do question words mapped onto the English knowledge's own
words by e5 word vectors give BM25 something to match where the scripts differ (ar, ru, zh, el, hi)?

Each question word found in the 240 English XQuAD paragraphs' vocabulary is searched as it is ("exact"); with
the bridge, a word that is not becomes the vocabulary word whose e5 vector (both embedded as `passage: `) is
nearest, when their cosine reaches tau, weighted by how far above tau it is. BM25 over the paragraphs with
those terms is fused with the dense cosine as z(cos) + lambda * z(BM25); R@1 on all 1,190 questions of each
language. Chinese questions are cut into words by jieba. Dense alone, one vector a paragraph, as in run.py.

Run from the repository root with the venv of README.md here, plus `pip install jieba`:
    target/crosslingual_use/venv/bin/python benches/crosslingual_use/bridge.py [de,ru,ar,zh,el,hi]
"""
import os, sys, json, re, math, collections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from emb import embed
import jieba
jieba.setLogLevel(60)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LANGS = sys.argv[1].split(',') if len(sys.argv) > 1 else ["de", "ru", "ar", "zh", "el", "hi"]
def path(lang):
    if lang in ("en", "de", "es"):
        return os.path.join(REPO, "..", "shared", "eval", "xquad-r", f"{lang}.json")
    return os.path.join(REPO, "target", "eval", "lareqa", f"{lang}.json")
def load(lang):
    return [p for a in json.load(open(path(lang)))["data"] for p in a["paragraphs"]]
en = load("en"); contexts = [p["context"] for p in en]
P, _ = embed(contexts, "xq_en_para", "passage: ")
STOP = set("the of and in to a is was for on as by with that at from his he it an are were be this which or its their has have had not but also been first after who when can one other more into they than most would there all two new such these some them only during many may time where about up out over three between what how did does do".split())
tok = lambda s: [w for w in re.findall(r"\w+", s.lower()) if len(w) > 1]
docs = [tok(c) for c in contexts]
df = collections.Counter(w for d in docs for w in set(d))
N = len(docs); avg = np.mean([len(d) for d in docs])
tfs = [collections.Counter(d) for d in docs]
vocab = sorted(w for w in df if w not in STOP and not w.isdigit())
V, _ = embed(vocab, "xq_en_vocab_p", "passage: ")
vix = {w: i for i, w in enumerate(vocab)}
print("vocabulary", len(vocab), flush=True)
def bm25(terms):  # terms: {word: weight}
    s = np.zeros(N)
    for w, wt in terms.items():
        if w not in df: continue
        idf = math.log(1 + (N - df[w] + 0.5) / (df[w] + 0.5))
        for i, tf in enumerate(tfs):
            c = tf.get(w)
            if c: s[i] += wt * idf * c * 2.2 / (c + 1.2 * (0.25 + 0.75 * len(docs[i]) / avg))
    return s
def qwords(q, lang):
    if lang == "zh":
        return [w.lower() for w in jieba.lcut(q) if re.match(r"\w", w)]
    return tok(q)
def z(x):
    return (x - x.mean()) / (x.std() + 1e-9)
out = {}
for lang in LANGS:
    paras = load(lang)
    qs, gold = [], []
    for i, p in enumerate(paras):
        for q in p["qas"]:
            qs.append(q["question"]); gold.append(i)
    gold = np.array(gold)
    Q, _ = embed(qs, f"xq_q_{lang}", "query: ")
    words = [qwords(q, lang) for q in qs]
    uniq = sorted(set(w for ws in words for w in ws))
    W, _ = embed(uniq, f"xq_{lang}_qwords_p", "passage: ")
    wi = {w: i for i, w in enumerate(uniq)}
    sims = W @ V.T  # words x vocab
    best = sims.argmax(1); bests = sims.max(1)
    dense = Q @ P.T
    res = {}
    for variant in ["exact", "bridge .90", "bridge .93", "bridge .95"]:
        lex = np.zeros_like(dense)
        for qi, ws in enumerate(words):
            terms = {}
            for w in ws:
                if w in df:
                    terms[w] = terms.get(w, 0) + 1.0  # shared words as they are
                elif variant != "exact":
                    tau = float(variant.split()[1])
                    j = wi[w]
                    if bests[j] >= tau:
                        t = vocab[best[j]]
                        terms[t] = max(terms.get(t, 0), (bests[j] - tau) / (1 - tau))
            lex[qi] = bm25(terms)
        for lam in [0.0, 0.1, 0.2, 0.3, 0.5]:
            f = np.array([z(dense[i]) + lam * z(lex[i]) if lex[i].any() else z(dense[i]) for i in range(len(qs))])
            r1 = float((f.argmax(1) == gold).mean())
            res[f"{variant} λ{lam}"] = r1
    out[lang] = res
    print(lang, len(qs), "dense", f"{res['exact λ0.0']:.3f}", " ".join(f"{k}:{v:.3f}" for k, v in res.items() if not k.endswith("λ0.0")), flush=True)
json.dump(out, open(os.path.join(REPO, 'target', 'crosslingual_use', 'bridge.json'), 'w'), indent=1)
