"""The sources' own formats into paper records (reporter.pool.record.Record), one module per family.

One reader per format, each `read_<format>(path) -> list[Record]`:

- `openalex.read_openalex`: OpenAlex works JSON (a list, an API page with `results`, one work, or JSONL);
- `pubmed.read_pubmed`: PubMed E-utilities `efetch` XML (PubmedArticleSet);
- `biorxiv.read_biorxiv`: bioRxiv/medRxiv `details` API JSON (`collection`), versions of one DOI folded;
- `arxiv.read_arxiv_atom`: the arXiv API's Atom feed;
- `arxiv.read_arxiv_listing`: the daily arXiv listing JSONL (crawl_date, id, ..., summary).

`kinds` names a file's format and holds the reader of each (SOURCE_READERS);
`fold` folds one paper seen several times into one record; `files` is
everything else about reading a file (gzip, UTF-8, JSON or JSONL, XML),
shared by the readers and by the normalized-record reader
(reporter.digest.read). Fetch builds its records with the same readers.

A record that cannot be read stops the run: InputError naming the file and
the position (`FILE: line N: ...` for line-based input, `FILE: record N (id
X): ...` otherwise). A record without an id or a title is bad input, never
silently dropped. Ids are scheme-prefixed and normalised (reporter.ids):
DOIs lower-cased without a resolver prefix, arXiv ids without their version
suffix (kept as `version`).
"""
