"""The main model (`search::Fusion`'s, for questions on knowledge in their own language) refitted with
questions the knowledge cannot answer: measured, not built (docs/performance.md).

The shipped model was fitted on SciFact's train claims alone, every one of which has an answer, from the
cosine and the two rank features; a site's best candidate then scores high whatever the question. This
fits it on SciFact's train claims together with XQuAD-R's questions on knowledge in their own language
(en on en, de on de, es on es; even articles), the same questions with their article's candidates removed
(unanswerable), and off-topic visitors' questions in the site's language (even-numbered), with the
cross-lingual models' relative features (lift and margin) added (`--features`, of cos, lift, b, d, margin
and share, the candidate's BM25 score over the question's best candidate's), and reports, against the shipped model on
the same candidates: SciFact test nDCG@10 (the route's order at `scoreThreshold: 0`), and per language on
the odd articles R@1 and the answered share at the default threshold (0.25), the share of article-removed
questions answered, and the odd-numbered off-topic questions answered.

    cargo run --release --example scifact -- --no-english --dump SF.tsv
    cargo run --release --example xquad -- --fit --dump-same SAME.tsv
    python3 benches/scifact_features/same_language.py SF.tsv SAME.tsv [--w-xquad W] [--w-removed W] [--w-off W]

numpy only.
"""
import argparse, collections, math
import numpy as np

THRESHOLD = 0.25
SHIPPED = dict(w=[6.31, 0.0, 4.55, 4.15, 0.0, 0.0], bias=-11.82)  # in FEATURES' order
FEATURES = ["cos", "lift", "b", "d", "margin", "share"]  # share: BM25 over the question's best candidate's


def load_scifact(path):
    by = collections.defaultdict(list)
    with open(path) as f:
        head = next(f).rstrip("\n").split("\t")
        col = {n: i for i, n in enumerate(head)}
        for line in f:
            v = line.rstrip("\n").split("\t")
            x = [float(v[col["cos"]]), float(v[col["lift"]]), float(v[col["b"]]), float(v[col["d"]]), float(v[col["margin"]]), float(v[col["bm25"]])]
            by[(v[col["split"]], v[col["query"]])].append((x, float(v[col["grade"]]), v[col["doc"]]))
    for cands in by.values():
        best = max((x[5] for x, _, _ in cands), default=0.0) or 1.0
        for x, _, _ in cands:
            x[5] = x[5] / best
    return by


def load_qrels(path):
    rels = collections.defaultdict(dict)
    with open(path) as f:
        next(f)
        for line in f:
            q, d, g = line.rstrip("\n").split("\t")
            rels[q][d] = float(g)
    return rels


def load_same(path):
    """(lang, kind, question) -> [(features, label, article)]"""
    by = collections.defaultdict(list)
    with open(path) as f:
        next(f)
        for line in f:
            lang, kind, n, article, label, *x = line.rstrip("\n").split("\t")
            x = [float(t) for t in x]
            by[(lang, kind, int(n))].append((x + [0.0] * (len(FEATURES) - len(x)), int(label), int(article)))
    return by


def fit(X, y, w, l2=1e-4, iters=50, offset=None):
    X1 = np.hstack([X, np.ones((len(X), 1))])
    beta = np.zeros(X1.shape[1])
    offset = np.zeros(len(X)) if offset is None else offset
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(X1 @ beta + offset)))
        g = X1.T @ (w * (p - y)) + l2 * beta
        H = (X1 * (w * p * (1 - p))[:, None]).T @ X1 + l2 * np.eye(len(beta))
        step = np.linalg.solve(H, g)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return dict(w=list(beta[:-1]), bias=beta[-1])


def score(model, x):
    z = sum(a * b for a, b in zip(model["w"], x)) + model["bias"]
    return 1 / (1 + math.exp(-z))


def ndcg10(model, sf, rels):
    total, n = 0.0, 0
    for (split, q), cands in sf.items():
        if split != "test":
            continue
        best = {}
        for x, _, doc in cands:
            s = score(model, x)
            best[doc] = max(best.get(doc, 0.0), s)
        ranked = sorted(best, key=lambda d: -best[d])[:10]
        dcg = sum(rels[q].get(d, 0.0) / math.log2(i + 2) for i, d in enumerate(ranked))
        ideal = sorted(rels[q].values(), reverse=True)[:10]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        total += dcg / idcg if idcg else 0.0
        n += 1
    return total / n


def report(model, same):
    """Per language: R@1, answered, article-removed answered, off-topic answered and asked. `model` is a
    model's weights, or a function from a question's candidates to their scores."""
    out = {}
    for lang in ("en", "de", "es"):
        right = answered = asked = removed = removed_answered = off = off_answered = 0
        for (l, kind, n), cands in same.items():
            if l != lang or not cands:
                continue
            article = cands[0][2]
            if callable(model):
                scores = model(cands)
                i = max(range(len(cands)), key=lambda j: scores[j])
                s, top = scores[i], cands[i]
            else:
                top = max(cands, key=lambda c: score(model, c[0]))
                s = score(model, top[0])
            if kind == "o":
                if n % 2 == 1:
                    off += 1
                    off_answered += s >= THRESHOLD
                continue
            if article % 2 == 0:
                continue
            if kind == "q":
                asked += 1
                answered += s >= THRESHOLD
                right += s >= THRESHOLD and top[1] == 1
            else:
                removed += 1
                removed_answered += s >= THRESHOLD
        out[lang] = (right / asked, answered / asked, removed_answered / removed, off_answered, off)
    return out


