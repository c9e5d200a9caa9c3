"""Which answerer a chat session uses, among those the server is configured with: the extractive answerer
always, the configured language model when there is one. Nothing here takes an endpoint or a key: those
come from the server's settings (PAPERCHAT_LLM, OPENAI_BASE_URL, OPENAI_API_KEY) only."""

from __future__ import annotations

from rag.errors import public_url
from rag.settings import Settings

EXTRACTIVE = "extractive"
MODEL = "model"


def label(settings: Settings, choice: str) -> str:
    if choice == MODEL and settings.llm != "extractive":
        return f"{settings.model} via {public_url(settings.openai_base_url) or 'api.openai.com'}"
    return "extractive (quotes the abstracts)"


def choices(settings: Settings) -> list[tuple[str, str]]:
    """(label, value) pairs for the chooser, short enough for its box (the model's name; where it runs is in the
    status line and under each answer); the configured model first (it is the server's default)."""
    out = [(settings.model, MODEL)] if settings.llm != "extractive" else []
    return out + [("extractive (quotes)", EXTRACTIVE)]


def default(settings: Settings) -> str:
    return MODEL if settings.llm != "extractive" else EXTRACTIVE


def why_fixed(settings: Settings) -> str | None:
    """Said beside the chooser when it cannot be changed (a greyed field alone does not say why); None otherwise."""
    if len(choices(settings)) == 1:
        return "no language model configured"
    return None


def settings_for(settings: Settings, choice: str | None) -> Settings:
    """The settings a task runs with for this session's choice (extractive: the model is not called)."""
    if choice == EXTRACTIVE and settings.llm != "extractive":
        return settings.model_copy(update={"llm": "extractive"})
    return settings


def status(settings: Settings) -> str:
    """What the status line says of the answerers (no advice about environment variables: the chooser
    shows what there is)."""
    if settings.llm == "extractive":
        return "extractive (no language model configured on this server)"
    return f"{label(settings, MODEL)}, or extractive"
