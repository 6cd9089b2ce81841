"""The panel: ask a panel of models about works and record every answer once (claim, ask, record).

It knows nothing of screening or the digest. A task that asks it describes
itself (`runner.Tasks`): its steps, its voters (`config.VoterSettings`), what a
voter answers and how a reply is read (`votes.AnswerSchema`), its prompt
(`prompt.assemble_prompt`) and generation (`prompt.generation_for`), each step's
scope and texts, and its gate (votes -> a verdict). The screen's tiers
(`reporter.screening.run`) and the digest's criteria judge
(`reporter.digest.judge.run`) are the two tasks today.

- `config.py`: a voter's settings (`[[<table>.voters]]`, the one parser of a voter) and the `database` key;
- `votes.py`: `Vote`, `AnswerSchema`, `FAILED`, `DONE`;
- `prompt.py`: the assembly of a prompt from its fragments, the prompt hash, the generation hash;
- `provider.py`: one voter behind an OpenAI-compatible Chat Completions API, and the reading of its replies;
- `prices.py` (+ `prices.json`), `tokens.py`, `budget.py`: prices, offline token counts, `--max-cost` and the
  workspace's `budget` (its spend read from the store);
- `ratelimit.py`: voters' `requests_per_minute` / `tokens_per_minute`, the run's traffic counters;
- `store.py`, `store_sql.py`, `store_rows.py`, `store_connect.py`: the state database (SQLite or PostgreSQL);
  `readonly.py`: the one read-only opener of it;
- `rawlog.py`: the append-only raw replies, one file per runner, and the recovery of an ended runner's replies;
- `runner.py`, `tier_loop.py`: the run (`run_tasks`) and one step's claim-ask-record loop;
- `run_report.py`: what a run did (`RunReport`, one `TierReport` per step), as text and JSON;
- `plan.py`: what asking would cost before anything is sent (prompt lengths, each voter's cost).
"""
