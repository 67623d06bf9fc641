"""Vietnamese questions on English knowledge through software localization (session 28): the Vietnamese
translations of programs' messages pair short English strings ("Change", "Point", "Person") with their
Vietnamese ("Thay đổi", "Điểm", "Người"), so they give some of the native and everyday words that the
Sino-Vietnamese readings of CC-CEDICT (vietnamese.py) cannot key. Sources, read straight from the downloaded files, never
from the questions:

  gnu      gettext catalogs (usr/share/locale/vi/LC_MESSAGES/*.mo) of Debian's GNU and system packages
  desktop  the same from Debian's desktop applications (GNOME, GTK, Xfce, GIMP, Inkscape, Gramps, ...)
  iso      iso-codes' catalogs (ISO 639 languages, ISO 3166 countries, ISO 4217 currencies, ...)
  office   libreoffice-l10n-vi's catalogs (program/resource/vi/LC_MESSAGES/*.mo)
  pypi     .po catalogs in PyPI wheels (Django, Wagtail, Sphinx, Plone, Weblate's language names, ...)
  cldr     Unicode CLDR (Debian's unicode-cldr-core): common/main/vi.xml against en.xml, leaf by leaf
           (territory, language, unit, date-field names), and common/annotations: the emoji names (tts)
           paired one to one, and emoji keywords paired by co-occurrence over the emoji
  openttd  OpenTTD's compiled language files (Debian's openttd-data): vietnamese.lng against english.lng,
           string by string (same ids, same order)
  mozilla  Firefox ESR's Vietnamese langpack (firefox-esr-l10n-vi) against the en-US .ftl/.properties in
           firefox-esr's omni.ja files, message id by message id (one-line values only)

A pair is kept where the English, its accelerators (_ & ~), format specifiers, markup and trailing colons and
ellipses taken off, is 1-3 words and the Vietnamese 1-4 syllables; its key is the Vietnamese syllables as
vietnamese.py keys them. Per key, each English phrase counts once a catalog; a key's entries are its English
phrases by count, the first `L10N_ENTRIES` (2) kept. R@1 as vietnamese.py measures it (z(cos) + lambda
z(BM25 on the question's words and their translations), the best lambda, XQuAD-R's 1,190 Vietnamese
questions on the 240 English paragraphs), for the baseline (m17n's readings of CC-CEDICT, 2-4 syllables) and
the baseline with each source's pairs, phrases (2-4 syllables) alone or with single syllables, added where
CC-CEDICT has no key or put first.

    M17N=~/.cache/sitebot/dictionaries/vi-han.mim MAXR=9 L10N_DIR=target/vi-l10n \\
      nice -n 10 target/crosslingual_use/venv/bin/python benches/crosslingual_use/vietnamese_l10n.py

`L10N_DIR` holds `debs/*.deb` (`apt-get download`) and `pypi/*.whl` (`pip download --no-deps`); it writes
`L10N_DIR/pairs-SOURCE.tsv` (key, Vietnamese, English phrase, count) for review.
"""
import os, sys, re, io, json, gzip, math, struct, tarfile, zipfile, hashlib, random, collections, itertools
import unicodedata
import xml.etree.ElementTree as ET
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from english import REPO, EN, STOP, tok, bm25, questions, scorers
from english import z as zscore

DICT = os.path.join(os.environ.get("SITEBOT_CACHE_DIR", os.path.expanduser("~/.cache/sitebot")), "dictionaries")
L10N = os.path.abspath(os.environ.get("L10N_DIR", os.path.join(REPO, "target", "vi-l10n")))
ENTRIES = int(os.environ.get("L10N_ENTRIES", "2"))

