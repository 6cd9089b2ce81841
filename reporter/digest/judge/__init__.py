"""The digest's criteria judge (docs/digest.md, "The criteria judge"): Axis 2 read by one or two models.

A task of the panel (`reporter.panel`), like the screen's tiers and never through
screening: the voters (`ChatVoter`), prompt hashing and generations, the state
authority, the raw-reply log, claims and the claim-ask-record run, the dry
run and the cost are the panel's; the judge describes its task to it.

- `config.py`: `[digest.judge]` (the database, the raw folder, one or two judges);
- `prompt.py`: the judge's prompt (the criteria with line numbers), its answer schema and the validation of an
  answer, and the judge's generation;
- `answers.py`: the recorded answers of a week's papers, read back (the digest never sends);
- `axis.py`: Axis 2 from the judges' answers (the mapping, two judges, failures);
- `run.py`: `reporter judge --run` (claim, ask, record: the panel's run); `plan.py`: its dry run;
- `reporter judge` itself is reporter/commands/judge.py, at the edge.
"""
