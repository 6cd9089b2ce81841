"""The weekly digest (docs/digest.md): a week's papers in, KEEP / REVIEW / DROP decisions out, archived per week.

- `config.py`: the [digest] settings; `records.py`: a paper record in, a decision out;
- `read.py` and `sources/`: a papers file, normalized or in a source's own format, as records;
- `listings.py`: one paper, one week: every listing of the papers (any dates), which papers a week decides;
- `merge.py`: one paper listed by several sources becomes one record;
- `watchlist.py`, `criteria.py`: the phrases followed and the relevance criteria;
- `axes.py`, `decide.py`: the three axes (match, criteria, novelty against the prior) and the week's decisions;
- `archive.py`: the archive's reader (the published weeks, typed) and week arithmetic: the site's one door;
- `weeks.py`: deciding and publishing weeks (the patterns), the only writer of the archive;
- `publish.py`: the weeks a build decides in memory (it checks their KEEPs and publishes them through
  `weeks.publish_week`, the one way a week is published); `reporter digest` is reporter/commands/digest.py;
- `judge/`: the criteria judge (Axis 2 read by one or two models, on screening's machinery), `reporter judge`.
"""