from vietnamese_keys import english_words, syllable, add_m17n_readings, add_cedict_words
def sha(path): return hashlib.sha256(open(path, "rb").read()).hexdigest()
READ = []  # (file, size, sha256) of every file read
def note(path): READ.append((os.path.relpath(path, REPO), os.path.getsize(path), sha(path)))
readings = collections.defaultdict(list)
M17N = os.environ.get("M17N", os.path.join(DICT, "vi-han.mim"))
note(M17N)
add_m17n_readings(M17N, readings)
MAXR = int(os.environ.get("MAXR", "9"))
cedict = collections.defaultdict(list)  # key -> [(english words, is_name, characters, word)]
CEDICT = f"{DICT}/cedict_1_0_ts_utf-8_mdbg.txt.gz"; note(CEDICT)
add_cedict_words(CEDICT, readings, cedict, 2, 4, MAXR)  # the baseline keys 2-4 syllables
print("CC-CEDICT keys (2-4 syllables)", len(cedict), flush=True)

# ---- reading the localization files ----
def deb_members(path):
    """(name, bytes) of a .deb's data.tar members that `want` names."""
    f = open(path, "rb"); assert f.read(8) == b"!<arch>\n"
    while True:
        h = f.read(60)
        if len(h) < 60: raise ValueError(path)
        name = h[:16].decode().strip().rstrip("/"); size = int(h[48:58])
        data = f.read(size); f.read(size % 2)
        if name.startswith("data.tar"): return tarfile.open(fileobj=io.BytesIO(data))
def parse_mo(b):
    """msgid -> msgstr of a .mo catalog (the singular of plural forms, context dropped)."""
    magic = struct.unpack("<I", b[:4])[0]
    e = "<" if magic == 0x950412de else ">"
    _, n, oo, ot = struct.unpack(e + "4I", b[4:20])
    out = []
    for i in range(n):
        ln, off = struct.unpack(e + "2I", b[oo + 8 * i: oo + 8 * i + 8])
        lt, offt = struct.unpack(e + "2I", b[ot + 8 * i: ot + 8 * i + 8])
        mid = b[off:off + ln].decode("utf-8", "replace"); mstr = b[offt:offt + lt].decode("utf-8", "replace")
        if not mid: continue
        mid = mid.split("\x04")[-1].split("\x00")[0]; mstr = mstr.split("\x00")[0]
        out.append((mid, mstr))
    return out
def unquote(s): return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)
def parse_po(text):
    out, cur, key = [], {}, None
    def flush():
        if cur.get("msgid") and cur.get("msgstr") and "fuzzy" not in cur.get("flags", ""):
            out.append((cur["msgid"], cur["msgstr"]))
    for line in text.splitlines() + [""]:
        line = line.strip()
        if not line:
            flush(); cur, key = {}, None; continue
        if line.startswith("#,"): cur["flags"] = line; continue
        if line.startswith("#"): continue
        m = re.match(r'(msgctxt|msgid_plural|msgid|msgstr(?:\[0\])?|msgstr\[\d+\])\s+"(.*)"$', line)
        if m:
            key = m.group(1).replace("[0]", "")
            if key.startswith("msgstr[") or key == "msgid_plural": key = None; continue
            if key == "msgid" and "msgid" in cur: flush(); cur = {}
            cur[key] = unquote(m.group(2)); continue
        m = re.match(r'"(.*)"$', line)
        if m and key: cur[key] += unquote(m.group(1))
    return out
MO = re.compile(r"/vi(_VN)?/LC_MESSAGES/([^/]+)\.mo$")
GNU = set("""coreutils tar bash gettext gettext-base libc-l10n findutils grep sed diffutils gzip cpio wget make
binutils cpp-12 gcc-12 gdb dpkg apt aptitude-common debconf util-linux e2fsprogs gnupg gnupg-l10n gpg gpgconf
xkb-data""".split())
def source_of(pkg):
    if pkg in GNU: return "gnu"
    if pkg == "iso-codes": return "iso"
    if pkg.startswith("libreoffice"): return "office"
    if pkg == "unicode-cldr-core": return "cldr"
    if pkg == "openttd-data": return "openttd"
    if pkg.startswith(("firefox-esr", "thunderbird")): return "mozilla"
    return "desktop"
