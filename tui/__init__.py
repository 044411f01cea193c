"""The Textual terminal UI (live monitor, run history, model views) lives here.

It is the only part of glasswork that imports Textual, so ``import glasswork`` stays fast.
"""
