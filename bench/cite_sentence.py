"""Which sentence `paperchat cite` quotes for a claim, on SciFact: the share of quoted sentences that are a labelled
rationale sentence, for the former rule (claim relevance plus the role prior), the answer scorer alone (the claim
as it stands, or asked as a question), their blend, and the blend with the claim's rare words and numbers
(rag/tasks/cite.py, rare_terms) -- each setting chosen on train, every option shown on dev, in one run.

Every pair of a claim and its annotated abstract counts (train 564, dev 209): which sentence of ONE abstract is
quoted depends on the claim and that abstract only, so no library is needed (bench/scifact_cite.py measures the
same choice end to end, on the gold abstracts cite returns in its top 10, over the ingested SciFact corpus).

    .venv/bin/python bench/cite_sentence.py [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys

from scifact_cite import DATA, load_claims, load_sentences, log, sentence_index


def pick_rows(split: str, limit: int | None) -> list[dict]:
    """Per claim and annotated abstract (the whole split, no library needed: which sentence of ONE abstract is
    quoted depends on the claim and that abstract only), each of the abstract's sentences as cite reads them
    (paperchat's splitter): its claim relevance (rank_sentences' score), role, the answer scorer's probability
    with the claim as the question, and whether it is a labelled rationale sentence."""
    from rag.embedders import MiniLMEmbeddings
    from rag.reading.answer_scorer import probabilities
    from rag.reading.grades import relevance
    from rag.reading.roles import classify_many
    from rag.reading.sentences import split_sentences
    from rag.tasks.cite import clean_claim

    claims = load_claims(split)[:limit]
    labelled = load_sentences()
    texts = {}
    with open(DATA / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            texts[str(d["_id"])] = d["text"]
    pairs = [(c, doc, g) for c in claims for doc, g in c["gold"].items()
             if g["sentences"] and doc in texts and labelled.get(doc)]
    from _common import Memo

    emb = Memo(MiniLMEmbeddings())
    abstracts = [split_sentences(texts[doc]) or [texts[doc]] for _, doc, _ in pairs]
    log(f"{len(pairs)} pairs of a {split} claim and its annotated abstract; embedding their sentences")
    emb.embed_array([s for ss in abstracts for s in ss] + [clean_claim(c["claim"]) for c, _, _ in pairs]
                    + [claim_question(clean_claim(c["claim"])) for c, _, _ in pairs])
    roles = classify_many(abstracts, emb)
    rows = []
    for (c, doc, g), ss, rs in zip(pairs, abstracts, roles):
        q = clean_claim(c["claim"])
        rows.append({"claim": q, "sentences": ss, "sim": [float(x) for x in relevance(q, ss, emb)], "roles": list(rs),
                     "prob": [float(x) for x in probabilities(q, [ss], emb, [list(rs)])[0]],
                     "prob_asked": [float(x) for x in probabilities(claim_question(q), [ss], emb, [list(rs)])[0]],
                     "rationale": [sentence_index(s, labelled[doc]) in g["sentences"] for s in ss]})
    return rows


def claim_question(claim: str) -> str:
    """The claim asked as a question ("Is it true that ...?", a finding question to the scorer), tried against
    the claim as it stands: a claim read as a bare topic phrase may draw the scorer to an ML abstract's
    contribution ("we propose ...") rather than the sentence stating what the claim states."""
    body = claim.strip().rstrip(".!? ")
    if body[:1].isupper() and not body[1:2].isupper():
        body = body[:1].lower() + body[1:]
    return f"Is it true that {body}?"


def pick_share(rows: list[dict], weight: float, prior: dict, rare: float = 0.0, number: float = 0.0,
               asked: bool = False) -> float:
    """Share of pairs whose quoted sentence is a rationale sentence: the argmax of (1 - weight) * (relevance +
    role prior) + weight * the scorer's probability + rare * the claim's rare-word share + number * a repeated
    number (rag.tasks.cite.rare_terms), the first on ties as cite sorts. `asked`: the scorer was given the
    claim as a question (rag.tasks.cite.claim_question), else the claim as it stands."""
    from rag.tasks.cite import rare_terms

    hit = 0
    for r in rows:
        terms = r.get("_terms") or r.setdefault("_terms", rare_terms(r["claim"], r["sentences"]))
        key = [(1 - weight) * (s + prior.get(role, 0.0)) + weight * p + rare * t[0] + number * t[1]
               for s, role, p, t in zip(r["sim"], r["roles"], r["prob_asked" if asked else "prob"], terms)]
        hit += r["rationale"][max(range(len(key)), key=lambda i: (key[i], -i))]
    return hit / max(1, len(rows))


def pick_study(limit: int | None) -> dict:
    """Which rule quotes cite's sentence: relevance plus the role prior (before), the answer scorer alone, their
    blend, and the blend with the claim's rare words and numbers (rag.tasks.cite), each setting chosen on train
    and every option shown on dev beside it, in one run."""
    from rag.tasks import cite as C

    rows = {s: pick_rows(s, limit) for s in ("train", "dev")}
    prior = C.EVIDENCE_ROLE_PRIOR

    def both(*a) -> dict:
        return {s: round(pick_share(rows[s], *a), 4) for s in rows}

    weights = [round(x / 20, 2) for x in range(21)]
    blend = {(w, a): both(w, prior, 0.0, 0.0, a) for w in weights for a in (False, True)}
    best_w = {a: max(weights, key=lambda w: (blend[w, a]["train"], -w)) for a in (False, True)}
    full = {(w, r, n, a): both(w, prior, r, n, a) for w in (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
            for r in (0.0, 0.05, 0.1, 0.15, 0.2) for n in (0.0, 0.05, 0.1) for a in (False, True)}
    best = {a: max((k for k in full if k[3] == a), key=lambda k: (full[k]["train"], -k[1], -k[2], -k[0]))
            for a in (False, True)}
    shipped = (C.EVIDENCE_SCORER_WEIGHT, C.RARE_TERM_WEIGHT, C.NUMBER_WEIGHT, False)
    options = {"relevance + role prior (before)": both(0.0, prior), "answer scorer alone (the claim)": both(1.0, {}),
               "answer scorer alone (the claim asked)": both(1.0, {}, 0.0, 0.0, True)}
    for a, how in ((False, "the claim"), (True, "asked")):
        options[f"blend ({how}), weight {best_w[a]}"] = blend[best_w[a], a]
        options[f"blend ({how}) + rare words + numbers {best[a][:3]}"] = full[best[a]]
    options[f"shipped {shipped}"] = both(*shipped[:1], prior, *shipped[1:])
    print(f"\nquoted sentence is a labelled rationale, every annotated abstract (train {len(rows['train'])} pairs, "
          f"dev {len(rows['dev'])}; each setting chosen on train)")
    print(f"{'':62} {'train':>7} {'dev':>7}")
    for name, v in options.items():
        print(f"{name:62} {v['train']:7.3f} {v['dev']:7.3f}")
    for a in (False, True):
        print(f"\nblend weight ({'asked' if a else 'the claim'}), train / dev: "
              + ", ".join(f"{w}: {blend[w, a]['train']:.3f}/{blend[w, a]['dev']:.3f}" for w in weights))
    return {"pairs": {s: len(r) for s, r in rows.items()}, "options": options,
            "blend": {f"{w} {'asked' if a else 'claim'}": v for (w, a), v in blend.items()},
            "best_full": {("asked" if a else "claim"): list(best[a]) for a in best}, "shipped": list(shipped)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="claims per split (a quick look)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not (DATA / "claims_train.jsonl").exists():
        print(f"skipped: {DATA} is absent (see ../shared/data/README.md)")
        return 0
    res = pick_study(args.limit)
    if args.json:
        print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