catalogs = collections.defaultdict(list)  # source -> [(catalog name, [(en, vi)])]
cldr, lng, moz = {}, {}, {}
def moz_strings(blobs):
    """id -> single-line value of Fluent (.ftl, attributes as id.attr) and .properties files in zips (omni.ja,
    a langpack's .xpi), keyed by their path after the locale's code."""
    out = {}
    for b in blobs:
        z = zipfile.ZipFile(io.BytesIO(b))
        for n in z.namelist():
            if not n.endswith((".ftl", ".properties")): continue
            rel = re.sub(r"^.*?(localization|locale)/((en-US|vi)/)?", "", n)
            lines = z.read(n).decode("utf-8", "replace").splitlines(); last = None
            for i, line in enumerate(lines):
                if n.endswith(".properties"):
                    m = re.match(r"([\w.@-]+)\s*=\s*(.+)$", line)
                    if m: out[rel, m.group(1)] = m.group(2)
                    continue
                nxt = lines[i + 1] if i + 1 < len(lines) else ""
                single = not re.match(r"\s+[^.\s]", nxt)  # no continuation line
                m = re.match(r"(-?[\w-]+)\s*=\s*(.*)$", line)
                if m:
                    last = m.group(1)
                    if m.group(2).strip() and single: out[rel, last] = m.group(2)
                    continue
                m = re.match(r"\s+\.([\w-]+)\s*=\s*(.*)$", line)
                if m and last and m.group(2).strip() and single: out[rel, last + "." + m.group(1)] = m.group(2)
    return out
def parse_lng(b):
    """The strings of a compiled OpenTTD language file, in string-id order (untranslated ones are the English)."""
    assert b[:4] == b"LANG"
    counts = struct.unpack("<32H", b[88:152]); p = 546; out = []  # after LanguagePackHeader
    for n in counts:
        for _ in range(n):
            l = b[p]; p += 1
            if l >= 0xC0: l = ((l - 0xC0) << 8) | b[p]; p += 1
            out.append(b[p:p + l].decode("utf-8", "replace")); p += l
    return out
debs = sorted(f for f in os.listdir(os.path.join(L10N, "debs")) if f.endswith(".deb"))
for f in debs:
    path = os.path.join(L10N, "debs", f); pkg = f.split("_")[0]; src = source_of(pkg)
    used = False
    t = deb_members(path)
    for m in t:
        if not m.isfile(): continue
        mo = MO.search(m.name)
        if mo and src != "cldr":
            catalogs[src].append((f"{pkg}:{mo.group(2)}", parse_mo(t.extractfile(m).read()))); used = True
        elif src == "cldr" and re.search(r"common/(main|annotations)/(en|vi)\.xml$", m.name):
            cldr[m.name.split("common/")[1]] = t.extractfile(m).read(); used = True
        elif (pkg == "firefox-esr" and m.name.endswith("/omni.ja")) or (pkg == "firefox-esr-l10n-vi" and m.name.endswith(".xpi")):
            moz[pkg, m.name] = t.extractfile(m).read(); used = True
        elif m.name.endswith(("/lang/english.lng", "/lang/vietnamese.lng")):
            lng[m.name.rsplit("/", 1)[1]] = t.extractfile(m).read(); used = True
        elif m.name.endswith("/localization/locales.zip") and "calibre" in m.name:
            z = zipfile.ZipFile(io.BytesIO(t.extractfile(m).read()))
            for n in z.namelist():
                if re.fullmatch(r"vi/[\w-]+\.mo", n):
                    catalogs[src].append((f"{pkg}:{n}", parse_mo(z.read(n)))); used = True
    if used: note(path)
    if len(lng) == 2:
        e, v = parse_lng(lng["english.lng"]), parse_lng(lng["vietnamese.lng"]); lng.clear()
        catalogs["openttd"].append((f"{pkg}:vietnamese.lng", [(a, b) for a, b in zip(e, v) if a != b]))
if moz:
    en = moz_strings([b for (pkg, n), b in moz.items() if pkg == "firefox-esr"])
    vi = moz_strings([b for (pkg, n), b in moz.items() if pkg == "firefox-esr-l10n-vi"])
    catalogs["mozilla"].append(("firefox-esr:langpack-vi", [(en[k], vi[k]) for k in en if k in vi and en[k] != vi[k]]))
    moz.clear()
