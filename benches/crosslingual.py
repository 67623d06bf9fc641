"""Fits and checks the cross-lingual branch of the fusion (`retrieve::CrossLingual`) on XQuAD-R.

For German questions on English paragraphs (and English on German, Spanish on English) it embeds every
paragraph ("passage: TITLE. TEXT") and question ("query: ...") with sitebot's multilingual-e5-small
(the model and tokenizer install.sh derives into the cache), and fits
sigmoid(w_cos * cos + w_lift * (cos - reference) + bias), reference = the mean cosine of ranks 2-11
(at least 0.76, what unrelated text scores),
on the 80 best candidates of each de->en and en->de question (the right paragraph positive), with two
kinds of negatives: the same question where its article was removed from the knowledge (its two best
candidates) and the question on 400 SciFact abstracts (its two best). It prints the coefficients and,
at the default threshold 0.25, R@1, the share answered, and the share answered of the two kinds of
questions the knowledge cannot answer. One paragraph is one embedding here; the route chunks, so its
figures (examples/xquad.rs) differ a little.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install onnxruntime tokenizers numpy
    /tmp/v/bin/python benches/crosslingual.py [--eval ../shared/eval] [--cache ~/.cache/sitebot]
"""

import argparse
import json
import os

import numpy as np
import onnxruntime as ort
import tokenizers

ap = argparse.ArgumentParser()
ap.add_argument("--eval", default="../shared/eval")
ap.add_argument("--cache", default=os.environ.get("SITEBOT_CACHE_DIR", os.path.expanduser("~/.cache/sitebot")))
args = ap.parse_args()
model_dir = os.path.join(args.cache, "models", "multilingual-e5-small-int8")
tok = tokenizers.Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
so = ort.SessionOptions()
so.intra_op_num_threads = 1
session = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), so, providers=["CPUExecutionProvider"])


def embed(text):
    ids = np.array([tok.encode(text).ids[:512]], dtype=np.int64)
    h = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})[0][0]
    v = h.mean(0)
    return v / np.linalg.norm(v)


data = {}
for lang in ["en", "de", "es"]:
    v = json.load(open(os.path.join(args.eval, "xquad-r", f"{lang}.json")))
    paragraphs, questions, articles = [], [], []
    for ai, a in enumerate(v["data"]):
        for p in a["paragraphs"]:
            pid = len(paragraphs)
            paragraphs.append(embed("passage: " + a["title"] + ". " + p["context"]))
            articles.append(ai)
            questions += [(pid, embed("query: " + qa["question"])) for qa in p["qas"]]
    data[lang] = (np.array(paragraphs), questions, np.array(articles))
scifact = np.array([embed("passage: " + d["title"] + ". " + d["text"][:1500])
                    for d in (json.loads(l) for l in open(os.path.join(args.eval, "scifact", "corpus.jsonl")).readlines()[:400])])


def candidates(s, depth=80):
    order = np.argsort(-s)[:depth]
    cos = s[order]
    reference = max(cos[1:11].mean(), 0.76) if len(cos) > 1 else 0.76
    return order, cos, reference


def training(pairs):
    x, y = [], []
    for ql, kl in pairs:
        paragraphs, _, articles = data[kl]
        for pid, q in data[ql][1]:
            s = paragraphs @ q
            order, cos, ref = candidates(s)
            x += [[c, c - ref] for c in cos]
            y += [float(j == pid) for j in order]
            for other in (s[articles != articles[pid]], scifact @ q):
                _, cos, ref = candidates(other)
                x += [[c, c - ref] for c in cos[:2]]
                y += [0.0, 0.0]
    return np.array(x), np.array(y)


def fit(x, y, iters=4000, lr=1.0):
    mu, sd = x.mean(0), x.std(0)
    z = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-z @ w))
        w -= lr * z.T @ (p - y) / len(y)
    return w[:-1] / sd, w[-1] - (w[:-1] * mu / sd).sum()


refit = fit(*training([("de", "en"), ("en", "de")]))
# What sitebot ships (retrieve::Fusion::default().cross), fitted before the reference had its floor.
shipped = (np.array([1.37, 115.0]), -6.14)


def score(s, model):
    (weights, bias) = model
    order, cos, ref = candidates(s)
    return order[0], 1 / (1 + np.exp(-(weights[0] * cos[0] + weights[1] * (cos[0] - ref) + bias)))


for name, model in [("shipped", shipped), ("refitted", refit)]:
    print(f"{name}: w_cos {model[0][0]:.2f}  w_lift {model[0][1]:.1f}  bias {model[1]:.2f}")
    print("questions   R@1  answered  article removed: answered  on SciFact: answered")
    for ql, kl in [("de", "en"), ("es", "en"), ("en", "de"), ("en", "en")]:
        paragraphs, _, articles = data[kl]
        questions = data[ql][1]
        r1 = answered = removed = off = 0
        for pid, q in questions:
            s = paragraphs @ q
            best, p = score(s, model)
            answered += p >= 0.25
            r1 += p >= 0.25 and best == pid
            removed += score(s[articles != articles[pid]], model)[1] >= 0.25
            off += score(scifact @ q, model)[1] >= 0.25
        n = len(questions)
        print(f"{ql} on {kl}    {r1 / n:.3f}  {answered / n:.3f}     {removed / n:.3f}                     {off / n:.3f}")
