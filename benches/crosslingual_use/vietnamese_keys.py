"""How vietnamese.py and vietnamese_l10n.py key Vietnamese syllables, and the CC-CEDICT words keyed by their
characters' Sino-Vietnamese readings (m17n's `vi-han.mim`, spelled in Telex), shared by both scripts."""
import os, re, gzip, itertools, unicodedata
from english import STOP, tok
def english_words(text):
    text = re.sub(r"<[^>]*>|\[[^\]]*\]|\([^)]*\)|\{[^}]*\}", " ", text)
    return [w for w in tok(text) if w not in STOP and not w.isdigit()]
TONES = {"\u0300": "2", "\u0301": "1", "\u0303": "4", "\u0309": "3", "\u0323": "5"}
def syllable(s):
    """A syllable with its tone mark taken off and written after it: "hoà" and "hòa" (old and new
    placement) are one key."""
    d = unicodedata.normalize("NFD", s.lower()); tone = ""
    for c in d:
        if c in TONES: tone = TONES[c]
    return i_for_y(unicodedata.normalize("NFC", "".join(c for c in d if c not in TONES))) + tone
ONSET = re.compile(r"(ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdđghklmnpqrstvx])?(.*)")
def i_for_y(letters):
    """A syllable whose vowel is y alone spelled with i ("ty", "lý", "quy" as "ti", "lí", "qui"): Vietnamese
    writes them either way (`IY=0` turns this off)."""
    if os.environ.get("IY") == "0": return letters
    onset, vowel = ONSET.fullmatch(letters).groups()
    return (onset or "") + "i" if vowel == "y" else letters
TELEX = [("dd", "đ"), ("aa", "â"), ("aw", "ă"), ("ee", "ê"), ("oo", "ô"), ("ow", "ơ"), ("uw", "ư"), ("w", "ư")]
def telex(t):
    """m17n's telex spelling of a syllable ("lwowngj", lượng) as `syllable` keys it."""
    tone = ""
    if len(t) > 1 and t[-1] in "sfrxj": tone = {"s": "1", "f": "2", "r": "3", "x": "4", "j": "5"}[t[-1]]; t = t[:-1]
    out, i = "", 0
    while i < len(t):
        for a, b in TELEX:
            if t.startswith(a, i): out += b; i += len(a); break
        else: out += t[i]; i += 1
    return i_for_y(out) + tone
def add_m17n_readings(path, readings):
    """Each character's readings in m17n's Hán Việt input method, appended to `readings` (char -> keys)."""
    for m in re.finditer(r'\("([a-z]+)"\s+\("([^"]*)"\)\)', open(path, encoding="utf-8").read()):
        k = telex(m.group(1))
        for c in m.group(2):
            if k not in readings[c]: readings[c].append(k)
def add_cedict_words(path, readings, lex, min_chars, max_chars, maxr):
    """CC-CEDICT's words of `min_chars`-`max_chars` characters, each keyed by every combination of its
    characters' first `maxr` readings: lex[key] gets (english words, is a name, characters, simplified)."""
    for line in gzip.open(path, "rt", encoding="utf-8"):
        if line.startswith("#"): continue
        m = re.match(r"(\S+) (\S+) \[([^\]]*)\] /(.*)/", line)
        if not m: continue
        trad, simp, pinyin, senses = m.groups()
        if not min_chars <= len(trad) <= max_chars: continue
        rs = [readings.get(t) or readings.get(s) for t, s in zip(trad, simp)]
        if not all(rs): continue
        kept = [s for s in senses.split("/") if s and not s.startswith(("CL:", "see ", "surname ", "used in")) and "variant of" not in s]
        eng = [w for s in kept for w in english_words(s)]
        if not eng: continue
        for combo in itertools.product(*[r[:maxr] for r in rs]):
            lex[" ".join(combo)].append((eng, pinyin[:1].isupper(), len(trad), simp))