for f in sorted(os.listdir(os.path.join(L10N, "pypi"))) if os.path.isdir(os.path.join(L10N, "pypi")) else []:
    if not f.endswith(".whl"): continue
    path = os.path.join(L10N, "pypi", f); z = zipfile.ZipFile(path)
    names = [n for n in z.namelist() if re.search(r"/vi(_VN)?/LC_MESSAGES/[^/]+\.po$", n)]
    for n in names:
        catalogs["pypi"].append((f"{f.split('-')[0]}:{n}", parse_po(z.read(n).decode("utf-8", "replace"))))
    if names: note(path)

# ---- pairs ----
FMT = re.compile(r"%(\([^)]*\))?[-+ #0-9.*]*(hh|h|ll|l|z|j|t|L|I64)?[diouxXeEfFgGcsSpn]|%\d+\$?[sd]?|%[A-Za-z]\b|"
                 r"\$\{[^}]*\}|\$\w+|\{[^}]*\}|<[^>]*>|&\w+;|\\[nt]")
def clean(s):
    s = FMT.sub(" ", s)
    s = re.sub(r"\((?:_|&|~)\w\)", " ", s)  # a Vietnamese accelerator in brackets: "Mở (_O)"
    s = re.sub(r"[_&~](?=\w)", "", s)
    s = re.sub(r"(\.\.\.|…|:|：)+\s*$", "", s.strip()).strip()
    return unicodedata.normalize("NFC", s.lower())
EN_OK = re.compile(r"[a-z]+(?:['-][a-z]+)*(?: [a-z]+(?:['-][a-z]+)*){0,2}")
VI_SYL = re.compile(r"[^\W\d_]+", re.UNICODE)
def pair(en, vi):
    """(key, Vietnamese, English content words) or None."""
    if re.fullmatch(r"[a-z]+(_[a-z0-9]+)+", en.strip()): return None  # a message id ("label_change"), not English
    en, vi = clean(en), clean(vi)
    if not EN_OK.fullmatch(en): return None
    ews = [w for w in re.split(r"[ -]", en) if w not in STOP and len(w) > 1]
    if not ews: return None
    vs = vi.replace("-", " ").split()
    if not 1 <= len(vs) <= 4 or not all(VI_SYL.fullmatch(v) for v in vs): return None
    if set(vs) & set(en.replace("-", " ").split()): return None  # untranslated words
    if not any(unicodedata.normalize("NFD", v) != v or "đ" in v for v in vs) and len(vs) > 1 and vi in en: return None
    return " ".join(syllable(v) for v in vs), vi, tuple(ews)
def cldr_pairs():
    """(name, [(en, vi)]) from CLDR: main/ leaves with the same path and attributes, annotation names."""
    out = []
    def leaves(b):
        d = {}
        def walk(e, path):
            attrs = tuple(sorted((k, v) for k, v in e.attrib.items() if k not in ("draft", "references")))
            p = path + ((e.tag, attrs),)
            if len(e) == 0 and (e.text or "").strip(): d[p] = e.text.strip()
            for c in e: walk(c, p)
        walk(ET.fromstring(b), ())
        return d
    if "main/en.xml" in cldr and "main/vi.xml" in cldr:
        en, vi = leaves(cldr["main/en.xml"]), leaves(cldr["main/vi.xml"])
        out.append(("cldr:main", [(en[k], vi[k]) for k in en if k in vi]))
    if "annotations/en.xml" in cldr and "annotations/vi.xml" in cldr:
        def ann(b):
            tts, kw = {}, {}
            for a in ET.fromstring(b).iter("annotation"):
                if a.get("type") == "tts": tts[a.get("cp")] = a.text.strip()
                else: kw[a.get("cp")] = [x.strip() for x in a.text.split("|")]
            return tts, kw
        (et, ek), (vt, vk) = ann(cldr["annotations/en.xml"]), ann(cldr["annotations/vi.xml"])
        out.append(("cldr:annotation-names", [(et[c], vt[c]) for c in et if c in vt]))
        # keywords: a Vietnamese keyword paired with the English keyword of the same emoji it meets most often,
        # where they share at least 3 emoji and half of the Vietnamese keyword's emoji (Dice >= 0.3)
        co, nv, ne = collections.Counter(), collections.Counter(), collections.Counter()
        for c in ek:
            if c not in vk: continue
            for v in set(vk[c]): nv[v] += 1
            for e in set(ek[c]): ne[e] += 1
            for v in set(vk[c]):
                for e in set(ek[c]): co[v, e] += 1
        best = {}
        for (v, e), n in sorted(co.items()):  # sorted: ties go the same way every run
            if n >= 3 and 2 * n / (nv[v] + ne[e]) >= 0.3 and n >= 0.5 * nv[v] and n > best.get(v, ("", 0))[1]:
                best[v] = (e, n)
        out.append(("cldr:annotation-keywords", [(e, v) for v, (e, n) in best.items()]))
    return out
