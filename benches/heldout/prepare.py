#!/usr/bin/env python3
"""Held-out retrieval sets for `benches/quality.rs`, cut from public question-answering data sets.

Reads each source file from a git mirror of its repository (`git show COMMIT:PATH`, under `--mirrors`,
default /work/.mirror, one `OWNER+NAME/repo` directory each), checks its SHA-256, and writes, per set and
language, under `--out` (default /work/heldout):

    <set>/<lang>/passages.jsonl   {"_id", "title", "text", "url"}: what `sitebot knowledge import` reads
    <set>/<lang>/questions.jsonl  {"id", "question", "passage"}: the question and the `_id` that answers it
    manifest.json                 every set: source, commit, file, sha256, licence, role, counts, seed

Sampling is deterministic (Python's `random.Random` seeded with a string, stable across versions):
whole articles in a shuffled order until `PASSAGES` paragraphs are taken (so a passage's neighbours from
the same article are among the distractors, as on a website), then `QUESTIONS` questions drawn from those
whose paragraph was taken. A question is eligible when it has an answer, is at least three characters
long, and its text is not asked of two different paragraphs of the file (such a question has no one right
passage). Paragraphs with the same text count once.

The data itself is never committed; only this script and its README.
"""

import argparse
import hashlib
import io
import json
import random
import subprocess
import sys
import zipfile
from pathlib import Path

SEED = "sitebot-heldout-1"
PASSAGES = 500
QUESTIONS = 200
# Questions of each language of the cross-lingual set (the English passages are shared).
CROSS_QUESTIONS = 100

MLQA_COMMIT = "354d67d1cd066854cdfbf5ad0e6105528976141d"
MLQA_LICENCE = "CC BY-NC 4.0 (mlqa-r/LICENSE beside the files; MLQA itself is CC BY-SA 3.0)"

# role: "fit" sets may be used to choose and fit the pipeline; "check" sets only to check a decision.
SOURCES = [
    {
        "set": "korquad", "lang": "ko", "role": "fit", "reader": "squad",
        "repo": "korquad/korquad.github.io", "commit": "61d7d6682948375dd8f06ef27e788fd19982af38",
        "path": "dataset/KorQuAD_v1.0_dev.json",
        "sha256": "25ffeb51e6c51ec02c071b60a10188e10005c144110f0d876b26079d80a35bdf",
        "licence": "CC BY-ND 2.0 KR", "native": "questions written in Korean by crowdworkers on Korean Wikipedia",
    },
    {
        "set": "cmrc2018", "lang": "zh", "role": "fit", "reader": "squad",
        "repo": "ymcui/cmrc2018", "commit": "c0eb1b6ba219847457e6af3180da722bbeb656af",
        "path": "squad-style-data/cmrc2018_dev.json",
        "sha256": "e9ff74231f05c230c6fa88b84441ee334d97234cbb610991cd94b82db00c7f1f",
        "licence": "CC BY-SA 4.0", "native": "Simplified Chinese questions written by annotators on Chinese Wikipedia",
    },
    {
        "set": "arcd", "lang": "ar", "role": "fit", "reader": "squad",
        "repo": "husseinmozannar/SOQAL", "commit": "1229d34aa2b7a0b9a2e4858c9268e68f45d7e3c4",
        "path": "data/arcd.json",
        "sha256": "9d17bd7a4830dbcc12d4b042974138650cc69ee576c6e991050120448cd07633",
        "licence": "MIT (repository); paragraphs from Arabic Wikipedia (CC BY-SA)",
        "native": "Arabic questions written by crowdworkers on Arabic Wikipedia",
    },
    {
        "set": "jsquad", "lang": "ja", "role": "fit", "reader": "squad",
        "repo": "yahoojapan/JGLUE", "commit": "6f071c09316baae89c3d083a90985b4b1cb9968c",
        "path": "datasets/jsquad-v1.3/valid-v1.3.json",
        "sha256": "fb0a57a35281ff03bbe7f0e878cff5b577985fbe6fcb242e7e8ddb63d1c0ab11",
        "licence": "CC BY-SA 4.0", "native": "Japanese questions written by crowdworkers on Japanese Wikipedia",
    },
    {
        "set": "drcd", "lang": "zh", "role": "check", "reader": "squad",
        "repo": "DRCKnowledgeTeam/DRCD", "commit": "b944790de5af02c5fbb7cd9cb1473d27d169eebf",
        "path": "DRCD_dev.json",
        "sha256": "e236df03861ba241bd7b29628cd48b3b8e339c60137e041a4358b5320ed61928",
        "licence": "CC BY-SA 3.0", "native": "Traditional Chinese questions written by annotators on Chinese Wikipedia",
    },
    {
        "set": "persianqa", "lang": "fa", "role": "check", "reader": "squad",
        "repo": "sajjjadayobi/PersianQA", "commit": "ba4806eb7894b1e78e214e16e7e717840c129450",
        "path": "dataset/pqa_test.json",
        "sha256": "99f5cd13d25bf0696d3a841bd3e764841fcf0684b5919f81cd875db9d74b14a2",
        "licence": "GPL-3.0 (repository LICENSE; no separate licence for the data)",
        "native": "Persian questions written by native speakers on Persian Wikipedia",
    },
    {
        "set": "iapp", "lang": "th", "role": "check", "reader": "iapp",
        "repo": "iapp-technology/iapp-wiki-qa-dataset", "commit": "644a29c59bac62d5b15b9e9b06c55bba00708eca",
        "path": "squad_format/data.zip",
        "sha256": "a3530ceafd3b39757fc9720ee0e04f1454e6775bec0c8641964427567fafb214",
        "licence": "MIT", "native": "Thai questions written by annotators on Thai Wikipedia",
    },
    {
        "set": "mlqa", "lang": "en", "role": "check", "reader": "squad",
        "repo": "google-research-datasets/lareqa", "commit": MLQA_COMMIT,
        "path": "mlqa-r/en.json",
        "sha256": "fedd9a5cc0848dda80caf84aa36f482adaae230526a3f6e9e86926a93ef3b1e4",
        "licence": MLQA_LICENCE, "native": "English questions written by crowdworkers on English Wikipedia (MLQA dev)",
    },
]

