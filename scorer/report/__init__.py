"""Renderers of scorer results: terminal (rich), markdown, csv, json, latex, figures."""