catalogs["cldr"] = cldr_pairs()
lexes, stats = {}, {}
ALL = ["gnu", "desktop", "iso", "office", "pypi", "cldr", "openttd", "mozilla"]
for src in ALL:
    cnt = collections.defaultdict(collections.Counter); vis = {}; npairs = 0; nstrings = 0
    for name, ps in catalogs[src]:
        seen = set()
        for en, vi in ps:
            nstrings += 1
            p = pair(en, vi)
            if not p: continue
            key, v, ews = p; npairs += 1
            if (key, ews) in seen: continue
            seen.add((key, ews)); cnt[key][ews] += 1; vis[key] = v
    lex = {k: [(list(e), False, len(k.split()), n) for e, n in c.most_common(ENTRIES)] for k, c in cnt.items()}
    lexes[src] = lex
    stats[src] = dict(catalogs=len(catalogs[src]), strings=nstrings, pairs=npairs, keys=len(lex),
                      single=sum(" " not in k for k in lex))
    with open(os.path.join(L10N, f"pairs-{src}.tsv"), "w") as f:
        for k in sorted(lex): f.write(f"{k}\t{vis[k]}\t" + "\t".join(" ".join(e[0]) + f" ({e[3]})" for e in lex[k]) + "\n")
    for k in lex: lex[k] = [(e[0], e[1], e[2], vis[k], e[3]) for e in lex[k]]
    print(f"{src}: {stats[src]}", flush=True)
def merged(srcs):
    """One key's entries over several sources: counts summed."""
    c = collections.defaultdict(collections.Counter); vis = {}
    for s in srcs:
        for name, ps in catalogs[s]:
            seen = set()
            for en, vi in ps:
                p = pair(en, vi)
                if not p or (p[0], p[2]) in seen: continue
                seen.add((p[0], p[2])); c[p[0]][p[2]] += 1; vis[p[0]] = p[1]
    return {k: [(list(e), False, len(k.split()), vis[k], n) for e, n in cc.most_common(ENTRIES)] for k, cc in c.items()}
ALL = ["gnu", "desktop", "iso", "office", "pypi", "cldr", "openttd", "mozilla"]
lexes["all"] = merged(ALL)
lexes["all but cldr"] = merged([s for s in ALL if s != "cldr"])
lexes["gettext (gnu+desktop+office+pypi)"] = merged(["gnu", "desktop", "office", "pypi"])
lexes["desktop+office+cldr+openttd"] = merged(["desktop", "office", "cldr", "openttd"])
lexes["desktop+office+cldr+openttd+mozilla"] = merged(["desktop", "office", "cldr", "openttd", "mozilla"])
lexes["cldr+office+mozilla (Unicode, MPL)"] = merged(["cldr", "office", "mozilla"])
print("all:", len(lexes["all"]), "keys,", sum(" " not in k for k in lexes["all"]), "single syllables", flush=True)

# ---- evaluation ----
qs, gold, S = questions("vi")
r, best = scorers(S, gold)
print(f"R@1 dense {r(S):.4f}, +BM25 shared {best(np.array([bm25({EN.stemWord(w): 1.0 for w in tok(q)}) for q in qs]))}", flush=True)
def qsyl(q):
    for run in re.split(r"[^\w\s]", q):
        yield [syllable(w) for w in run.split() if re.search(r"[^\W\d_]", w)]
