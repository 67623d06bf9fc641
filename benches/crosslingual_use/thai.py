"""Thai questions on English knowledge with a Thai-English lexicon made of Thai WordNet (NICT; the
`wordnet_th.db` that PyThaiNLP's wheel carries, Thai lemmas by Princeton WordNet 3.0 synset) and Debian's
English WordNet 3.0 (`wordnet-base`, its data.* files): each Thai lemma's English words are its synsets'
lemmas. Thai has no spaces between words, so a question's Thai runs are cut into words first.
R@1 of dense alone, dense + BM25 on shared words, dense + BM25 on the translations, fused as dictionary.py does
(z(cos) + lambda z(BM25), the best lambda), XQuAD-R's Thai questions on the 240 English paragraphs.

    THAI_DB=.../wordnet_th.db WORDNET=.../usr/share/wordnet PYTHAINLP=.../pythainlp/corpus \
      target/crosslingual_use/venv/bin/python benches/crosslingual_use/thai.py
"""
import os, sys, json, re, math, collections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, sqlite3, snowballstemmer
from english import REPO, D, load, contexts, P, EN, STOP, tok, docs, bm25, z, questions, scorers
WN = os.environ["WORDNET"]; CORPUS = os.environ["PYTHAINLP"]
syn = {}
for f, pos in [("noun", "n"), ("verb", "v"), ("adj", "a"), ("adv", "r")]:
    for line in open(f"{WN}/data.{f}", encoding="latin-1"):
        if line.startswith("  "): continue
        p = line.split(" ")
        n = int(p[3], 16)
        syn[f"{p[0]}-{pos}"] = [p[4 + 2 * i].lower() for i in range(n)]
THAI = re.compile("[\u0e00-\u0e7f]+")
lex = collections.defaultdict(list)
for sid, li in sqlite3.connect(os.environ["THAI_DB"]).execute("select synsetid, li from word_synset"):
    li = li.strip()
    ws = syn.get(sid) or syn.get(sid[:-1] + "a")
    if ws and THAI.fullmatch(li): lex[li].append(ws)
STOPTH = set(w.strip() for w in open(f"{CORPUS}/stopwords_th.txt", encoding="utf-8") if w.strip() and not w.startswith("#"))
SEG = set(lex) | set(w.strip() for w in open(f"{CORPUS}/icubrk_th.txt", encoding="utf-8") if w.strip() and not w.startswith("#"))
if os.environ.get("SEGWORDS") == "1": SEG |= set(w.strip() for w in open(f"{CORPUS}/words_th.txt", encoding="utf-8") if w.strip())
MAXL = 20
def greedy(run, words):
    i, out = 0, []
    while i < len(run):
        n = next((n for n in range(min(MAXL, len(run) - i), 1, -1) if run[i:i + n] in words), 0)
        if n: out.append(run[i:i + n]); i += n
        else: i += 1
    return out
def maximal(run, words):
    # fewest unknown characters, then fewest words
    n = len(run); best = [(0, 0, None)] + [(1 << 30, 0, None)] * n
    for i in range(n):
        u, w, _ = best[i]
        if u >= 1 << 30: continue
        if (u + 1, w) < best[i + 1][:2]: best[i + 1] = (u + 1, w, (i, False))
        for k in range(2, min(MAXL, n - i) + 1):
            if run[i:i + k] in words and (u, w + 1) < best[i + k][:2]: best[i + k] = (u, w + 1, (i, True))
    out, j = [], n
    while j > 0:
        i, known = best[j][2]
        if known: out.append(run[i:j])
        j = i
    return out[::-1]
print("thai lemmas", len(lex), "segmentation words", len(SEG), "stopwords", len(STOPTH), flush=True)
qs, gold, S = questions("th")
r, best = scorers(S, gold)
shared = np.array([bm25({EN.stemWord(w): 1.0 for w in tok(q)}) for q in qs])
print(f"R@1 dense {r(S):.3f}, +BM25 shared {best(shared)}", flush=True)
def run_variant(name, seg, stop, senses, firsts, order="synset", equal=False):
    M, cover = [], []
    for qi, q in enumerate(qs):
        tr = {EN.stemWord(w): 1.0 for w in tok(q)}
        ws = [w for run in THAI.findall(q) for w in seg(run, SEG)]
        if stop: ws = [w for w in ws if w not in STOPTH]
        hit = 0
        for w in ws:
            t = lex.get(w)
            if not t: continue
            hit += 1
            eng = []
            pairs = [(i, j, e) for i, s in enumerate(t[:senses]) for j, e in enumerate(s[:firsts])]
            if order == "word": pairs.sort(key=lambda x: (x[1], x[0]))
            for i, j, e in pairs:
                for x in tok(e.replace("_", " ")):
                    if x not in STOP and x not in eng: eng.append(x)
            if equal: eng = eng[:4]
            for e in eng: tr[EN.stemWord(e)] = tr.get(EN.stemWord(e), 0) + (1.0 if equal else 1.0 / len(eng))
        cover.append(hit / max(1, len(ws)))
        if qi < 3 and name.startswith("as built"): print("  ", q, ws, flush=True)
        M.append(bm25(tr))
    print(f"{name}: words found {np.mean(cover):.2f}; +BM25 translated {best(np.array(M))}", flush=True)
for v in [
    ("as built: maximal, stop, 2 synsets x 2, first 4 words, weight 1", maximal, True, 2, 2, "synset", True),
    ("maximal, stop, first words of 4 synsets, weight 1", maximal, True, 4, 2, "word", True),
    ("greedy, no stop, 4 synsets x 2", greedy, False, 4, 2),
    ("maximal, no stop, 4x2", maximal, False, 4, 2),
    ("maximal, stop, 4x2", maximal, True, 4, 2),
    ("maximal, stop, 2x1", maximal, True, 2, 1),
    ("maximal, stop, 8x3", maximal, True, 8, 3),
    ("maximal, stop, all", maximal, True, 99, 99),
]:
    run_variant(*v)
