"""What a map is: every paper's position and region, the regions' names, and how the layout was made."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field


class Topic(BaseModel):
    """A labelled region of the map."""

    id: int
    name: str
    terms: list[str] = Field(default_factory=list)  # the distinctive terms the name came from
    x: float = 0.0  # where the label goes (the region's mean position)
    y: float = 0.0
    size: int = 0

    def as_json(self) -> dict:
        return {"id": self.id, "name": self.name, "terms": self.terms, "x": round(self.x, 4), "y": round(self.y, 4),
                "papers": self.size}


class LibraryMap(BaseModel):
    """The layout of one library generation. Arrays run in parallel over `ids`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    library: str
    generation: str
    method: str  # tsne | pca | single | none (umap: a map fitted before t-SNE)
    ids: list[str]
    xy: np.ndarray  # (n, 2) float32
    region: np.ndarray  # (n,) int32, index into topics
    placed: np.ndarray  # (n,) bool: placed by neighbours after the fit, not by the fit itself
    topics: list[Topic]
    fitted_papers: int  # how many papers the layout was fitted on
    removed_since_fit: int = 0
    seconds: float = 0.0  # what computing it (or bringing it up to date) took

    @property
    def drift(self) -> float:
        """Papers placed or removed since the fit, as a share of the papers it was fitted on."""
        return (int(self.placed.sum()) + self.removed_since_fit) / max(1, self.fitted_papers)

    def as_json(self, papers: dict[str, dict] | None = None, message: str = "") -> dict:
        """`paperchat map --json`: every paper's coordinates and topic (plus title, venue and year when
        the catalogue is given)."""
        points = []
        for i, pid in enumerate(self.ids):
            r = int(self.region[i])
            pt = {"paper_id": pid, "x": round(float(self.xy[i, 0]), 4), "y": round(float(self.xy[i, 1]), 4),
                  "topic": r, "topic_name": self.topics[r].name if 0 <= r < len(self.topics) else "",
                  "placed_later": bool(self.placed[i])}
            if papers is not None:
                m = papers.get(pid, {})
                pt.update(title=m.get("title", ""), venue=m.get("venue", ""), year=m.get("year") or None)
            points.append(pt)
        out = {"library": self.library, "generation": self.generation, "method": self.method, "papers": len(self.ids),
               "fitted_papers": self.fitted_papers, "drift": round(self.drift, 4),
               "topics": [t.as_json() for t in self.topics], "points": points}
        if message:
            out["message"] = message
        return out
