"""Prompt text files; loaded by rag.prompts."""
