"""Names and loanwords matched by their consonants across scripts (#28, session 22): R@1 of dense alone, dense +
BM25 on the words a question shares with English, and dense + BM25 with each question word in Devanagari, Thai
or Arabic script also read as the English words of the knowledge whose consonant skeleton it has ("सैक" and
"แซ็ค" s-k: "sack"; "نورمان" n-r-m-n: "Norman"), fused as z(cos) + lambda * z(BM25) with the best lambda;
XQuAD-R questions on the 240 English paragraphs, one e5 vector a paragraph (as dictionary.py).

A skeleton is the word's consonants in ten classes (p/b, t/d, k/g/q, j/ch, s/z/sh, f/v/w, m, n, l, r), vowels, h
and y dropped, repeats collapsed; an English word has a second skeleton without an r that no vowel follows (Thai
writes "Denver" without it). Thai runs have no spaces: every run of 3 to 8 classes is looked up. A skeleton of
fewer than MIN classes (default 3) is not looked up; `NAMES=1` keeps only English words written capitalized;
`COMMON=F` leaves out question words in more than the share F of the language's questions (its function words);
`STEMS=1` makes the English keys from Snowball stems (as sitebot's BM25 index holds them), a question word's
final s dropped when only that meets one; `DICT=1` reads Arabic words FreeDict's Arabic-English dictionary knows
by their first four translations instead (install.sh's dictionaries directory).

Run from the repository root with the venv of README.md here, plus `pip install snowballstemmer`:
    target/crosslingual_use/venv/bin/python benches/crosslingual_use/translit.py hi,th,ar
"""
import os, sys, json, re, math, collections, unicodedata
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, snowballstemmer

L = sys.argv[1].split(",")
MIN = int(os.environ.get("MIN", "3"))
THAI_MIN = int(os.environ.get("THAI_MIN", "4"))
NAMES = os.environ.get("NAMES") == "1"
from english import REPO, D, load, contexts, P, EN, STOP, tok, docs, bm25, z, questions, scorers

VOWELS = set("aeiouy")
def english_keys(w):
    w = w.lower()
    out, i = [], 0
    while i < len(w):
        c, n2 = w[i], w[i:i + 2]
        nxt = w[i + 1] if i + 1 < len(w) else ""
        if n2 in ("ph",): out.append("F"); i += 2; continue
        if n2 in ("th",): out.append("T"); i += 2; continue
        if n2 in ("sh",): out.append("S"); i += 2; continue
        if n2 in ("ch",): out.append("J"); i += 2; continue
        if n2 in ("ck",): out.append("K"); i += 2; continue
        if n2 in ("gh",): i += 2; continue
        if n2 in ("qu",): out.append("K"); i += 2; continue
        if c == "x": out += ["K", "S"]
        elif c == "c": out.append("S" if nxt in ("e", "i", "y") else "K")
        elif c in "kgq": out.append("K")
        elif c == "j": out.append("J")
        elif c in "sz": out.append("S")
        elif c in "fvw": out.append("F")
        elif c in "pb": out.append("B")
        elif c in "td": out.append("T")
        elif c == "m": out.append("M")
        elif c == "n": out.append("N")
        elif c == "l": out.append("L")
        elif c == "r": out.append("R" if nxt in VOWELS else "r")
        i += 1
    def collapse(xs):
        r = []
        for x in xs:
            if not r or r[-1] != x: r.append(x)
        return "".join(r)
    full = collapse([x.upper() for x in out])
    soft = collapse([x for x in out if x != "r"])
    return {full, soft}

DEVA = {}
for chars, k in (("कखगघक़ख़ग़", "K"), ("चछजझ", "J"), ("टठडढतथदध", "T"), ("ङञणनंँ", "N"), ("पबभ", "B"), ("फव", "F"),
                 ("म", "M"), ("र", "R"), ("ल", "L"), ("शषस", "S"), ("ड़ढ़", "R"), ("फ़", "F"), ("ज़", "S")):
    for ch in chars: DEVA[ch] = k
THAI = {}
for chars, k in (("กขฃคฅฆ", "K"), ("ง", "N"), ("จฉชฌ", "J"), ("ซศษส", "S"), ("ญณน", "N"), ("ฎฏฐฑฒดตถทธ", "T"),
                 ("บปผพภ", "B"), ("ฝฟว", "F"), ("ม", "M"), ("ร", "R"), ("ลฬ", "L")):
    for ch in chars: THAI[ch] = k
ARAB = {}
for chars, k in (("بپ", "B"), ("تدضطظثذ", "T"), ("جچ", "J"), ("خغقكگ", "K"), ("زسشص", "S"), ("فڤ", "F"), ("م", "M"),
                 ("ن", "N"), ("ل", "L"), ("ر", "R")):
    for ch in chars: ARAB[ch] = k

def skeleton(l, w):
    w = unicodedata.normalize("NFC", w)
    out = []
    chars = list(w)
    for i, ch in enumerate(chars):
        if l == "hi":
            if ch == "\u093c" and out:  # nukta on the previous consonant
                prev = chars[i - 1]
                out[-1] = {"ज": "S", "फ": "F", "ड": "R", "ढ": "R"}.get(prev, out[-1])
                continue
            k = DEVA.get(ch)
        elif l == "th":
            if ch == "\u0e4c" and out:  # thanthakhat: the consonant before it is silent
                out.pop(); continue
            k = THAI.get(ch)
        else:
            k = ARAB.get(ch)
        if k: out.append(k)
    r = []
    for x in out:
        if not r or r[-1] != x: r.append(x)
    return "".join(r)

# The knowledge's words by skeleton.
caps = collections.Counter(); allw = collections.Counter()
for c in contexts:
    for w in re.findall(r"[A-Za-z]+", c):
        allw[w.lower()] += 1
        if w[0].isupper(): caps[w.lower()] += 1
