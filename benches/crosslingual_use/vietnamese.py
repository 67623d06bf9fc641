"""Vietnamese questions on English knowledge through Sino-Vietnamese readings (session 27): most of
Vietnamese's learned vocabulary is Chinese words read in Vietnamese ("kinh tế" is 經濟, economy; "Tây Ban
Nha" 西班牙, Spain), so CC-CEDICT's words, each character read by its Sino-Vietnamese readings, key their
English senses by their Vietnamese syllables. A question's syllables are matched against those keys,
longest first, left to right. The readings come from Unihan's `kVietnamese` (`UNIHAN`: Debian's
`unicode-data`, usr/share/unicode/Unihan_Readings.txt.bz2) or m17n's Hán Việt input method (`M17N`: Debian's
`m17n-db`, usr/share/m17n/vi-han.mim, readings spelled in Telex), or both; `MAXR` readings a character at
most. `FREQ=1` orders a key's words by jieba's word frequencies, `SINGLE=0.9` keys single syllables too where
one character has that share of the syllable's characters' jieba frequency, `TOP=1` prints the keys met most often.
R@1 of dense alone, dense + BM25 on shared words, dense + BM25 on the translations, fused as dictionary.py does
(z(cos) + lambda z(BM25), the best lambda), XQuAD-R's Vietnamese questions on the 240 English paragraphs.

    M17N=.../usr/share/m17n/vi-han.mim MAXR=9 \
      target/crosslingual_use/venv/bin/python benches/crosslingual_use/vietnamese.py
"""
import os, sys, json, re, math, gzip, bz2, collections, itertools, unicodedata
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, snowballstemmer
from english import REPO, D, load, contexts, P, EN, STOP, tok, docs, bm25, z, questions, scorers
DICT = os.path.join(os.environ.get("SITEBOT_CACHE_DIR", os.path.expanduser("~/.cache/sitebot")), "dictionaries")
LANG = os.environ.get("LANG_Q", "vi")
from vietnamese_keys import english_words, syllable, add_m17n_readings, add_cedict_words
readings = collections.defaultdict(list)
if os.environ.get("UNIHAN"):
    for line in bz2.open(os.environ["UNIHAN"], "rt", encoding="utf-8"):
        if "\tkVietnamese\t" not in line: continue
        cp, _, r = line.rstrip("\n").split("\t")
        readings[chr(int(cp[2:], 16))] += [syllable(x) for x in r.split()]
if os.environ.get("M17N"):
    add_m17n_readings(os.environ["M17N"], readings)
print("characters with a Vietnamese reading", len(readings), flush=True)
MAXR = int(os.environ.get("MAXR", "1"))  # readings per character used
lex = collections.defaultdict(list)  # key -> [(english words, is_name)]
add_cedict_words(f"{DICT}/cedict_1_0_ts_utf-8_mdbg.txt.gz", readings, lex, 1, 4, MAXR)
if os.environ.get("FREQ"):
    import jieba
    fq = {}
    for line in open(os.path.join(os.path.dirname(jieba.__file__), "dict.txt"), encoding="utf-8"):
        w, f = line.split()[:2]; fq[w] = int(f)
    for k in lex: lex[k].sort(key=lambda e: -fq.get(e[3], 0))
if os.environ.get("SINGLE"):
    # single characters: a syllable's characters' CC-CEDICT entries, kept only when one character carries at
    # least SINGLE of the syllable's jieba frequency
    import jieba
    share = float(os.environ["SINGLE"])
    fq = {}
    for line in open(os.path.join(os.path.dirname(jieba.__file__), "dict.txt"), encoding="utf-8"):
        w, f = line.split()[:2]; fq[w] = int(f)
    ones = collections.defaultdict(dict)
    for k, es in list(lex.items()):
        if " " in k: continue
        for e in es:
            ones[k][e[3]] = e
        del lex[k]
    kept = 0
    for k, cs in ones.items():
        tot = sum(fq.get(c, 0) for c in cs)
        c, e = max(cs.items(), key=lambda x: fq.get(x[0], 0))
        if tot and fq.get(c, 0) >= share * tot and fq.get(c, 0) >= 1000:
            lex[k] = [e]; kept += 1
    print("single syllables kept", kept, "of", len(ones), flush=True)
sizes = collections.Counter(len(k.split()) for k in lex)
print("keys", len(lex), "by syllables", sorted(sizes.items()), "keys with more than one word",
      sum(len(v) > 1 for v in lex.values()), flush=True)
qs, gold, S = questions(LANG)
r, best = scorers(S, gold)
shared = np.array([bm25({EN.stemWord(w): 1.0 for w in tok(q)}) for q in qs])
print(f"R@1 dense {r(S):.3f}, +BM25 shared {best(shared)}", flush=True)
QSTOP = set(os.environ.get("QSTOP", "").split(","))
def run_variant(name, min_syl, max_syl, entries, words, names=True, show=False):
    M, cover = [], []
    for qi, q in enumerate(qs):
        tr = {EN.stemWord(w): 1.0 for w in tok(q)}
        hit, total, found = 0, 0, []
        for run in re.split(r"[^\w\s]", q):
            syl = [syllable(w) for w in run.split() if re.search(r"[^\W\d_]", w)]
            i = 0; total += len(syl)
            while i < len(syl):
                n = next((n for n in range(min(max_syl, len(syl) - i), min_syl - 1, -1)
                          if " ".join(syl[i:i + n]) in lex and " ".join(syl[i:i + n]) not in QSTOP), 0)
                if not n: i += 1; continue
                k = " ".join(syl[i:i + n]); i += n; hit += n
                es = [e for e in lex[k] if names or not e[1]][:entries] or lex[k][:1]
                eng = []
                for e in es:
                    for x in e[0][:words]:
                        if x not in eng: eng.append(x)
                eng = eng[:4]
                found.append((k, eng))
                for e in eng: tr[EN.stemWord(e)] = tr.get(EN.stemWord(e), 0) + 1.0
        cover.append(hit / max(1, total))
        if show and qi % 100 == 0: print("  ", q, found, flush=True)
        M.append(bm25(tr))
    print(f"{name}: syllables found {np.mean(cover):.2f}; +BM25 translated {best(np.array(M))}", flush=True)
for v in [
    ("2-4 syllables, first entry, 4 words", 2, 4, 1, 4, True, True),
    ("2-4 syllables, 2 entries, 2 words", 2, 4, 2, 2),
    ("2-4 syllables, first entry not a name, 4 words", 2, 4, 1, 4, False),
    ("2-3 syllables, first entry, 4 words", 2, 3, 1, 4),
    ("1-4 syllables, first entry, 4 words", 1, 4, 1, 4),
    ("1-4 syllables, first entry, 2 words", 1, 4, 1, 2),
]:
    run_variant(*v)
if os.environ.get("TOP"):
    c = collections.Counter()
    for q in qs:
        for run in re.split(r"[^\w\s]", q):
            syl = [syllable(w) for w in run.split() if re.search(r"[^\W\d_]", w)]
            i = 0
            while i < len(syl):
                n = next((n for n in range(min(3, len(syl) - i), 1, -1) if " ".join(syl[i:i + n]) in lex), 0)
                if not n: i += 1; continue
                c[" ".join(syl[i:i + n])] += 1; i += n
    for k, n in c.most_common(60): print(n, k, lex[k][0][0][:4], lex[k][0][3])