def samples(sf, same, a, rows):
    """The fit's samples: SciFact's train candidates, XQuAD-R's same-language candidates of even articles (their
    article-removed copies as negatives) and the even-numbered off-topic questions' candidates. `rows` gives a
    question's candidates' feature rows. Returns the rows, labels, weights and how many came from SciFact."""
    X, y, w = [], [], []
    for (split, q), cands in sf.items():
        if split == "train" and a.w_scifact > 0:
            for row, (_, g, _) in zip(rows(cands), cands):
                X.append(row), y.append(1.0 if g > 0 else 0.0), w.append(a.w_scifact)
    n_sf = len(X)
    for (lang, kind, n), cands in same.items():
        if not cands:
            continue
        for row, (_, label, article) in zip(rows(cands), cands):
            if kind == "o":
                if n % 2 == 0:
                    X.append(row), y.append(0.0), w.append(a.w_off)
            elif article % 2 == 0:
                X.append(row), y.append(float(label) if kind == "q" else 0.0), w.append(a.w_xquad if kind == "q" else a.w_removed)
    return X, y, w, n_sf


def show(name, ndcg, r):
    cells = "  ".join(f"{r[l][0]:.3f} ({r[l][1]:.3f}) {r[l][2]:.3f} {r[l][3]}/{r[l][4]}" for l in ("en", "de", "es"))
    print(f"{name:<12} {ndcg:>8}  {cells}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scifact")
    ap.add_argument("same")
    ap.add_argument("--qrels", default="../shared/eval/scifact/qrels/test.tsv")
    ap.add_argument("--w-xquad", type=float, default=1.0)
    ap.add_argument("--w-scifact", type=float, default=1.0, help="SciFact's weight (0: left out)")
    ap.add_argument("--w-removed", type=float, default=1.0 / 3)
    ap.add_argument("--w-off", type=float, default=1.0)
    ap.add_argument("--features", default="cos,lift,b,d,margin")
    ap.add_argument("--shifts", type=lambda t: [float(x) for x in t.split(",")], default=[], help="the fitted bias moved by each")
    ap.add_argument("--hold", default="", help="f=W,...: those weights held (b=4.55,d=4.15: the shipped rank weights)")
    ap.add_argument("--calibrate", action="store_true", help="the shipped ranking kept, calibrated per question")
    a = ap.parse_args()
    if a.calibrate:
        return calibrated(a)
    keep = [FEATURES.index(f) for f in a.features.split(",")]
    sf, same, rels = load_scifact(a.scifact), load_same(a.same), load_qrels(a.qrels)
    X, y, w, n_sf = samples(sf, same, a, lambda cands: [x for x, _, _ in cands])
    # `--hold f=W,...`: those features' weights held, the others fitted around them.
    held = {FEATURES.index(k): float(v) for k, v in (t.split("=") for t in a.hold.split(",") if t)}
    keep = [k for k in keep if k not in held]
    X = np.array(X)
    offset = sum(X[:, k] * v for k, v in held.items()) if held else None
    fitted = fit(X[:, keep], np.array(y), np.array(w), offset=offset)
    full = dict(w=[0.0] * len(FEATURES), bias=fitted["bias"])
    for k, v in held.items():
        full["w"][k] = v
    for i, k in enumerate(keep):
        full["w"][k] = fitted["w"][i]
    print(f"samples: SciFact train {n_sf}, XQuAD-R and off-topic {len(X) - n_sf}")
    print("fitted: " + ", ".join(f"{f} {v:.2f}" for f, v in zip(FEATURES, full["w"])) + f", bias {full['bias']:.2f}")
    print(f"{'model':<12} {'SciFact':>8}  " + "  ".join(f"{l}: R@1 (answered) removed off" for l in ("en", "de", "es")))
    shifted = [(f"fitted {d:+.1f}", dict(w=full["w"], bias=full["bias"] + d)) for d in a.shifts]
    for name, model in [("shipped", SHIPPED), ("fitted", full)] + shifted:
        show(name, f"{ndcg10(model, sf, rels):.4f}", report(model, same))


def calibrated(a):
    """`--calibrate`: the shipped model's ranking kept, its scores moved per question. A candidate's logit is
    the shipped one times a scale, plus weights on two features of the question (the same for each of its
    candidates): how far its best cosine stands above the reference (the best lift) and above the second best
    (the best margin). The order of a question's candidates cannot change; only how confident the best is."""
    sf, same, rels = load_scifact(a.scifact), load_same(a.same), load_qrels(a.qrels)

    def logit(x):
        return sum(w * v for w, v in zip(SHIPPED["w"], x)) + SHIPPED["bias"]

    def question_rows(cands):
        top_lift = max(x[1] for x, _, _ in cands)
        top_margin = max(x[4] for x, _, _ in cands)
        return [[logit(x), top_lift, top_margin] for x, _, _ in cands]

    X, y, w, _ = samples(sf, same, a, question_rows)
    m = fit(np.array(X), np.array(y), np.array(w))
    (scale, w_lift, w_margin), bias = m["w"], m["bias"]
    print(f"calibrated: shipped logit x {scale:.3f}, best lift {w_lift:.2f}, best margin {w_margin:.2f}, bias {bias:.2f}")

    def q_score(cands, shift):
        rows = question_rows(cands)
        return [1 / (1 + math.exp(-(scale * r[0] + w_lift * r[1] + w_margin * r[2] + bias + shift))) for r in rows]

    for shift in [0.0] + a.shifts:
        show(f"calib {shift:+.1f}", "(same)", report(lambda cands, shift=shift: q_score(cands, shift), same))


if __name__ == "__main__":
    main()
