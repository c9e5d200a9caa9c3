"""Evaluate `paperchat cite` on SciFact: do the abstracts it cites for a claim include the ones the
annotators cited, is its evidence sentence a labelled rationale sentence, and (LLM mode) is its stance right?

    PAPERCHAT_HOME=/tmp/paperchat-scifact .venv/bin/python bench/scifact_cite.py            # dev figures
    PAPERCHAT_HOME=/tmp/paperchat-scifact .venv/bin/python bench/scifact_cite.py --tune     # choose on train
    ... --tune --limit 100    # the role prior grid alone is printed after the ranking table
    ... --limit 50            # a quick look
    ... --json                # machine-readable

The corpus (5,183 abstracts, BEIR corpus.jsonl through the JSONL loader, paper_id = doc id) is ingested
once into the library `scifact` under PAPERCHAT_HOME (default /tmp/paperchat-scifact; 7-10 min on 2 cores
the first time) and reused afterwards; sentence vectors go to that home's embedding cache, so re-runs
take a few minutes.

Claims: the SciFact claims with SUPPORT/CONTRADICT evidence (train 505 for choosing settings, dev 188
for the figures); gold = the abstracts carrying that evidence, rationale = their labelled sentences.

Measured, side by side in one run:
- recall@3 and nDCG@10 of the cited abstracts — for `cite`'s ranking (retrieval score and best sentence,
  re-ranked) and for plain retrieval order (`paperchat search`);
- rationale hit rate: of the gold abstracts cite returns in its top 10, how often its evidence sentence is
  a labelled rationale sentence — beside the first sentence and the chance rate for the same abstracts;
- the "found" threshold: how often a claim whose gold abstract is in the library finds evidence, and how
  often a claim whose gold abstracts are taken out (simulated by skipping them) wrongly does;
- LLM mode (PAPERCHAT_LLM=openai and a key or base URL): stance accuracy on the gold abstracts returned.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

DATA = ROOT.parent / "shared" / "data" / "scifact"
if not DATA.exists():
    DATA = Path("/work/shared/data/scifact")
T0 = time.time()
LIBRARY = "scifact"  # --library


def log(msg: str) -> None:
    print(f"[{time.time() - T0:6.0f}s] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------ data


def load_claims(split: str) -> list[dict]:
    out = []
    with open(DATA / f"claims_{split}.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ev = d.get("evidence") or {}
            if not ev:
                continue  # "not enough info" claims have no gold evidence to find
            gold = {str(doc): {"label": sets[0]["label"], "sentences": sorted({i for s in sets for i in s["sentences"]})}
                    for doc, sets in ev.items()}
            out.append({"id": d["id"], "claim": d["claim"], "gold": gold})
    return out


def load_sentences() -> dict[str, list[str]]:
    out = {}
    with open(DATA / "corpus_sentences.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out[str(d["doc_id"])] = [s.strip() for s in d["abstract"]]
    return out


def library(home: Path):
    from rag.library.library import Library
    from rag.settings import Settings

    settings = Settings(home=home, library=LIBRARY, embedder="minilm")
    lib = Library(settings)
    n = sum(1 for _ in open(DATA / "corpus.jsonl", encoding="utf-8"))
    if len(lib) < n:
        log(f"ingesting the SciFact corpus ({n} abstracts) into {home} (first run only)")
        report = lib.ingest([DATA / "corpus.jsonl"], progress=True)
        log(report.summary())
    return lib, settings


# ------------------------------------------------------------------------------------------ metrics


def ndcg(ranked: list[str], gold: set[str], k: int = 10) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(gold))))
    return dcg / ideal if ideal else 0.0


def recall(ranked: list[str], gold: set[str], k: int) -> float:
    return len(set(ranked[:k]) & gold) / len(gold)


_W = re.compile(r"[a-z0-9]+")


def sentence_index(sentence: str, sentences: list[str]) -> int:
    """Which labelled sentence ours is (our splitter and SciFact's can differ): the best token overlap."""
    a = set(_W.findall(sentence.lower()))
    best, best_i = -1.0, -1
    for i, s in enumerate(sentences):
        b = set(_W.findall(s.lower()))
        j = len(a & b) / max(1, len(a | b))
        if j > best:
            best, best_i = j, i
    return best_i


# ------------------------------------------------------------------------------------------ features


def features(lib, claims: list[dict], depth: int) -> list[dict]:
    """Per claim, every candidate's retrieval scores and best-sentence cosine (computed once, then
    every setting is scored from these without searching again)."""
    from rag.tasks.extractive import rank_sentences
    from rag.library.retrieval import search
    from rag.tasks.cite import clean_claim

    from rag.reading.sentences import split_sentences

    emb = lib.text_embedder  # the cache-backed embedder tasks use for sentences
    out = []
    for i, c in enumerate(claims):
        text = clean_claim(c["claim"])
        hits = search(lib, text, depth)
        ranked = rank_sentences(text, hits, emb)
        qv = emb.embed_array([text])[0]
        cos = []
        for h in hits:  # plain cosine of the best sentence, for comparison
            ss = split_sentences(h.paper.abstract) or [h.paper.abstract]
            sims = emb.embed_array(ss) @ qv
            cos.append((float(sims.max()), ss[int(sims.argmax())]))
        out.append({"claim": c, "cands": [
            {"id": h.paper.paper_id, "fused": h.score, "dense": h.dense, "cos": cs[0], "cos_sentence": cs[1],
             "sent": r[0][0] if r else 0.0, "sentence": r[0][1] if r else ""} for h, r, cs in zip(hits, ranked, cos)]})
        if (i + 1) % 100 == 0:
            log(f"  features {i + 1}/{len(claims)}")
    return out


def order(cands: list[dict], depth: int, fused: float) -> list[dict]:
    """cite's ranking of the first `depth` candidates: fused * retrieval (min-max over the candidates)
    + (1 - fused) * best sentence."""
    from rag.tasks.cite import minmax

    part = cands[:depth]
    f = minmax([x["fused"] for x in part])
    key = {x["id"]: fused * fi + (1 - fused) * x["sent"] for x, fi in zip(part, f)}
    return sorted(part, key=lambda x: (-key[x["id"]], x["id"]))


def evidence_score(x: dict) -> float:
    from rag.tasks.cite import EVIDENCE_SENTENCE_WEIGHT as w

    return w * x["sent"] + (1 - w) * x["dense"]


def ranking_metrics(feats: list[dict], depth: int, fused: float) -> dict:
    r3, nd = [], []
    for f in feats:
        gold = set(f["claim"]["gold"])
        ids = [x["id"] for x in order(f["cands"], depth, fused)]
        r3.append(recall(ids, gold, 3))
        nd.append(ndcg(ids, gold, 10))
    return {"recall@3": sum(r3) / len(r3), "ndcg@10": sum(nd) / len(nd)}


def threshold_metrics(feats: list[dict], depth: int, t: float) -> dict:
    """found-rate when the gold abstracts are in the library, and when they are not (skipped)."""
    present = absent = 0
    for f in feats:
        gold = set(f["claim"]["gold"])
        cands = f["cands"][:depth]
        if cands and max(evidence_score(x) for x in cands) >= t:
            present += 1
        others = [x for x in cands if x["id"] not in gold]
        if others and max(evidence_score(x) for x in others) >= t:
            absent += 1
    n = len(feats)
    return {"found_when_present": present / n, "found_when_absent": absent / n,
            "balanced_accuracy": (present / n + 1 - absent / n) / 2}


def rationale_metrics(feats: list[dict], depth: int, fused: float, sentences: dict[str, list[str]]) -> dict:
    """For the gold abstracts in the top 10: is the chosen sentence a labelled rationale sentence?"""
    pairs = rs = cs = first = chance = 0
    for f in feats:
        for x in order(f["cands"], depth, fused)[:10]:
            g = f["claim"]["gold"].get(x["id"])
            sents = sentences.get(x["id"], [])
            if not g or not sents or not g["sentences"]:
                continue
            pairs += 1
            rs += sentence_index(x["sentence"], sents) in g["sentences"]
            cs += sentence_index(x["cos_sentence"], sents) in g["sentences"]
            first += 0 in g["sentences"]
            chance += len(g["sentences"]) / len(sents)
    p = max(1, pairs)
    return {"pairs": pairs, "rank_sentences": rs / p, "plain_cosine": cs / p, "first_sentence": first / p,
            "chance": chance / p}


def role_prior_grid(lib, claims: list[dict], sentences: dict[str, list[str]]) -> dict:
    """The quoted sentence's role prior (EVIDENCE_ROLE_PRIOR in rag/tasks/cite.py): for each claim's annotated
    abstracts among its 10 retrieval hits, the share of picks (best by score + prior) that are rationale."""
    from rag.tasks.extractive import rank_sentences, sentences_of
    from rag.library.retrieval import search
    from rag.reading.roles import roles_of
    from rag.tasks.cite import clean_claim

    emb, rows = lib.text_embedder, []
    for c in claims:
        text = clean_claim(c["claim"])
        hits = search(lib, text, 10)
        for h, ranked, roles in zip(hits, rank_sentences(text, hits, emb), roles_of([h.paper for h in hits], emb)):
            g, sents = c["gold"].get(h.paper.paper_id), sentences.get(h.paper.paper_id, [])
            if not g or not sents or not g["sentences"]:
                continue
            role_of = dict(zip(sentences_of(h.paper), roles))
            rows.append([(sim, role_of.get(x, ""), sentence_index(x, sents) in g["sentences"]) for sim, x in ranked])

    def share(prior: dict) -> float:
        return sum(max(r, key=lambda x: x[0] + prior.get(x[1], 0.0))[2] for r in rows if r) / max(1, len(rows))

    steps = (0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15)
    grid = [{"result": a, "method": m, "background": -b} for a in steps for b in steps for m in (0.0, 0.02, 0.05)]
    best = max(grid, key=share)
    return {"pairs": len(rows), "none": share({}), "best": best, "best_share": share(best)}


# ------------------------------------------------------------------------------------------ runs


def tune(lib, split: str, limit: int | None) -> dict:
    claims = load_claims(split)[:limit]
    log(f"tuning on {len(claims)} {split} claims")
    feats = features(lib, claims, 30)
    rows = []
    for depth in (10, 20, 30):
        for fused in (1.0, 0.8, 0.7, 0.6, 0.5, 0.4, 0.0):
            rows.append({"candidates": depth, "rank_fused": fused, **ranking_metrics(feats, depth, fused)})
    print(f"\nranking on {split} ({len(claims)} claims): fused * retrieval + (1 - fused) * best sentence "
          f"(1.0 = retrieval order, 0.0 = sentences alone)")
    print(f"{'cand':>5} {'fused':>6} {'R@3':>7} {'nDCG@10':>8}")
    for r in rows:
        print(f"{r['candidates']:>5} {r['rank_fused']:>6} {r['recall@3']:7.4f} {r['ndcg@10']:8.4f}")
    best = max(rows, key=lambda r: (round(r["ndcg@10"] + r["recall@3"], 4), -r["candidates"]))
    print(f"best: candidates={best['candidates']} rank_fused={best['rank_fused']}")
    ra = rationale_metrics(feats, best["candidates"], best["rank_fused"], load_sentences())
    print(f"\nevidence sentence is a labelled rationale ({ra['pairs']} gold abstracts in the top 10): "
          f"rank_sentences {ra['rank_sentences']:.3f}, plain cosine {ra['plain_cosine']:.3f}, "
          f"first sentence {ra['first_sentence']:.3f}, chance {ra['chance']:.3f}")
    rp = role_prior_grid(lib, claims, load_sentences())
    print(f"\nrole prior on the quoted sentence ({rp['pairs']} pairs): none {rp['none']:.3f}, best {rp['best']} "
          f"{rp['best_share']:.3f}")
    ra["role_prior"] = rp
    ths = [{"threshold": t, **threshold_metrics(feats, best["candidates"], t)} for t in [x / 100 for x in range(40, 81, 2)]]
    print("\nfound threshold (evidence score of the best candidate):")
    print(f"{'t':>5} {'found|present':>14} {'found|absent':>13} {'bal.acc':>8}")
    for r in ths:
        print(f"{r['threshold']:5.2f} {r['found_when_present']:14.3f} {r['found_when_absent']:13.3f} {r['balanced_accuracy']:8.3f}")
    bt = max(ths, key=lambda r: (r["balanced_accuracy"], -r["threshold"]))
    keep = max((r for r in ths if r["found_when_present"] >= 0.98), key=lambda r: r["threshold"], default=None)
    print(f"best balanced accuracy at {bt['threshold']:.2f}; highest threshold still finding 98 % of present "
          f"claims: {keep['threshold'] if keep else None}")
    return {"split": split, "claims": len(claims), "ranking": rows, "best": best, "rationale": ra,
            "thresholds": ths, "best_balanced": bt, "keep_98": keep}


def evaluate(lib, settings, split: str, limit: int | None, k: int = 10) -> dict:
    """The figures: cite's own code path (rank_evidence, cite) with the constants in rag/tasks/cite.py."""
    from rag.tasks import cite as C

    claims = load_claims(split)[:limit]
    sentences = load_sentences()
    log(f"evaluating cite on {len(claims)} {split} claims")
    feats = features(lib, claims, C.CANDIDATES)
    base = ranking_metrics(feats, C.CANDIDATES, 1.0)
    r3, nd, found = [], [], 0
    hit = first = chance = pairs = 0
    stance_ok = stance_n = 0
    use_llm = settings.llm == "openai"
    model = None
    if use_llm:
        from rag.tasks.llm import make_chat_model

        model = make_chat_model(settings)
    for i, c in enumerate(claims):
        gold = set(c["gold"])
        ranked = C.rank_evidence(c["claim"], lib, k)
        ids = [e.paper.paper_id for e in ranked]
        r3.append(recall(ids, gold, 3))
        nd.append(ndcg(ids, gold, 10))
        if any(e.evidence_score >= C.FOUND_THRESHOLD for e in ranked):
            found += 1
        gold_ev = [e for e in ranked if e.paper.paper_id in gold]
        for e in gold_ev:
            g = c["gold"][e.paper.paper_id]
            sents = sentences.get(e.paper.paper_id, [])
            if not sents or not g["sentences"]:
                continue
            pairs += 1
            hit += sentence_index(e.sentence, sents) in g["sentences"]
            first += 0 in g["sentences"]
            chance += len(g["sentences"]) / len(sents)
        if use_llm and gold_ev:
            stances = C.judge_stances(C.clean_claim(c["claim"]), gold_ev, model, settings)
            for e, s in zip(gold_ev, stances):
                want = {"SUPPORT": "supports", "CONTRADICT": "contradicts"}[c["gold"][e.paper.paper_id]["label"]]
                stance_ok += s == want
                stance_n += 1
        if (i + 1) % 50 == 0:
            log(f"  cite {i + 1}/{len(claims)}")
    n = len(claims)
    th = threshold_metrics(feats, C.CANDIDATES, C.FOUND_THRESHOLD)
    return {
        "split": split, "claims": n,
        "settings": {"candidates": C.CANDIDATES, "rank_fused": C.RANK_FUSED, "found_threshold": C.FOUND_THRESHOLD},
        "cite": {"recall@3": sum(r3) / n, "ndcg@10": sum(nd) / n},
        "retrieval_order": base,
        "rationale": {"pairs": pairs, "cite_evidence_sentence": hit / max(1, pairs),
                      "first_sentence": first / max(1, pairs), "chance": chance / max(1, pairs)},
        "found": {"found_when_present": found / n, "found_when_absent": th["found_when_absent"]},
        "stance_accuracy": (stance_ok / stance_n if stance_n else None),
        "stance_pairs": stance_n,
        "mode": "llm" if use_llm else "extractive",
    }


def print_eval(r: dict) -> None:
    s = r["settings"]
    print(f"\nSciFact {r['split']}: {r['claims']} claims with evidence; cite candidates={s['candidates']}, "
          f"rank = {s['rank_fused']} * retrieval + {1 - s['rank_fused']:.1f} * best sentence, "
          f"found threshold={s['found_threshold']}")
    print(f"{'':28} {'recall@3':>9} {'nDCG@10':>8}")
    print(f"{'cite (re-ranked)':28} {r['cite']['recall@3']:9.4f} {r['cite']['ndcg@10']:8.4f}")
    print(f"{'retrieval order (search)':28} {r['retrieval_order']['recall@3']:9.4f} {r['retrieval_order']['ndcg@10']:8.4f}")
    ra = r["rationale"]
    print(f"\nevidence sentence is a labelled rationale ({ra['pairs']} gold abstracts cited in the top 10):")
    print(f"  cite's evidence sentence {ra['cite_evidence_sentence']:.3f}   first sentence {ra['first_sentence']:.3f}   "
          f"chance {ra['chance']:.3f}")
    f = r["found"]
    print(f"\nfound (best score >= threshold): {f['found_when_present']:.3f} of claims with their gold abstracts in "
          f"the library; {f['found_when_absent']:.3f} with the gold abstracts left out")
    if r["stance_accuracy"] is None:
        print("stance accuracy: skipped (no LLM configured: PAPERCHAT_LLM=openai and OPENAI_API_KEY/OPENAI_BASE_URL)")
    else:
        print(f"stance accuracy ({r['mode']}): {r['stance_accuracy']:.3f} on {r['stance_pairs']} gold abstracts")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=Path(os.environ.get("PAPERCHAT_HOME", "/tmp/paperchat-scifact")))
    ap.add_argument("--split", default=None, help="claims split (default: train with --tune, else dev)")
    ap.add_argument("--tune", action="store_true", help="choose candidates, sentence weight and threshold")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--library", default="scifact", help="library name under --home (rebuild under a new name "
                    "after changing chunk settings)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    global LIBRARY
    LIBRARY = args.library
    lib, settings = library(args.home)
    from rag.settings import Settings

    settings = Settings(home=args.home, library=LIBRARY, embedder="minilm")
    if args.tune:
        res = tune(lib, args.split or "train", args.limit)
    else:
        res = evaluate(lib, settings, args.split or "dev", args.limit)
        if not args.json:
            print_eval(res)
    if args.json:
        print(json.dumps(res, indent=2))
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