# MLQA's questions in other languages (professional translations of the English ones, same ids), asked of
# the English passages of the `mlqa` set: questions in one language, knowledge in another.
CROSS = {
    "de": "ce9454dc5aa6f2d85c23cd6e49cb367fbb7c4c6e62d7f71e355c6b5dae4d0886",
    "es": "70ecba276b8c96a692b120693a595d076ce94ad21d4b28311538a9fcbfe0f9d7",
    "ar": "2132fbc03208535c0fe01f2e2c5121d06f9c2aa799af93b0a719dbc105bdf137",
    "zh": "57f01d2fff50cf3392805635b01445339f225ad5bf28ba8443b12f8dbd1e69dc",
    "vi": "9d3baff6ba03e6793b25594217265ea59a136b9733833dca8a9582a84a78ff85",
    "hi": "4dd0fb3c06f737a5481d705bc1dcac7876712a5815c9265908fbb3a0696cb654",
}


def read(mirrors: Path, repo: str, commit: str, path: str, sha256: str) -> bytes:
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    data = subprocess.run(["git", "-C", str(git_dir), "show", f"{commit}:{path}"], check=True, capture_output=True).stdout
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        sys.exit(f"{repo}@{commit}:{path}: sha256 {got}, expected {sha256}")
    return data


def articles_squad(data: bytes):
    """[(title, [(context, [(qid, question)])])] from SQuAD layout; unanswerable questions left out."""
    out = []
    for article in json.loads(data)["data"]:
        title = (article.get("title") or "").strip()
        paragraphs = []
        for p in article["paragraphs"]:
            context = p["context"]
            ptitle = title
            # JSQuAD writes the article title before the text: "梅雨 [SEP] 梅雨（つゆ…".
            if " [SEP] " in context:
                ptitle, context = context.split(" [SEP] ", 1)
            qas = [(q["id"], q["question"]) for q in p["qas"] if not q.get("is_impossible") and q.get("answers")]
            paragraphs.append((ptitle, context, qas))
        out.append(paragraphs)
    return out


def articles_iapp(data: bytes):
    """The same shape from iApp's zipped JSONL splits (one record a question), every split."""
    by_article: dict[str, dict[str, tuple[str, list]]] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for name in sorted(n for n in z.namelist() if n.endswith(".jsonl")):
            for line in z.read(name).decode("utf-8").splitlines():
                if not line.strip():
                    continue
                r = json.loads(line)
                paragraphs = by_article.setdefault(r["article_id"], {})
                title, qas = paragraphs.setdefault(r["context"], (r.get("title") or "", []))
                if any(t.strip() for t in r["answers"]["text"]):
                    qas.append((r["question_id"], r["question"]))
    return [[(title, context, qas) for context, (title, qas) in paragraphs.items()] for _, paragraphs in sorted(by_article.items())]


