"""The search path as a LangChain retriever (kept apart so plain searches never import LangChain)."""

from __future__ import annotations

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from rag.library.library import Library
from rag.library.retrieval import Filters, search


class PaperRetriever(BaseRetriever):
    """The same search as a LangChain retriever: one Document per paper, metadata as in --json hits."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    library: Library
    k: int = 10
    filters: Filters = Filters()

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [Document(page_content=h.paper.abstract, metadata={**h.as_json(), "hit": h})
                for h in search(self.library, query, self.k, self.filters)]