def run(lex, entries=1, words=4, min_syl=1, max_syl=4):
    """R@1 (best lambda) with the question's syllables matched longest first against `lex`, and the share of
    syllables found; also which keys were met."""
    M, cover, met = [], [], collections.Counter()
    for q in qs:
        tr = {EN.stemWord(w): 1.0 for w in tok(q)}
        hit = total = 0
        for syl in qsyl(q):
            i = 0; total += len(syl)
            while i < len(syl):
                n = next((n for n in range(min(max_syl, len(syl) - i), min_syl - 1, -1) if " ".join(syl[i:i + n]) in lex), 0)
                if not n: i += 1; continue
                k = " ".join(syl[i:i + n]); i += n; hit += n; met[k] += 1
                eng = []
                for e in lex[k][:entries]:
                    for x in e[0][:words]:
                        if x not in eng: eng.append(x)
                for e in eng[:4]: tr[EN.stemWord(e)] = tr.get(EN.stemWord(e), 0) + 1.0
        cover.append(hit / max(1, total)); M.append(bm25(tr))
    global last_M
    last_M = np.array(M)
    return best(last_M), float(np.mean(cover)), met
def right(M, lam):
    """Which questions' paragraph ranks first, fused at `lam`."""
    zd = np.apply_along_axis(zscore, 1, S)
    return (zd + lam * np.apply_along_axis(zscore, 1, M)).argmax(1) == gold
def combine(base, extra, how, singles):
    """The baseline's keys with `extra`'s: "add" where the baseline has no key, "first" put before its entries;
    `singles` keeps extra's single syllables."""
    out = dict(base)
    for k, es in extra.items():
        if " " not in k and not singles: continue
        if k not in out: out[k] = es
        elif how == "first": out[k] = es + [e for e in out[k]]
    return out
(b, lam), bc, _ = run(cedict, min_syl=2)
base_right = right(last_M, lam)
print(f"\nbaseline (m17n, 2-4 syllables, first entry, 4 words): R@1 {b:.4f} (lambda {lam}), syllables found {bc:.3f}", flush=True)
results = {"baseline": (b, lam, bc)}
rows = []
for src in ALL + ["gettext (gnu+desktop+office+pypi)", "desktop+office+cldr+openttd", "desktop+office+cldr+openttd+mozilla", "cldr+office+mozilla (Unicode, MPL)", "all but cldr", "all"]:
    for how, singles in [("add", False), ("add", True), ("first", False), ("first", True)]:
        lex = combine(cedict, lexes[src], how, singles)
        (rr, lam), cov, met = run(lex)
        l10n_met = sum(n for k, n in met.items() if k in lexes[src] and (k not in cedict or how == "first"))
        rows.append((src, how, singles, rr, lam, cov, l10n_met))
        print(f"  +{src:34s} {how:5s} {'phrases+singles' if singles else 'phrases only':15s} R@1 {rr:.4f} (lambda {lam}) "
              f"syllables found {cov:.3f}, l10n keys met {l10n_met}", flush=True)
# the l10n list alone (no CC-CEDICT) and the best combination's other settings
for src in ["all"]:
    for singles in [False, True]:
        lex = {k: v for k, v in lexes[src].items() if singles or " " in k}
        (rr, lam), cov, _ = run(lex)
        print(f"  {src} alone, {'with' if singles else 'no'} single syllables: R@1 {rr:.4f} (lambda {lam}) syllables found {cov:.3f}", flush=True)
bsrc, bhow, bsing = max(rows, key=lambda x: x[3])[:3]
print(f"\nbest: +{bsrc} {bhow} {'phrases+singles' if bsing else 'phrases only'}", flush=True)
lex = combine(cedict, lexes[bsrc], bhow, bsing)
for entries, words in [(1, 2), (1, 4), (2, 2), (2, 4)]:
    (rr, lam), cov, _ = run(lex, entries=entries, words=words)
    print(f"  {entries} entries, {words} words: R@1 {rr:.4f} (lambda {lam}) syllables found {cov:.3f}", flush=True)
