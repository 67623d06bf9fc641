"""Dictionary query translation for BM25 across scripts (#28, session 18): R@1 of dense alone, dense + BM25 on the
words a question shares with English, and dense + BM25 on the question's words translated by a bilingual dictionary
(all senses, each weighted 1/senses), fused as z(cos) + lambda * z(BM25) with the best lambda; XQuAD-R questions on
the 240 English paragraphs, one e5 vector a paragraph. The dictionaries are those install.sh fetches (FreeDict and
Mueller dictd files, CC-CEDICT), read from $SITEBOT_CACHE_DIR/dictionaries (default ~/.cache/sitebot/dictionaries).
Chinese questions are cut into words by jieba here (sitebot cuts them greedily by the dictionary's own words).

`AR_ARTICLE=1` strips the Arabic article (and the conjunctions and prepositions written onto it) before
stemming, as sitebot does.

Run from the repository root with the venv of README.md here, plus `pip install snowballstemmer jieba`:
    target/crosslingual_use/venv/bin/python benches/crosslingual_use/dictionary.py ar,el,zh,ru,tr,es,de,hi
"""
import os, sys, json, re, math, gzip, collections, unicodedata
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, snowballstemmer, jieba
jieba.setLogLevel(60)
L = sys.argv[1].split(",")
from english import REPO, D, load, contexts, P, EN, STOP, tok, docs, bm25, z, questions, scorers
DICT = os.path.join(os.environ.get("SITEBOT_CACHE_DIR", os.path.expanduser("~/.cache/sitebot")), "dictionaries")
STOP = STOP | {"sth", "sb", "someone", "something"}
B = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
def b64(s):
    n = 0
    for c in s: n = n * 64 + B.index(c)
    return n
def english_words(text):
    text = re.sub(r"<[^>]*>|\[[^\]]*\]|\([^)]*\)|\{[^}]*\}", " ", text)
    return [w for w in tok(text) if w not in STOP and not w.isdigit()]
def dictd(name, invert=False):
    data = gzip.open(f"{DICT}/freedict-{name}.dict.dz").read()
    out = collections.defaultdict(set)
    for line in open(f"{DICT}/freedict-{name}.index", encoding="utf-8"):
        h, o, n = line.rstrip("\n").split("\t")[:3]
        if h.startswith("00database"): continue
        body = data[b64(o):b64(o) + b64(n)].decode("utf-8", "replace").split("\n")[1:]
        trans = []
        for b in body:
            b = b.strip()
            if not b or b.startswith(("Note:", "Synonym", "see:", "\"")): 
                if not b: break
                continue
            trans.append(re.sub(r"^\d+\.\s*", "", b))
        if invert:
            for t in trans:
                for w in re.split(r"[,;]", t):
                    w = w.replace("~", " ").strip()
                    if w: out[w].update(english_words(h))
        else:
            out[h].update(w for t in trans for w in english_words(t))
    return out
def mueller():
    data = gzip.open("" + DICT + "/mueller7.dict.dz").read()
    out = collections.defaultdict(set)
    for line in open("" + DICT + "/mueller7.index", encoding="utf-8", errors="replace"):
        h, o, n = line.rstrip("\n").split("\t")[:3]
        if h.startswith("00") or " " in h.strip(): continue
        body = data[b64(o):b64(o) + b64(n)].decode("utf-8", "replace")
        body = re.sub(r"\([^)]*\)|\[[^\]]*\]|_\S+", " ", body.split("\n", 1)[-1])
        eng = english_words(h)
        for w in re.findall(r"[а-яё]+", body.lower()):
            if len(w) > 2: out[w].update(eng)
    return out
def merged(*parts):
    out = collections.defaultdict(set)
    for p in parts:
        for k, v in p.items(): out[k].update(v)
    return out
def cedict():
    out = collections.defaultdict(set)
    for line in gzip.open(f"{DICT}/cedict_1_0_ts_utf-8_mdbg.txt.gz", "rt", encoding="utf-8"):
        if line.startswith("#"): continue
        m = re.match(r"(\S+) (\S+) \[[^\]]*\] /(.*)/", line)
        if m: out[m.group(2)].update(w for w in english_words(m.group(3).replace("/", " ; ")) if not w.startswith("cl"))
    return out
def strip_accents(s): return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")
AR_NORM = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ة": "ه", "ى": "ي", "ـ": None})
ARTICLE = os.environ.get("AR_ARTICLE") == "1"
def norm(l, w):
    w = w.lower()
    if l == "ar":
        w = strip_accents(w).translate(AR_NORM)
        if ARTICLE:
            for p in ("وال", "فال", "بال", "كال", "لل", "ال"):
                if w.startswith(p) and len(w) - len(p) >= 3:
                    return w[len(p):]
        return w
    if l == "el": return strip_accents(w)
    return w
STEM = {"ar": "arabic", "el": "greek", "hi": "hindi", "de": "german", "ru": "russian", "tr": "turkish", "es": "spanish"}
SRC = {"ar": ("ara-eng", False), "el": ("ell-eng", False), "hi": ("eng-hin", True), "de": ("deu-eng", False), "ru": ("eng-rus", True), "tr": ("tur-eng", False), "es": ("spa-eng", False)}
for l in L:
    if l == "zh":
        raw = cedict(); stem = lambda w: w; words = lambda q: [w for w in jieba.lcut(q) if re.match(r"\w", w)]
    else:
        raw = mueller() if l == "ru" else merged(dictd(*SRC[l]), dictd("eng-" + SRC[l][0][:3], True)) if l in ("es", "tr") else dictd(*SRC[l]); st = snowballstemmer.stemmer(STEM[l]); stem = lambda w, st=st: st.stemWord(norm(l, w)); words = tok
    table = collections.defaultdict(set)
    for h, ws in raw.items():
        hw = h.split()
        if len(hw) == 1: table[stem(hw[0])].update(ws)
    print(l, "dictionary headwords", len(table), flush=True)
    qs, gold, S = questions(l)
    shared, trans, cover = [], [], []
    for q in qs:
        ws = words(q)
        sh = {EN.stemWord(w): 1.0 for w in tok(q)}
        tr = dict(sh); hit = 0
        for w in ws:
            t = table.get(stem(w))
            if t:
                hit += 1
                for e in t: tr[EN.stemWord(e)] = tr.get(EN.stemWord(e), 0) + 1.0 / len(t)
        cover.append(hit / max(1, len(ws)))
        shared.append(bm25(sh)); trans.append(bm25(tr))
    shared = np.array(shared); trans = np.array(trans)
    r, best = scorers(S, gold)
    print(f"{l}: words found in the dictionary {np.mean(cover):.2f}; R@1 dense {r(S):.3f}, +BM25 shared {best(shared)}, +BM25 dictionary {best(trans)}", flush=True)
