"""The methods disclosure (PRISMA-trAIce, RAISE) of a release, drafted from the run records alone (docs/disclosure.md).

`evidence.gather` reads what ran (the run records of `reporter.runs`, the release folder, the screen's state
and raw replies, the certificates, the reader feedback) into one `Evidence`; `items.draft` turns it into the
checklist items (each sentence from a record, with the record's path; an item no record fills is the author's)
and the flow of who decided; `render` writes the Markdown, the HTML and the JSON. It reads the stages' records
and is imported by no stage (tests/import_rules.toml).
"""