# single syllables that are Vietnamese's function words ("được", passive/can, is "OK" alone; "có", has, "Yes";
# "trong", in, "Inside"): the syllables in most of the l10n catalogs' Vietnamese strings (their document
# frequency over every msgstr, long ones too: counted on the l10n data, not on the questions) kept out as
# single-syllable keys; and single syllables kept only where at least `mincount` catalogs agree
df = collections.Counter()
for src in ALL:
    for name, ps in catalogs[src]:
        for en, vi in ps:
            for w in set(syllable(x) for x in VI_SYL.findall(clean(vi))): df[w] += 1
ranked = [w for w, _ in df.most_common()]
print("most frequent syllables of the l10n Vietnamese:", " ".join(ranked[:60]), flush=True)
def drop_singles(lex, n, mincount):
    stop = set(ranked[:n])
    return {k: v for k, v in lex.items() if " " in k or (k not in stop and v[0][4] >= mincount)}
sweep = []
for n in [0, 25, 50, 100, 200, 400]:
    for mincount in [1, 2, 3]:
        l2 = combine(cedict, drop_singles(lexes[bsrc], n, mincount), bhow, True)
        for entries, words in [(1, 2), (1, 4)]:
            (rr, lam), cov, _ = run(l2, entries=entries, words=words)
            sweep.append((rr, lam, n, mincount, entries, words, cov))
            print(f"  singles not among the {n:3d} most frequent syllables, agreed by >= {mincount} catalogs, {entries} entry, {words} words: "
                  f"R@1 {rr:.4f} (lambda {lam}) syllables found {cov:.3f}", flush=True)
rr, lam, n, mincount, entries, words, cov = max(sweep)
print(f"best of the sweep: R@1 {rr:.4f} (lambda {lam}), {n} most frequent syllables out, >= {mincount} catalogs, {entries} entry, {words} words, syllables found {cov:.3f}")
for src in ALL + ["all"]:
    l2 = combine(cedict, drop_singles(lexes[src], n, mincount), bhow, True)
    (r2, lam2), cov2, _ = run(l2, entries=entries, words=words)
    print(f"  that setting, +{src}: R@1 {r2:.4f} (lambda {lam2}) syllables found {cov2:.3f}", flush=True)
lex = combine(cedict, drop_singles(lexes[bsrc], n, mincount), bhow, True)
(rr, lam), _, _ = run(lex, entries=entries, words=words)
now = right(last_M, lam)
wins, losses = int((now & ~base_right).sum()), int((~now & base_right).sum())
p = sum(math.comb(wins + losses, i) for i in range(min(wins, losses) + 1)) * 2 / 2 ** (wins + losses)
print(f"against the baseline, question by question: {wins} now right, {losses} now wrong (sign test, two-sided p = {min(1, p):.2g})")
_, _, met = run(lex)
src_lex = lexes[bsrc]
print("\nl10n keys met most often in the questions (count, key, Vietnamese, English entries):")
shown = 0
for k, n in met.most_common():
    if k in src_lex and (k not in cedict or bhow == "first"):
        print(f"  {n:4d} {src_lex[k][0][3]!r:16s} {[' '.join(e[0]) for e in src_lex[k]]}")
        shown += 1
        if shown == 60: break
print("\nthe brief's words:")
for w in ["trận đấu", "sông", "người", "xây dựng", "nổi tiếng", "thay đổi", "đội", "điểm", "thành phố", "năm", "đầu tiên", "lớn nhất"]:
    k = " ".join(syllable(x) for x in w.split())
    print(f"  {w!r}: " + "; ".join(f"{s}: {[' '.join(e[0]) for e in lexes[s][k]]}" for s in ALL if k in lexes[s]) or f"  {w!r}: none")
random.seed(28)
print("\n30 random pairs of the combined list:")
for k in random.sample(sorted(lexes["all"]), 30):
    print(f"  {lexes['all'][k][0][3]!r:24s} {[' '.join(e[0]) for e in lexes['all'][k]]}")
print("\nfiles read (path, bytes, sha256):")
for p, s, h in READ: print(f"  {p} {s} {h}")
json.dump({"stats": stats, "baseline": results["baseline"], "rows": rows}, open(os.path.join(L10N, "results.json"), "w"), indent=1)
