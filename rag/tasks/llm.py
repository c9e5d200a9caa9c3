"""The chat-model factory: any OpenAI-compatible endpoint through langchain-openai."""

from __future__ import annotations

from rag.errors import UserError, public_url
from rag.settings import Settings


def make_chat_model(settings: Settings):
    from langchain_openai import ChatOpenAI

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    if not key:
        if not settings.openai_base_url:
            raise UserError("PAPERCHAT_LLM=openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local "
                            "OpenAI-compatible server such as vLLM, Ollama or llama.cpp)")
        key = "not-needed"  # local servers accept any key
    return ChatOpenAI(model=settings.model, api_key=key, base_url=settings.openai_base_url,
                      timeout=settings.request_timeout, max_retries=1, temperature=0, streaming=True)


def describe(settings: Settings) -> str:
    """The status line the UI and CLI show for the active answerer."""
    if settings.llm == "extractive":
        return ("extractive — no language model configured; set PAPERCHAT_LLM=openai and OPENAI_API_KEY "
                "to generate answers")
    return f"{settings.model} via {public_url(settings.openai_base_url) or 'api.openai.com'}"
