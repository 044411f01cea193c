"""The CORELS search: the bridge to the compiled branch-and-bound, and what a search will face before it runs."""