def clean(question: str) -> str:
    # ARCD writes some questions as " - من هو ...؟ ".
    return question.strip().lstrip("-").strip()


def sample(name: str, articles, passages_cap: int, questions_cap: int, extra_questions=None):
    """Samples whole articles, then questions; returns passages, questions and the paragraph id of
    every source question id (for the cross-lingual questions)."""
    rng = random.Random(f"{SEED}:{name}")
    # A question text asked of two different paragraphs has no single right one.
    where: dict[str, set[str]] = {}
    for paragraphs in articles:
        for _, context, qas in paragraphs:
            for _, q in qas:
                where.setdefault(clean(q), set()).add(context)
    order = list(range(len(articles)))
    rng.shuffle(order)
    passages, pid_of_context, pid_of_qid, candidates = [], {}, {}, []
    for i in order:
        if len(passages) >= passages_cap:
            break
        for title, context, qas in articles[i]:
            if not context.strip():
                continue
            if context not in pid_of_context:
                pid = f"p{len(passages):04d}"
                pid_of_context[context] = pid
                passages.append({"_id": pid, "title": title.strip() or None, "text": context})
            pid = pid_of_context[context]
            for qid, q in qas:
                pid_of_qid[qid] = pid
                text = clean(q)
                if len(text) >= 3 and len(where[text]) == 1:
                    candidates.append({"id": str(qid), "question": text, "passage": pid})
    rng.shuffle(candidates)
    return passages, candidates[:questions_cap], pid_of_qid


def write(out: Path, name: str, lang: str, passages, questions, home: str):
    """`home` names the passages in their URLs (`set/lang` of the set they were sampled for), so the
    cross-lingual set's copies are byte for byte those of the set they come from."""
    d = out / name / lang
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "passages.jsonl", "w", encoding="utf-8") as f:
        for p in passages:
            record = {"_id": p["_id"], "title": p["title"], "text": p["text"], "url": f"https://heldout.example/{home}/{p['_id']}"}
            f.write(json.dumps({k: v for k, v in record.items() if v is not None}, ensure_ascii=False) + "\n")
    with open(d / "questions.jsonl", "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--out", type=Path, default=Path("/work/heldout"))
    args = ap.parse_args()
    manifest = {"seed": SEED, "sets": []}
    for src in SOURCES:
        data = read(args.mirrors, src["repo"], src["commit"], src["path"], src["sha256"])
        articles = articles_iapp(data) if src["reader"] == "iapp" else articles_squad(data)
        passages, questions, pid_of_qid = sample(f"{src['set']}/{src['lang']}", articles, PASSAGES, QUESTIONS)
        write(args.out, src["set"], src["lang"], passages, questions, f"{src['set']}/{src['lang']}")
        entry = {k: src[k] for k in ("set", "lang", "role", "repo", "commit", "path", "sha256", "licence", "native")}
        entry.update(passages_lang=src["lang"], passages=len(passages), questions=len(questions),
                     source_paragraphs=sum(len(a) for a in articles), source_questions=sum(len(qs) for a in articles for _, _, qs in a))
        manifest["sets"].append(entry)
        print(f"{src['set']}/{src['lang']}: {len(passages)} passages, {len(questions)} questions")
        if src["set"] != "mlqa":
            continue
        # The cross-lingual set: each language's questions whose English paragraph was taken.
        for lang, sha in CROSS.items():
            path = f"mlqa-r/{lang}.json"
            other = read(args.mirrors, src["repo"], MLQA_COMMIT, path, sha)
            rng = random.Random(f"{SEED}:mlqa-xl/{lang}")
            pool = [{"id": str(qid), "question": clean(q), "passage": pid_of_qid[qid]}
                    for paragraphs in articles_squad(other) for _, _, qas in paragraphs for qid, q in qas if qid in pid_of_qid]
            rng.shuffle(pool)
            picked = pool[:CROSS_QUESTIONS]
            write(args.out, "mlqa-xl", lang, passages, picked, f"{src['set']}/{src['lang']}")
            manifest["sets"].append({
                "set": "mlqa-xl", "lang": lang, "role": "check", "repo": src["repo"], "commit": MLQA_COMMIT, "path": path,
                "sha256": sha, "licence": MLQA_LICENCE,
                "native": f"MLQA's {lang} questions (professional translations of the English ones) on the English passages of mlqa/en",
                "passages_lang": "en", "passages": len(passages), "questions": len(picked),
            })
            print(f"mlqa-xl/{lang}: {len(passages)} English passages, {len(picked)} questions")
    (args.out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