KEYS = collections.defaultdict(set)
for w, n in allw.items():
    if len(w) < 3: continue
    if NAMES and caps[w] * 2 < n: continue
    for k in english_keys(EN.stemWord(w) if os.environ.get("STEMS") == "1" else w):
        if len(k) >= MIN: KEYS[k].add(EN.stemWord(w))
print("skeletons", len(KEYS), "words", sum(len(v) for v in KEYS.values()), flush=True)

AR_DICT = None
if os.environ.get("DICT") == "1":
    import gzip
    DICTDIR = os.path.join(os.environ.get("SITEBOT_CACHE_DIR", os.path.expanduser("~/.cache/sitebot")), "dictionaries")
    B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    def b64(s):
        n = 0
        for c in s: n = n * 64 + B64.index(c)
        return n
    EN_STOP = set("the of and in to a is was for on as by with that at from his he it an are were be this which or its their has have had not but also been first after who when can one other more into they than most would there all two new such these some them only during many may time where about up out over three between what how did does do sth sb someone something".split())
    def english_words(text):
        text = re.sub(r"<[^>]*>|\[[^\]]*\]|\([^)]*\)|\{[^}]*\}", " ", text)
        return [w for w in tok(text) if w not in EN_STOP and not w.isdigit()]
    AR_NORM = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ة": "ه", "ى": "ي", "ـ": None})
    def strip_marks(w): return "".join(c for c in unicodedata.normalize("NFD", w) if unicodedata.category(c) != "Mn")
    AR_ST = snowballstemmer.stemmer("arabic")
    def ar_key(w):
        w = strip_marks(w.lower()).translate(AR_NORM)
        for p in ("وال", "فال", "بال", "كال", "لل", "ال"):
            if w.startswith(p) and len(w) - len(p) >= 3:
                w = w[len(p):]; break
        return AR_ST.stemWord(w)
    data = gzip.open(f"{DICTDIR}/freedict-ara-eng.dict.dz").read()
    AR_DICT = collections.defaultdict(list)
    for line in open(f"{DICTDIR}/freedict-ara-eng.index", encoding="utf-8"):
        h, o, n = line.rstrip("\n").split("\t")[:3]
        if h.startswith("00database") or " " in h.strip(): continue
        body = data[b64(o):b64(o) + b64(n)].decode("utf-8", "replace").split("\n")[1:]
        ws = []
        for b in body:
            b = b.strip()
            if not b: break
            if b.startswith(("Note:", "Synonym", "see:", '"')): continue
            ws += english_words(re.sub(r"^\d+\.\s*", "", b))
        k = ar_key(h)
        for w in ws:
            if w not in AR_DICT[k]: AR_DICT[k].append(w)
    print("arabic headwords", len(AR_DICT), flush=True)

ARTICLE = ("وال", "فال", "بال", "كال", "لل", "ال", "و", "ب", "ل", "ف", "ك")
for l in L:
    qs, gold, S = questions(l)
    qf = collections.Counter(w for q in qs for w in set(re.split(r"[^\w\u0900-\u097f\u0e00-\u0e7f\u0600-\u06ff]+", q)))
    common = {w for w, n in qf.items() if n > len(qs) * float(os.environ.get("COMMON", "1"))}
    shared, trans, hits, examples = [], [], 0, []
    for q in qs:
        sh = {EN.stemWord(w): 1.0 for w in tok(q)}
        tr = dict(sh)
        found = []
        for w in re.split(r"[^\w\u0900-\u097f\u0e00-\u0e7f\u0600-\u06ff]+", q):
            if not w or w in common: continue
            if re.match(r"[A-Za-z0-9]", w): continue
            if l == "th":
                sk = skeleton(l, w)
                cands = set()
                for a in range(len(sk)):
                    for b in range(a + THAI_MIN, min(len(sk), a + 8) + 1):
                        if sk[a:b] in KEYS: cands.add(sk[a:b])
                # keep the longest matches only: a run's piece inside a longer match is not read twice
                cands = {c for c in cands if not any(c != d and c in d for d in cands)}
                for c in cands:
                    ws = KEYS[c]
                    for e in ws: tr[e] = tr.get(e, 0) + 1.0 / len(ws)
                    found.append((c, sorted(ws)[:3]))
                continue
            if AR_DICT is not None and l == "ar":
                t = AR_DICT.get(ar_key(w), [])[:4]
                if t:
                    for e in t: tr[EN.stemWord(e)] = tr.get(EN.stemWord(e), 0) + 1.0 / len(t)
                    sh.setdefault("__dict__", 0)
                    continue
            forms = [w]
            if l == "ar":
                forms += [w[len(p):] for p in ARTICLE if w.startswith(p) and len(w) - len(p) >= 3]
            for f in forms:
                sk = skeleton(l, f)
                if os.environ.get("STEMS") == "1" and sk not in KEYS and sk.endswith("S"):
                    sk = sk[:-1]
                if len(sk) >= MIN and sk in KEYS:
                    ws = KEYS[sk]
                    for e in ws: tr[e] = tr.get(e, 0) + 1.0 / len(ws)
                    found.append((w, sorted(ws)[:3]))
                    break
        if found: hits += 1
        if len(examples) < 6 and found: examples.append((q, found))
        shared.append(bm25(sh)); trans.append(bm25(tr))
    shared = np.array(shared); trans = np.array(trans)
    r, best = scorers(S, gold, (0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0), 3)
    for e in examples: print("  ", e)
    print(f"{l}: questions with a skeleton match {hits / len(qs):.2f}; R@1 dense {r(S):.3f}, +BM25 shared {best(shared)}, +BM25 skeletons {best(trans)}", flush=True)
