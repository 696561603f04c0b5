"""Sentence embeddings for retrieval replay and semantic search: the offline model and a disk cache."""
