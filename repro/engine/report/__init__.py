"""Reports: REPORT.md, the overview and front page, comparison and causes pages, plots, the
glossary and the plain-language reasons.
"""
